// libFuzzer target: tessera::io::parse_zarray on arbitrary text. It may only return or throw
// IoError; any other exception, a crash or a sanitizer report is a finding. What it accepts must
// satisfy what the loader relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "detail/zarr_meta.hpp"  // private header of tessera::io (distributed/io/src)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tessera::io::ZarrayMeta m;
  try {
    m = tessera::io::parse_zarray(text);
  } catch (const tessera::io::IoError&) {
    return 0;
  }
  if (m.shape.size() != m.chunks.size()) std::abort();
  double elems = 1;
  for (std::size_t a = 0; a < m.shape.size(); ++a) {
    if (m.shape[a] < 0 || m.chunks[a] < 1) std::abort();
    elems *= static_cast<double>(m.chunks[a]);
  }
  if (elems > 1e15 || (m.order != 'C' && m.order != 'F') || (m.separator != '.' && m.separator != '/')) std::abort();
  return 0;
}
