// The type-erased half of save_npy/load_npy (npy.cpp): one rank's block of the file, moved by
// collective MPI-IO in rounds of whole leading-axis slabs staged through pinned host memory.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/local/array.hpp"

namespace tessera::io::detail {

using local::index_t;

// What one rank writes or reads: its block [lo, lo+count) of the global array (count all zero
// when it takes no part), staged `rows` leading-axis slabs at a time through host memory.
struct NpyPlan {
  std::string path;
  comm::ProcessGroup group;
  std::string descr;
  std::size_t elem = 0;
  std::vector<index_t> global, lo, count;
};
using SlabFn = std::function<void(index_t row0, index_t rows, void* host)>;
// fill(row0, rows, host) puts rows [row0, row0+rows) of this rank's block into `host`.
void write_npy(const NpyPlan& p, const SlabFn& fill);
// take(row0, rows, host) receives rows [row0, row0+rows) of this rank's block from `host`.
void read_npy(const NpyPlan& p, const SlabFn& take);
// Bytes staged per round (default 256 MiB, at least one slab); tests shrink it to force rounds.
void set_npy_chunk_bytes(std::size_t bytes);
std::size_t npy_chunk_bytes();

}  // namespace tessera::io::detail
