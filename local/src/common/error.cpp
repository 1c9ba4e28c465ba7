// Error messages: what, then where ("(rank 3, cuda:1)"), the same ending for every exception.
#include "tessera/local/error.hpp"

#include <atomic>

#include "tessera/local/settings.hpp"

namespace tessera {
namespace {
std::atomic<int> g_rank{-2};  // -2: not set yet, ask the launcher's environment
std::atomic<int> g_device{-2};  // -2: none; -1: host; k >= 0: cuda:k

std::string with_context(const std::string& message, int rank, std::optional<Device> device) {
  std::string out = message + " (rank " + std::to_string(rank);
  if (device) out += ", " + device->str();
  return out + ")";
}
}  // namespace

int process_rank() noexcept {
  int r = g_rank.load(std::memory_order_relaxed);
  return r == -2 ? detail::launcher_rank() : r;
}

void set_process_rank(int rank) noexcept { g_rank.store(rank, std::memory_order_relaxed); }

std::optional<Device> process_device() noexcept {
  const int d = g_device.load(std::memory_order_relaxed);
  if (d == -2) return std::nullopt;
  return d < 0 ? Device::host() : Device::cuda(d);
}

void set_process_device(std::optional<Device> device) noexcept {
  g_device.store(!device ? -2 : device->is_host() ? -1 : device->index(), std::memory_order_relaxed);
}

Error::Error(const std::string& message)
    : std::runtime_error(with_context(message, process_rank(), process_device())),
      message_(message),
      rank_(process_rank()) {}

Error::Error(const std::string& message, const Device& device)
    : std::runtime_error(with_context(message, process_rank(), device)),
      message_(message),
      rank_(process_rank()) {}

}  // namespace tessera
