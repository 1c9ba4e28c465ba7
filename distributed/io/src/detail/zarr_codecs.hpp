// Zarr chunk codecs: a chunk (C order, native byte order) to the bytes of its file and back,
// through transpose, byte order, sharding_indexed and the bytes codecs (zlib, gzip, zstd, blosc,
// crc32c). Pure functions with no MPI or CUDA dependency: the fuzz targets build them alone.
// Every failure (corrupt, truncated or oversized data) is an IoError without the path, which
// the caller adds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "byte_pool.hpp"
#include "zarr_meta.hpp"

namespace tessera::io::detail {

using Vec = std::vector<std::int64_t>;

// What one chunk is: its shape, element size, byte-swap unit and one element of the fill value.
struct ChunkType {
  Vec shape;
  std::size_t elem = 0, swap_unit = 0;
  std::string fill;  // `elem` bytes
  std::int64_t count() const {
    std::int64_t n = 1;
    for (auto x : shape) n *= x;
    return n;
  }
};

// A chunk's encoded bytes: a view of the chunk itself when its codecs leave it as it is (no copy),
// else of `buf` (moves keep the view valid).
struct Encoded {
  PooledBytes buf;
  std::string_view bytes;
};

// A shard encoded as pieces to write one after the other (its index first or last). An inner
// chunk that is one contiguous run of the shard and that its codecs leave as it is (raw) is a
// view of the shard's data, not a copy; the rest lives in `owned` (moves keep the views valid).
struct ShardPieces {
  std::vector<PooledBytes> owned;
  std::vector<std::string_view> pieces;
  std::size_t size() const {
    std::size_t n = 0;
    for (auto v : pieces) n += v.size();
    return n;
  }
};
// The sharding_indexed codec alone (the shard's data in C order, native byte order, of shape
// t.shape); what encode_chunk does for a shard with no transpose and no bytes codecs after it.
ShardPieces encode_shard_pieces(const ShardSpec& s, const char* data, const ChunkType& t, int threads);

// Encodes the chunk at `chunk` by `c` (the result may view `chunk`); blosc may use `threads` threads.
Encoded encode_chunk(const ChunkCodecs& c, const char* chunk, const ChunkType& t, int threads);
// Decodes a chunk file's bytes `in` into `out` (t.count() * t.elem bytes).
void decode_chunk(const ChunkCodecs& c, std::string_view in, char* out, const ChunkType& t, int threads);

// One bytes codec each way; decoding refuses output larger than `cap` bytes.
PooledBytes encode_bytes(const BytesCodec& c, std::string_view in, std::size_t elem, int threads);
PooledBytes decode_bytes(const BytesCodec& c, std::string_view in, std::size_t cap, int threads);

// The (offset, nbytes) pairs of a shard's `n` inner chunks, checked against the shard's size
// (an empty inner chunk is (2^64-1, 2^64-1)).
std::vector<std::uint64_t> shard_index(const ShardSpec& s, std::string_view shard, std::size_t n);
// The same from the index's own bytes (read alone from a shard file of `shard_size` bytes).
std::vector<std::uint64_t> parse_shard_index(const ShardSpec& s, std::string_view index, std::size_t shard_size, std::size_t n);
// The size of a shard's encoded index.
std::size_t shard_index_bytes(const ShardSpec& s, std::size_t n);

// CRC-32C (Castagnoli), as the crc32c codec stores it.
std::uint32_t crc32c(const void* data, std::size_t n);

// dst (C order) = src (C order, shape src_shape) with its axes permuted: dst axis k = src axis order[k].
void permute(const char* src, const Vec& src_shape, const std::vector<int>& order, std::size_t es, char* dst);

// Copies box [lo, hi) (global indices) from a row-major block at src_lo (shape src_shape) to one
// at dst_lo (shape dst_shape).
void copy_region(char* dst, const Vec& dst_lo, const Vec& dst_shape, const char* src, const Vec& src_lo,
                 const Vec& src_shape, const Vec& lo, const Vec& hi, std::size_t es);

}  // namespace tessera::io::detail
