// Non-template support for expressions: device merging, the launch counter, SM counts.
#include <atomic>

#include "tessera/local/expr.hpp"

namespace tessera::local {
namespace {
std::atomic<long long> g_launches{0};
}
namespace detail {
void note_kernel_launch() noexcept { g_launches.fetch_add(1, std::memory_order_relaxed); }
}  // namespace detail
long long kernel_launch_count() noexcept { return g_launches.load(std::memory_order_relaxed); }

std::optional<Device> merge_devices(std::optional<Device> a, std::optional<Device> b, const char* op) {
  if (a && b && *a != *b)
    throw DeviceMismatch(std::string("device mismatch in ") + op + ": " + a->str() + " vs " + b->str(), *a);
  return a ? a : b;
}
}  // namespace tessera::local
