// The stages of a distributed FFT, worked out from shapes and counts alone (no communicator, no
// layout: testable without MPI, as heFFTe's plan logic is): which axes each stage transforms and
// how the ranks split the array while it does. The engine (fft.cpp) makes the layouts from them
// and joins the stages by exchanges.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "tessera/fft/fft.hpp"
#include "tessera/local/array.hpp"

namespace tessera::fft::detail {

/// One stage: local FFTs along axes [first_axis, last_axis], which every rank holds whole; the
/// other axes split over the ranks.
struct StageShape {
  int first_axis = 0;
  int last_axis = 0;
  /// Per array axis, the grid axis that splits it (-1: held whole).
  std::vector<int> split;
  /// Axes of the process grid the stage's layout uses: 0 (one rank: nothing split), 1 (the ranks
  /// in a line) or 2 (a balanced 2-D grid).
  int grid_axes = 0;
  bool operator==(const StageShape&) const = default;
};

/// The decomposition chosen and its stages.
struct StagePlan {
  Decomposition decomposition = Decomposition::slab;
  std::vector<StageShape> stages;
};

/// The stages of an FFT of global shape `shape` over `ranks` ranks, as `want` asks (automatic: a
/// pencil for a 3-D array with more ranks than planes along axis 0, else a slab). 1-D arrays over
/// several ranks are not planned here (the four-step / Bluestein transform of fft1d.hpp): the
/// result then has no stages and says which of the two `want` may name. Throws InvalidArgument
/// for a decomposition the rank cannot have or an empty axis (naming `device`, the plan's).
StagePlan make_stages(const std::vector<local::index_t>& shape, int ranks, Decomposition want, const Device& device);

/// "slab: axes 1..2 on [0 -1 -1] of 1 grid axes; axes 0..0 on [-1 0 -1] of 1 grid axes".
std::string str(const StagePlan& p);

/// The factor numpy's norm= puts on a transform of `points` points in direction `forward`
/// (backward: 1/N on the inverse; ortho: 1/sqrt(N) both ways; forward: 1/N forward; none: 1).
double norm_factor(Norm norm, bool forward, double points);

/// m[from..to) multiplied, the range clipped to the array (1 when empty).
template <int R>
local::index_t prod(const distributed::Index<R>& m, int from, int to) {
  local::index_t p = 1;
  for (int a = std::max(from, 0); a < std::min(to, R); ++a) p *= m[a];
  return p;
}

}  // namespace tessera::fft::detail
