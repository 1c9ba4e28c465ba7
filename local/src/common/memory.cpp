// Buffers and per-device statistics, backend-neutral: the device's runtime allocates.
#include "tessera/local/memory.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "../detail/device_runtime.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
namespace detail {
bool stream_alive(void* native);  // stream.cpp
}  // namespace detail

namespace {
const detail::DeviceRuntime& rt(Device d) { return detail::device_runtime(d.kind()); }

std::mutex& stats_mutex() { static std::mutex m; return m; }
std::map<Device, MemoryStats>& stats() { static auto* s = new std::map<Device, MemoryStats>(); return *s; }

void count_alloc(Device d, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(stats_mutex());
  auto& s = stats()[d];
  s.bytes_in_use += bytes;
  s.peak_bytes = std::max(s.peak_bytes, s.bytes_in_use);
  ++s.live_allocations;
  ++s.total_allocations;
}
void count_free(Device d, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(stats_mutex());
  auto& s = stats()[d];
  s.bytes_in_use -= bytes;
  --s.live_allocations;
}
}  // namespace

MemoryStats memory_stats(Device d) {
  std::lock_guard<std::mutex> lock(stats_mutex());
  auto it = stats().find(d);
  return it == stats().end() ? MemoryStats{} : it->second;
}

void reset_peak_memory(Device d) {
  std::lock_guard<std::mutex> lock(stats_mutex());
  auto& s = stats()[d];
  s.peak_bytes = s.bytes_in_use;
}

Buffer::Buffer(std::size_t bytes, Device d) : Buffer(bytes, Stream::default_for(d)) {}

Buffer::Buffer(std::size_t bytes, const Stream& s) : bytes_(bytes), device_(s.device()), stream_(s.native()) {
  data_ = rt(device_).allocate(bytes, device_.index(), stream_);
  count_alloc(device_, bytes_);
}

void Buffer::release() noexcept {
  if (!data_) return;
  // A buffer that outlived its stream (its Context ended) is freed without stream order.
  rt(device_).deallocate(data_, device_.index(), detail::stream_alive(stream_) ? stream_ : nullptr);
  count_free(device_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)),
      device_(o.device_), stream_(o.stream_) {}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    device_ = o.device_;
    stream_ = o.stream_;
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes), pinned_(detail::pinning_available()) {
  data_ = detail::device_runtime(pinned_ ? DeviceKind::cuda : DeviceKind::host).allocate_pinned(bytes);
}

PinnedBuffer::~PinnedBuffer() {
  if (data_) detail::device_runtime(pinned_ ? DeviceKind::cuda : DeviceKind::host).free_pinned(data_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), pinned_(o.pinned_) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    PinnedBuffer tmp(std::move(*this));
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    pinned_ = o.pinned_;
  }
  return *this;
}

namespace {
// The current Context's free pinned blocks by size (it ends with the Context, before the CUDA runtime).
struct PinnedPool {
  std::mutex mu;
  std::multimap<std::size_t, std::unique_ptr<PinnedBuffer>> free_blocks;
};
}  // namespace

std::shared_ptr<PinnedBuffer> take_pinned(std::size_t bytes) {
  auto& holder = Context::current().resource<std::shared_ptr<PinnedPool>>(
      [] { return std::make_shared<std::shared_ptr<PinnedPool>>(std::make_shared<PinnedPool>()); });
  std::shared_ptr<PinnedPool> pool = holder;
  std::unique_ptr<PinnedBuffer> b;
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    if (auto it = pool->free_blocks.lower_bound(bytes); it != pool->free_blocks.end()) {
      b = std::move(it->second);
      pool->free_blocks.erase(it);
    }
  }
  if (!b) b = std::make_unique<PinnedBuffer>(bytes ? bytes : 1);
  return std::shared_ptr<PinnedBuffer>(b.release(), [weak = std::weak_ptr<PinnedPool>(pool)](PinnedBuffer* p) {
    auto alive = weak.lock();
    if (!alive) return delete p;  // the Context ended first
    std::lock_guard<std::mutex> lock(alive->mu);
    alive->free_blocks.emplace(p->bytes(), std::unique_ptr<PinnedBuffer>(p));
  });
}

namespace detail {
void memcpy_any(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes,
                const Stream& s) {
  if (bytes == 0) return;
  // The runtime of the device side does it (cudaMemcpyDefault handles H2D, D2H, D2D and peers).
  const Device on = s.device().is_cuda() ? s.device() : src_dev.is_cuda() ? src_dev : dst_dev;
  // A copy touching host memory returns with the data in place, as users expect of copy().
  const bool sync = dst_dev.is_host() || src_dev.is_host() || s.device().is_host();
  rt(on).copy(dst, src, bytes, on.index(), s.device() == on ? s.native() : nullptr, sync);
}
}  // namespace detail

}  // namespace tessera
