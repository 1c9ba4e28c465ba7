// Zarr stores, v2 (`.zarray`) and v3 (`zarr.json`): save_zarr writes a distributed array as one
// file per chunk (v2 "i.j.k"; v3 "c/i/j/k", or one file per shard of many chunks with
// sharding_indexed); load_zarr reads either format, any codec below, C or F order, either byte
// order, into any layout. Both are collective over the layout's group and throw io::IoError
// (naming the path and the problem) on every rank when any rank fails.
//
// The chunk pipeline: each file is written by exactly one rank, the owner of its first element
// (Layout::owner), which receives the pieces other ranks hold (grouped point-to-point on host
// buffers; device shards are staged through pinned memory by slabs, overlapped with the encoding
// of the chunks already staged); every rank encodes and writes its
// files on a thread pool (TESSERA_IO_THREADS, default the node's hardware threads shared among
// its ranks), each to a temporary name renamed when complete, so a crash never leaves a half
// chunk under its final name. Loading: each rank reads and decodes the chunks overlapping its
// block on the same pool; a missing chunk reads as the fill value, as in zarr.
//
// Instantiated in the library for the 7 element types and ranks 1-4.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/io/error.hpp"
#include "tessera/local/dtype.hpp"

namespace tessera::io {

/// Chunk compressors (v2 `compressor`, v3 bytes -> bytes codec). zlib is numcodecs' `zlib` in v2
/// (zlib framing); Zarr v3 has no zlib codec, so there it is the standard `gzip` codec (gzip
/// framing), as gzip is in both. v3 stores naming a `zlib` codec (earlier Tessera) still load.
enum class Compressor { none, zlib, gzip, zstd, blosc };
/// The compressor inside Blosc, and Blosc's shuffle filter.
enum class BloscCodec { lz4, lz4hc, blosclz, zstd, zlib };
enum class Shuffle { none, byte, bit };

/// A compressor and its parameters. The default is zarr-python 2's: Blosc, LZ4, level 5, byte
/// shuffle. Converts from a Compressor with that compressor's default level (zarr-python's: 1).
struct Codec {
  Compressor id = Compressor::blosc;
  int level = 5;  // zlib/gzip 1-9, zstd 1-22, blosc 0-9
  BloscCodec blosc = BloscCodec::lz4;
  Shuffle shuffle = Shuffle::byte;
  Codec() = default;
  Codec(Compressor c) : id(c), level(c == Compressor::blosc ? 5 : 1) {}  // NOLINT: implicit on purpose
  /// Blosc with `cname`, `level` and `shuffle`.
  static Codec make_blosc(BloscCodec cname, int level = 5, Shuffle s = Shuffle::byte) {
    Codec c;
    c.blosc = cname, c.level = level, c.shuffle = s;
    return c;
  }
};

/// How save_zarr writes a store.
struct ZarrWriteOptions {
  Codec compressor = {};  // Blosc-LZ4 + shuffle unless told otherwise
  bool durable = false;   // fsync every file before returning (checkpoints rename the store next)
  int format = 2;         // Zarr format: 2 or 3
  /// v3 only: shard shape (a multiple of the chunk shape along every axis): one file per shard
  /// holding its chunks and an index (sharding_indexed, index with crc32c). Empty: no sharding.
  std::vector<std::int64_t> shard;
  bool fortran_order = false;  // chunks stored in F order (v2 order "F", v3 transpose codec)
  bool big_endian = false;     // elements stored big-endian
  std::string attributes = "{}";  // JSON object: v2 .zattrs, v3 "attributes"
};

/// How load_zarr reads a store.
struct ZarrReadOptions {
  bool require_chunks = false;  // a missing chunk file is an IoError instead of the fill value
};

/// The zarr dtype string of a tessera dtype ("<f8", "<i4", "|b1", "<c8", ...).
std::string zarr_dtype(DType t);

/// Writes `a` as a Zarr store (format options.format) in directory `dir` (created if missing;
/// files overwritten) with chunk shape `chunks`. Returns when the store is complete on disk. Collective over a's group.
template <class T, int R>
void save_zarr(const std::string& dir, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
               const ZarrWriteOptions& options);

/// The same as a Zarr v2 store with compressor `c` (default Blosc-LZ4 + shuffle).
template <class T, int R>
void save_zarr(const std::string& dir, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
               Codec c = {}) {
  save_zarr<T, R>(dir, a, chunks, ZarrWriteOptions{c});
}

/// Reads the Zarr store in `dir` (v3 where `dir`/zarr.json exists, else v2) onto `layout` and device `d` (halos not filled). Throws
/// IoError if the store's dtype is not T's or its shape is not the layout's global shape.
template <class T, int R>
distributed::Array<T, R> load_zarr(const std::string& dir, const distributed::Layout<R>& layout, Device d,
                                   const ZarrReadOptions& options = {});

}  // namespace tessera::io
