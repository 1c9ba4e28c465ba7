// device_self_test: a kernel (or loop) writes known values, which are read back and counted.
#include "tessera/local/self_test.hpp"

#include "../detail/device_runtime.hpp"

namespace tessera {
std::size_t device_self_test(const Device& device, std::size_t n) {
  check_device_usable(device);
  return detail::device_runtime(device.kind()).self_test(device.index(), n);
}
}  // namespace tessera
