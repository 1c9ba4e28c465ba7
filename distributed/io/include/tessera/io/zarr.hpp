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
//
// Instantiated in the library for the 7 element types and ranks 1-4.
#pragma once
#include <string>
#include <type_traits>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/io/error.hpp"
#include "tessera/local/dtype.hpp"

namespace tessera::io {

/// Chunk compression of a Zarr store.
enum class Compressor { none, zlib };

/// How save_zarr writes a store.
struct ZarrWriteOptions {
  Compressor compressor = Compressor::none;
  bool durable = false;  // fsync every file before returning (checkpoints rename the store next)
};

/// How load_zarr reads a store.
struct ZarrReadOptions {
  bool require_chunks = false;  // a missing chunk file is an IoError instead of the fill value
};

/// The zarr dtype string of a tessera dtype ("<f8", "<i4", "|b1", "<c8", ...).
std::string zarr_dtype(DType t);

/// Writes `a` as a Zarr v2 store in directory `dir` (created if missing; files overwritten) with
/// chunk shape `chunks`. Returns when the store is complete on disk. Collective over a's group.
template <class T, int R>
void save_zarr(const std::string& dir, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
               const ZarrWriteOptions& options);

/// The same with compressor `c` and default options.
template <class T, int R>
void save_zarr(const std::string& dir, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
               Compressor c = Compressor::none) {
  save_zarr<T, R>(dir, a, chunks, ZarrWriteOptions{c});
}

/// Reads the Zarr v2 store in `dir` onto `layout` and device `d` (halos not filled). Throws
/// IoError if the store's dtype is not T's or its shape is not the layout's global shape.
template <class T, int R>
distributed::Array<T, R> load_zarr(const std::string& dir, const distributed::Layout<R>& layout, Device d,
                                   const ZarrReadOptions& options = {});

}  // namespace tessera::io
