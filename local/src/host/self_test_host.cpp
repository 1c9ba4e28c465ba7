#include <cstdint>
#include <vector>

#include "tessera/config.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/self_test.hpp"

namespace tessera {
namespace detail {
std::size_t cuda_self_test(const Device& device, std::size_t n);
}

std::size_t device_self_test(const Device& device, std::size_t n) {
  check_device_usable(device);
  std::vector<std::int64_t> v(n);
  if (device.is_cuda()) {
#if TESSERA_HAVE_CUDA
    return detail::cuda_self_test(device, n);
#endif
  }
  for (std::size_t i = 0; i < n; ++i) v[i] = 2 * static_cast<std::int64_t>(i) + 1;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += v[i] != 2 * static_cast<std::int64_t>(i) + 1;
  return wrong;
}
}  // namespace tessera
