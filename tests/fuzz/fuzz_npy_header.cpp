// libFuzzer target: tessera::io::parse_npy_header on arbitrary bytes. It may only return or
// throw IoError; any other exception, a crash or a sanitizer report is a finding. What parses
// must also survive make_npy_header -> parse_npy_header unchanged (for the descrs Tessera writes).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "detail/npy_header.hpp"  // private header of tessera::io (distributed/io/src)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  tessera::io::NpyHeader h;
  try {
    h = tessera::io::parse_npy_header(bytes);
  } catch (const tessera::io::IoError&) {
    return 0;
  }
  if (h.data_offset > size) std::abort();  // the header must lie inside the bytes given
  for (const char* d : {"<f4", "<f8", "<i4", "<i8", "|b1", "<c8", "<c16"}) {
    if (h.descr != d) continue;
    const auto again = tessera::io::parse_npy_header(tessera::io::make_npy_header(h.descr, h.shape));
    if (again.descr != h.descr || again.shape != h.shape || again.fortran_order || again.data_offset % 64 != 0) std::abort();
  }
  return 0;
}
