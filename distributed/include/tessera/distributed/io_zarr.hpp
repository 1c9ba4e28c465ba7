// Zarr v2 directory stores: save_zarr writes a distributed array as `.zarray`, `.zattrs` and one
// file per chunk ("i.j.k", C order, little-endian, edge chunks padded with the fill value);
// load_zarr reads any C-order Zarr v2 array of a supported dtype into any layout. Both are
// collective over the layout's group and throw io::IoError (naming the path and the problem) on
// every rank when any rank fails.
//
// Saving: each chunk is written by exactly one rank, the owner of its first element
// (Layout::owner), which receives the chunk's pieces from the ranks holding them (grouped
// point-to-point on host buffers; device shards are staged to the host). Loading: each rank reads
// the chunks overlapping its block; a missing chunk file reads as the fill value, as in zarr.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/array.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/zarray_meta.hpp"  // IoError, ZarrayMeta, parse_zarray
#include "tessera/local/basic_ops.hpp"

namespace tessera::io {

enum class Compressor { none, zlib };

// The zarr dtype string of a tessera dtype ("<f8", "<i4", "|b1", "<c8", ...).
std::string zarr_dtype(DType t);

namespace detail {
// A type-erased host copy of one rank's block plus the blocks of every rank (what the I/O needs).
struct ZarrShard {
  comm::ProcessGroup group;
  DType dtype;
  std::size_t elem = 0;
  std::vector<std::int64_t> global;
  std::vector<std::vector<std::int64_t>> lo, hi;  // per rank
  std::vector<char> canonical;  // rank's block is the one Layout::owner names (not a replica)
  void* host = nullptr;         // this rank's block, contiguous, row-major
  bool durable = false;         // save: fsync every file written (checkpoints)
  bool require_chunks = false;  // load: a missing chunk file is an IoError, not the fill value
};
void save_zarr_host(const std::string& dir, const ZarrShard& s, const std::vector<std::int64_t>& chunks, Compressor c);
void load_zarr_host(const std::string& dir, const ZarrShard& s);

template <class T, int R>
ZarrShard make_shard(const distributed::Layout<R>& l, void* host) {
  ZarrShard s{l.grid().group(), dtype_v<T>, sizeof(T), {}, {}, {}, {}, host};
  s.global.assign(l.global_shape().begin(), l.global_shape().end());
  const int n = l.grid().size();
  for (int r = 0; r < n; ++r) {
    const auto b = l.local_box(r);
    s.lo.emplace_back(b.lo.begin(), b.lo.end());
    s.hi.emplace_back(b.hi.begin(), b.hi.end());
    s.canonical.push_back(!b.empty() && l.owner(b.lo) == r);
  }
  return s;
}
}  // namespace detail

// Writes `a` as a Zarr v2 store in directory `dir` (created if missing; files overwritten) with
// chunk shape `chunks`. Returns when the store is complete on disk.
template <class T, int R>
void save_zarr(const std::string& dir, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
               Compressor c = Compressor::none) {
  const auto agreed = distributed::check_call<T, R>("save_zarr", a.layout(), a.device(), "dir", dir, "chunks",
                                                    local::shape_str(chunks), "compressor", c);
  local::Array<T, R> h(a.layout().local_shape(), Device::host());
  local::copy(h, a.interior());
  auto s = detail::make_shard<T, R>(a.layout(), h.data());
  detail::save_zarr_host(dir, s, std::vector<std::int64_t>(chunks.begin(), chunks.end()), c);
}

// Reads the Zarr v2 store in `dir` onto `layout` and device `d` (halos not filled). Throws IoError
// if the store's dtype is not T's or its shape is not the layout's global shape.
template <class T, int R>
distributed::Array<T, R> load_zarr(const std::string& dir, const distributed::Layout<R>& layout, Device d) {
  const auto agreed = distributed::check_call<T, R>("load_zarr", layout, d, "dir", dir);
  distributed::Array<T, R> a(layout, d);
  local::Array<T, R> h(layout.local_shape(), Device::host());
  auto s = detail::make_shard<T, R>(layout, h.data());
  detail::load_zarr_host(dir, s);
  local::copy(a.interior(), h);
  return a;
}

}  // namespace tessera::io
