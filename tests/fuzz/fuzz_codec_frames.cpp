// libFuzzer target: Blosc, Zstd, gzip and zlib frames of arbitrary bytes. The first byte picks the
// codec; the rest is the frame, decoded with a cap of 64 KiB and then as a 16 x 256 float32 chunk.
// It may only succeed within the cap or throw IoError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "detail/zarr_codecs.hpp"  // private header of tessera::io (distributed/io/src)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using namespace tessera::io;
  static const char* ids[] = {"blosc", "zstd", "gzip", "zlib"};
  const BytesCodec codec{ids[data[0] % 4]};
  const std::string_view frame(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (detail::decode_bytes(codec, frame, 1 << 16, 1 + (data[0] >> 7)).size() > (1u << 16)) std::abort();
  } catch (const IoError&) {
  }
  ChunkCodecs c;
  c.bytes.push_back(codec);
  std::vector<char> out(16 * 256 * 4);
  try {
    detail::decode_chunk(c, frame, out.data(), detail::ChunkType{{16, 256}, 4, 4, std::string(4, '\0')}, 1);
  } catch (const IoError&) {
  }
  return 0;
}
