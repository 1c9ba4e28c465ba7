// libFuzzer target: a shard (sharding_indexed) of arbitrary bytes. The first byte picks the layout
// (index at the start or end, with or without crc32c, zstd or raw inner chunks); the rest is the
// shard. Reading its index and decoding it may only succeed or throw IoError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "detail/zarr_codecs.hpp"  // private header of tessera::io (distributed/io/src)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using namespace tessera::io;
  auto s = std::make_shared<ShardSpec>();
  s->inner = {2, 3};
  s->index_at_end = data[0] & 1;
  if (data[0] & 2) s->index_codecs.bytes.push_back(BytesCodec{"crc32c"});
  if (data[0] & 4) s->codecs.bytes.push_back(BytesCodec{"zstd"});
  if (data[0] & 8) s->codecs.big_endian = true;
  ChunkCodecs c;
  c.shard = s;
  const std::string_view shard(reinterpret_cast<const char*>(data) + 1, size - 1);
  const detail::ChunkType t{{4, 6}, 4, 4, std::string(4, '\0')};
  std::vector<char> out(4 * 6 * 4);
  try {
    const auto index = detail::shard_index(*s, shard, 4);
    for (std::size_t k = 0; k < 4; ++k)
      if (index[2 * k] != ~0ull && (index[2 * k] > shard.size() || index[2 * k + 1] > shard.size() - index[2 * k])) std::abort();
    detail::decode_chunk(c, shard, out.data(), t, 1);
  } catch (const IoError&) {
  }
  return 0;
}
