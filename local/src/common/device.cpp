#include "tessera/local/device.hpp"

#include <charconv>
#include <ostream>
#include <thread>

#include "tessera/local/error.hpp"

namespace tessera {

Device Device::parse(std::string_view text) {
  if (text == "host" || text == "cpu") return host();
  if (text == "cuda") return cuda(0);
  if (text.starts_with("cuda:")) {
    std::string_view num = text.substr(5);
    int index = -1;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), index);
    if (ec == std::errc() && ptr == num.data() + num.size() && index >= 0) return cuda(index);
  }
  throw InvalidArgument("invalid device '" + std::string(text) +
                        "': expected host, cuda or cuda:N with N >= 0");
}

std::string Device::str() const {
  return is_host() ? std::string("host") : "cuda:" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

Device device_for_local_rank(int local_rank) {
  const int gpus = cuda_device_count();
  return gpus > 0 ? Device::cuda(local_rank % gpus) : Device::host();
}

std::string host_description() {
  return "host (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
}

}  // namespace tessera
