// Parallel .npy I/O: save_npy writes a distributed array to one NumPy .npy file (C order,
// little-endian) and load_npy reads one into any layout, both collectively with MPI-IO on the
// grid's communicator (a subarray file view of this rank's block, written/read in chunks of
// whole leading-axis slabs staged through pinned host memory). Errors are IoError on every rank.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/npy_header.hpp"  // IoError, NpyHeader, parse_npy_header, npy_descr
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::io {

using local::index_t;

namespace detail {
// What one rank writes or reads: its block [lo, lo+count) of the global array (count all zero
// when it takes no part), staged `rows` leading-axis slabs at a time through host memory.
struct NpyPlan {
  std::string path;
  MPI_Comm comm;
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

template <class T, int R>
NpyPlan npy_plan(const std::string& path, const distributed::Layout<R>& l, bool writes) {
  NpyPlan p{path, l.grid().group().mpi_comm(), npy_descr<T>(), sizeof(T), {}, {}, {}};
  const auto box = l.local_box();
  const auto shape = box.shape();
  for (int a = 0; a < R; ++a) {
    p.global.push_back(l.global_shape()[a]);
    p.lo.push_back(box.lo[a]);
    p.count.push_back(writes ? shape[a] : 0);
  }
  return p;
}

// Only ranks at coordinate 0 of the grid axes that split nothing write (the others hold copies).
template <int R> bool npy_writer(const distributed::Layout<R>& l) {
  const auto& g = l.grid();
  for (int ga = 0; ga < g.ndims(); ++ga) {
    bool used = false;
    for (int a = 0; a < R; ++a) used = used || l.split()[a] == ga;
    if (!used && g.coords()[ga] != 0) return false;
  }
  return true;
}
}  // namespace detail

// Writes `a` (interior only) to `path` as one .npy file. Collective over a's grid.
template <class T, int R>
void save_npy(const std::string& path, const distributed::Array<T, R>& a) {
  static_assert(R >= 1, "save_npy: arrays of rank >= 1");
  const auto agreed = distributed::check_call<T, R>("save_npy", a.layout(), a.device(), "path", path);
  const auto& l = a.layout();
  const bool writes = detail::npy_writer(l) && l.local_box().size() > 0;
  const auto plan = detail::npy_plan<T, R>(path, l, writes);
  local::Array<T, R> packed;  // a contiguous copy of the interior on a's device
  if (writes) {
    a.stream().synchronize();  // work queued on an adopted stream finishes before the copy
    packed = local::Array<T, R>(a.interior().shape(), a.device());
    local::copy(packed, a.interior());
  }
  detail::write_npy(plan, [&](index_t row0, index_t rows, void* host) {
    auto s = packed.shape();
    s[0] = rows;
    local::copy(local::Array<T, R>::view(static_cast<T*>(host), s, Device::host()), packed.slice(0, row0, row0 + rows));
  });
}

// Reads the .npy file at `path` into a new array of `layout` on `d` (halos left uninitialized).
// Collective over the layout's grid; dtype and shape must match T and layout.global_shape().
template <class T, int R>
distributed::Array<T, R> load_npy(const std::string& path, const distributed::Layout<R>& layout, Device d) {
  static_assert(R >= 1, "load_npy: arrays of rank >= 1");
  const auto agreed = distributed::check_call<T, R>("load_npy", layout, d, "path", path);
  const bool reads = layout.local_box().size() > 0;
  const auto plan = detail::npy_plan<T, R>(path, layout, reads);
  local::Array<T, R> packed;
  if (reads) packed = local::Array<T, R>(layout.local_shape(), d);
  detail::read_npy(plan, [&](index_t row0, index_t rows, void* host) {
    auto s = packed.shape();
    s[0] = rows;
    local::copy(packed.slice(0, row0, row0 + rows), local::Array<T, R>::view(static_cast<T*>(host), s, Device::host()));
  });
  distributed::Array<T, R> out(layout, d);
  if (reads) local::copy(out.interior(), packed);
  return out;  // on d's default stream, which `out` uses
}

}  // namespace tessera::io
