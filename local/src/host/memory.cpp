// Buffers and per-device statistics for both backends; the CUDA calls are in src/cuda/.
#include "tessera/local/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <utility>

#include "../detail/cuda_backend.hpp"
#include "tessera/config.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
namespace cu = detail::cuda;
namespace {
constexpr std::size_t host_alignment = 64;

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

void* host_alloc(std::size_t bytes) {
  const std::size_t rounded = (bytes + host_alignment - 1) / host_alignment * host_alignment;
  void* p = rounded < bytes ? nullptr : std::aligned_alloc(host_alignment, rounded == 0 ? host_alignment : rounded);
  if (!p)
    throw OutOfMemory("out of memory: cannot allocate " + std::to_string(bytes) + " bytes of host memory",
                      Device::host());
  return p;
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

Buffer::Buffer(std::size_t bytes, const Stream& s) : bytes_(bytes), device_(s.device()) {
#if TESSERA_HAVE_CUDA
  if (device_.is_cuda()) {
    stream_ = s.native();
    data_ = cu::malloc_async(bytes, device_.index(), stream_);
  }
#endif
  if (device_.is_host()) data_ = host_alloc(bytes);
  count_alloc(device_, bytes_);
}

void Buffer::release() noexcept {
  if (!data_) return;
#if TESSERA_HAVE_CUDA
  if (device_.is_cuda()) cu::free_async(data_, device_.index(), stream_);
#endif
  if (device_.is_host()) std::free(data_);
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

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
#if TESSERA_HAVE_CUDA
  if (cuda_device_count() > 0) {
    data_ = cu::malloc_pinned(bytes);
    pinned_ = true;
    return;
  }
#endif
  data_ = host_alloc(bytes);
}

PinnedBuffer::~PinnedBuffer() {
  if (!data_) return;
#if TESSERA_HAVE_CUDA
  if (pinned_) {
    cu::free_pinned(data_);
    return;
  }
#endif
  std::free(data_);
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

namespace detail {
void memcpy_any(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes,
                const Stream& s) {
  if (bytes == 0) return;
  if (dst_dev.is_host() && src_dev.is_host()) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if TESSERA_HAVE_CUDA
  // cudaMemcpyDefault with unified addressing handles H2D, D2H, D2D and peer copies.
  const Device on = s.device().is_cuda() ? s.device() : (src_dev.is_cuda() ? src_dev : dst_dev);
  cu::memcpy_async(dst, src, bytes, on.index(), s.device().is_cuda() ? s.native() : nullptr);
  // A copy touching host memory returns with the data in place, as users expect of copy().
  if (dst_dev.is_host() || src_dev.is_host() || s.device().is_host()) {
    if (s.device().is_cuda()) s.synchronize();
    else cu::stream_synchronize(on.index(), nullptr);
  }
#else
  (void)s;
  throw BackendUnavailable("copy between " + src_dev.str() + " and " + dst_dev.str() +
                           " needs the CUDA backend");
#endif
}
}  // namespace detail

}  // namespace tessera
