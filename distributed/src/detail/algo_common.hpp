// Internal helpers shared by the algorithms (linalg.cpp, sort.cpp, scan.cpp); streams order
// themselves with Stream::wait_for.
#pragma once
#include "tessera/distributed/grid.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed::detail {

/// A grid of `ndims` axes over g's group: g itself if it has that many axes, else a balanced one
/// made once per (group, ndims) and kept in the current Context (grids own communicators: not one
/// per call). Collective on first use.
ProcessGrid grid_for(const ProcessGrid& g, int ndims);

}  // namespace tessera::distributed::detail
