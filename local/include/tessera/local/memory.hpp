// Memory. Device buffers are allocated stream-ordered (cudaMallocAsync) from the device's default
// memory pool, whose release threshold keeps freed blocks for reuse; host buffers are 64-byte
// aligned; pinned buffers stage host<->device transfers. Never managed memory.
#pragma once
#include <cstddef>

#include "tessera/local/device.hpp"
#include "tessera/local/stream.hpp"

namespace tessera {

struct MemoryStats {
  std::size_t bytes_in_use = 0;       // live bytes allocated through Tessera on the device
  std::size_t peak_bytes = 0;         // high-water mark of bytes_in_use
  std::size_t live_allocations = 0;   // buffers alive now
  std::size_t total_allocations = 0;  // buffers ever allocated
};
MemoryStats memory_stats(Device d);
void reset_peak_memory(Device d);

class Buffer {
 public:
  Buffer() = default;
  // Throws OutOfMemory naming the device, the requested and the free bytes.
  Buffer(std::size_t bytes, Device d);
  Buffer(std::size_t bytes, const Stream& s);  // ordered on `s`, freed on `s`
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  Device device() const noexcept { return device_; }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Device device_;
  void* stream_ = nullptr;  // cudaStream_t it was allocated on
};

// Page-locked host memory for staging (plain aligned memory in a build without CUDA).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;  // page-locked by CUDA (else plain aligned memory)
};

namespace detail {
// Copies `bytes` between any two devices, ordered on `s` (host-synchronous when either side is host
// pageable memory and the copy must finish before returning; see copy()).
void memcpy_any(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes,
                const Stream& s);
}  // namespace detail

}  // namespace tessera
