// Memory. Device buffers are allocated stream-ordered (cudaMallocAsync) from the device's default
// memory pool, whose release threshold keeps freed blocks for reuse; host buffers are 64-byte
// aligned; pinned buffers stage host<->device transfers. Never managed memory.
#pragma once
#include <cstddef>
#include <memory>

#include "tessera/local/device.hpp"
#include "tessera/local/stream.hpp"

namespace tessera {

/// Allocation counters of one device (see memory_stats()).
struct MemoryStats {
  std::size_t bytes_in_use = 0;       // live bytes allocated through Tessera on the device
  std::size_t peak_bytes = 0;         // high-water mark of bytes_in_use
  std::size_t live_allocations = 0;   // buffers alive now
  std::size_t total_allocations = 0;  // buffers ever allocated
};
/// The allocation counters of device `d`.
MemoryStats memory_stats(Device d);
/// Resets `d`'s peak_bytes to its current bytes_in_use.
void reset_peak_memory(Device d);

/// An owning, untyped allocation on one device; move-only.
class Buffer {
 public:
  /// An empty buffer (no memory).
  Buffer() = default;
  /// `bytes` bytes on `d`, ordered on d's default stream.
  /// Throws OutOfMemory naming the device, the requested and the free bytes.
  Buffer(std::size_t bytes, Device d);
  /// `bytes` bytes on s's device, allocated and freed in the order of `s`.
  Buffer(std::size_t bytes, const Stream& s);  // ordered on `s`, freed on `s`
  /// Move-only; the destructor frees the memory (stream-ordered).
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// The memory (null if empty), its size in bytes and its device.
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

/// Page-locked host memory for staging (plain aligned memory in a build without CUDA).
class PinnedBuffer {
 public:
  /// An empty buffer (no memory).
  PinnedBuffer() = default;
  /// `bytes` bytes of page-locked host memory.
  explicit PinnedBuffer(std::size_t bytes);
  /// Move-only; the destructor frees the memory.
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  /// The memory (null if empty) and its size in bytes.
  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;  // page-locked by CUDA (else plain aligned memory)
};

/// Page-locked host memory of at least `bytes` from the current Context's pool, for staging device
/// data (collectives through host memory, file formats). Pinning costs about a second per GiB, so
/// a released block goes back to the pool and the next request takes the smallest free block that
/// fits; the pool, and what it keeps, ends with the Context.
std::shared_ptr<PinnedBuffer> take_pinned(std::size_t bytes);

namespace detail {
// Copies `bytes` between any two devices, ordered on `s` (host-synchronous when either side is host
// pageable memory and the copy must finish before returning; see copy()).
void memcpy_any(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes,
                const Stream& s);
}  // namespace detail

}  // namespace tessera
