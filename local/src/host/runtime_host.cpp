// The host device runtime: there is one host stream, always idle (work runs when called), so
// streams and events are null handles; memory is 64-byte aligned.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../detail/device_runtime.hpp"
#include "tessera/local/error.hpp"

namespace tessera::detail {
namespace {
constexpr std::size_t host_alignment = 64;

class HostRuntime final : public DeviceRuntime {
 public:
  void* stream_create(int, bool) const override { return nullptr; }
  void stream_destroy(int, void*) const noexcept override {}
  void stream_synchronize(int, void*) const override {}
  void* event_create(int) const override { return nullptr; }
  void event_destroy(void*) const noexcept override {}
  void event_record(int, void*, void*) const override {}
  void stream_wait_event(int, void*, void*) const override {}
  void event_synchronize(void*) const override {}
  float event_elapsed_ms(void*, void*) const override { return 0; }  // host events read a clock
  int current_device() const override { return -1; }
  void set_current_device(int) const override {}
  void* allocate(std::size_t bytes, int, void*) const override {
    const std::size_t rounded = (bytes + host_alignment - 1) / host_alignment * host_alignment;
    void* p = rounded < bytes ? nullptr : std::aligned_alloc(host_alignment, rounded == 0 ? host_alignment : rounded);
    if (!p)
      throw OutOfMemory("out of memory: cannot allocate " + std::to_string(bytes) + " bytes of host memory",
                        Device::host());
    return p;
  }
  void deallocate(void* p, int, void*) const noexcept override { std::free(p); }
  void* allocate_pinned(std::size_t bytes) const override { return allocate(bytes, 0, nullptr); }
  void free_pinned(void* p) const noexcept override { std::free(p); }
  void copy(void* dst, const void* src, std::size_t bytes, int, void*, bool) const override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  std::size_t self_test(int, std::size_t n) const override {
    std::vector<std::int64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = 2 * static_cast<std::int64_t>(i) + 1;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += v[i] != 2 * static_cast<std::int64_t>(i) + 1;
    return wrong;
  }
};
}  // namespace

const DeviceRuntime& host_runtime() {
  static const HostRuntime r;
  return r;
}
}  // namespace tessera::detail
