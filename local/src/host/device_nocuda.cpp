// Device queries in a build without the CUDA backend.
#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
std::string host_description();

int cuda_device_count() noexcept { return 0; }

std::string device_description(const Device& d) {
  return d.is_host() ? host_description() : d.str() + " (CUDA backend not built)";
}

void check_device_usable(const Device& d) {
  if (d.is_cuda())
    throw BackendUnavailable("device " + d.str() + " requested but Tessera was built without CUDA");
}
void make_current(const Device& d) { check_device_usable(d); }
}  // namespace tessera
