// Zarr array metadata, v2 (`.zarray`) and v3 (`zarr.json`): parsing, validation and writing, into
// one description of the chunk grid and the codec chain. Pure functions with no MPI or CUDA
// dependency (zarr.cpp does the parallel I/O; tests/fuzz fuzzes the parsers).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/io/error.hpp"

namespace tessera::io {

// A bytes -> bytes codec: "zlib", "gzip", "zstd", "blosc" or "crc32c" (v3 only).
struct BytesCodec {
  std::string id;
  int level = 1;              // zlib/gzip/zstd level, blosc clevel
  std::string cname = "lz4";  // blosc: lz4, lz4hc, blosclz, zstd, zlib
  int shuffle = 1;            // blosc: 0 none, 1 byte, 2 bit, -1 auto (bit for 1-byte types)
  int typesize = 0;           // blosc: 0 = the element size
  int blocksize = 0;          // blosc: 0 = automatic
};

struct ShardSpec;

// What turns one chunk (C order, native byte order) into the bytes of its file, in this order:
// transpose, byte order (array -> bytes, or the sharding codec), then the bytes codecs.
struct ChunkCodecs {
  std::vector<int> transpose;  // stored axis k = chunk axis transpose[k]; empty: C order
  bool big_endian = false;
  std::shared_ptr<const ShardSpec> shard;  // set: sharding_indexed instead of bytes
  std::vector<BytesCodec> bytes;
  bool trivial() const { return transpose.empty() && !big_endian && !shard && bytes.empty(); }
};

// sharding_indexed: a chunk (the shard) is a grid of inner chunks, each encoded by `codecs`,
// followed (or preceded) by an index of (offset, nbytes) uint64 pairs encoded by `index_codecs`.
struct ShardSpec {
  std::vector<std::int64_t> inner;
  ChunkCodecs codecs, index_codecs;
  bool index_at_end = true;
};

// One Zarr array: what loading and saving need, whatever the format.
struct ZarrayMeta {
  int format = 2;
  std::vector<std::int64_t> shape, chunks;  // chunks: the regular grid (shards when sharded)
  std::string dtype;                        // little-endian numpy spelling: "<f8", "|b1", "<c8"
  std::optional<std::string> compressor;    // v2: codec id; nullopt for null
  int level = -1;                           // v2: compressor level if given
  double fill_real = 0, fill_imag = 0;      // fill value (null reads as 0)
  char order = 'C';                         // v2 order (v3: a transpose codec)
  char separator = '.';                     // chunk key separator
  bool key_prefix = false;                  // v3 default chunk key encoding: "c/i/j"
  ChunkCodecs codecs;
  std::string attributes = "{}";            // v3 attributes (JSON text)
};

// Parses and validates a `.zarray` document. Throws IoError describing the problem (bad JSON,
// missing or mistyped keys, zarr_format != 2, filters, unknown codecs, shape/chunks mismatch,
// chunks whose element count overflows).
ZarrayMeta parse_zarray(std::string_view json);
// Parses and validates a v3 `zarr.json` of an array (node_type "array").
ZarrayMeta parse_zarr_json(std::string_view json);
// The documents for `m` (format 2: .zarray; format 3: zarr.json, with m.attributes).
std::string make_zarray(const ZarrayMeta& m);
std::string make_zarr_json(const ZarrayMeta& m);
// The key of chunk `idx` ("0.1", "0/1", "c/0/1", "c" for 0-d).
std::string chunk_key(const ZarrayMeta& m, const std::vector<std::int64_t>& idx);

// The element size of a canonical dtype, and the size swapped as one unit (half for complex).
std::size_t dtype_size(const std::string& dtype);
std::size_t dtype_swap_unit(const std::string& dtype);

}  // namespace tessera::io
