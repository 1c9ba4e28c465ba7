// Device queries in a build with the CUDA backend (runtime API only, no kernels).
#include <cuda_runtime_api.h>

#include "tessera/local/cuda_check.hpp"
#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
std::string host_description();

int cuda_device_count() noexcept {
  int n = 0;
  // No driver or no GPU is not an error here: the host backend is used instead.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::string device_description(const Device& d) {
  if (d.is_host()) return host_description();
  check_device_usable(d);
  cudaDeviceProp p{};
  TESSERA_CHECK_CUDA(cudaGetDeviceProperties(&p, d.index()));
  const double gib = static_cast<double>(p.totalGlobalMem) / (1ull << 30);
  return std::string(p.name) + " (cc " + std::to_string(p.major) + "." +
         std::to_string(p.minor) + ", " + std::to_string(static_cast<int>(gib + 0.5)) + " GiB)";
}

void check_device_usable(const Device& d) {
  if (d.is_host()) return;
  const int n = cuda_device_count();
  if (d.index() >= n)
    throw InvalidArgument("device " + d.str() + " does not exist: this process sees " +
                          std::to_string(n) + " CUDA device(s)");
}
void make_current(const Device& d) {
  if (d.is_host()) return;
  check_device_usable(d);
  TESSERA_CHECK_CUDA(cudaSetDevice(d.index()));
}
}  // namespace tessera
