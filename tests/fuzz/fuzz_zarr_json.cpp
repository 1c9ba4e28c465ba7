// libFuzzer target: tessera::io::parse_zarr_json (Zarr v3 array metadata) on arbitrary text. It may
// only return or throw IoError; what it accepts must satisfy what the loader relies on, and must
// survive a write and a re-parse unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "detail/zarr_meta.hpp"  // private header of tessera::io (distributed/io/src)

namespace {
void check_chain(const tessera::io::ChunkCodecs& c, std::size_t rank, int depth) {
  if (depth > 3 || c.bytes.size() > 8 || (!c.transpose.empty() && c.transpose.size() != rank)) std::abort();
  if (c.shard) {
    if (c.shard->inner.size() != rank) std::abort();
    for (auto x : c.shard->inner)
      if (x < 1) std::abort();
    check_chain(c.shard->codecs, rank, depth + 1);
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tessera::io::ZarrayMeta m;
  try {
    m = tessera::io::parse_zarr_json(text);
  } catch (const tessera::io::IoError&) {
    return 0;
  }
  if (m.shape.size() != m.chunks.size() || m.format != 3) std::abort();
  double elems = 1;
  for (std::size_t a = 0; a < m.shape.size(); ++a) {
    if (m.shape[a] < 0 || m.chunks[a] < 1) std::abort();
    elems *= static_cast<double>(m.chunks[a]);
  }
  if (elems > 1e15 || (m.separator != '.' && m.separator != '/')) std::abort();
  check_chain(m.codecs, m.shape.size(), 0);
  // Supported dtypes round-trip through the writer.
  if (tessera::io::dtype_size(m.dtype) > 0 && m.dtype.size() <= 4) {
    try {
      const auto again = tessera::io::parse_zarr_json(tessera::io::make_zarr_json(m));
      if (again.shape != m.shape || again.chunks != m.chunks || again.dtype != m.dtype) std::abort();
    } catch (const tessera::io::IoError&) {
    }
  }
  return 0;
}
