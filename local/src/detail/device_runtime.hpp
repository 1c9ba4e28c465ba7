// Internal: the seam between backend-neutral code (src/common/) and a device kind's runtime —
// streams, events, memory, copies — implemented once per backend (src/host/, src/cuda/) and
// registered in src/common/backends.cpp, the only file that knows which backends were built.
// Handles are opaque (cudaStream_t / cudaEvent_t on CUDA; null on host).
#pragma once
#include <cstddef>

#include "tessera/local/device.hpp"

namespace tessera::detail {

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual void* stream_create(int device, bool high_priority) const = 0;
  virtual void stream_destroy(int device, void* s) const noexcept = 0;
  virtual void stream_synchronize(int device, void* s) const = 0;
  virtual void* event_create(int device) const = 0;
  virtual void event_destroy(void* e) const noexcept = 0;
  virtual void event_record(int device, void* e, void* s) const = 0;
  virtual void stream_wait_event(int device, void* s, void* e) const = 0;
  virtual void event_synchronize(void* e) const = 0;
  virtual float event_elapsed_ms(void* start, void* end) const = 0;
  virtual int current_device() const = 0;  // -1 where there is none (host)
  virtual void set_current_device(int device) const = 0;
  // Stream-ordered on `stream` (null: no stream is alive to order on; free synchronously).
  virtual void* allocate(std::size_t bytes, int device, void* stream) const = 0;  // OutOfMemory
  virtual void deallocate(void* p, int device, void* stream) const noexcept = 0;
  // Page-locked host memory where this backend can pin it (host backend: aligned memory).
  virtual void* allocate_pinned(std::size_t bytes) const = 0;
  virtual void free_pinned(void* p) const noexcept = 0;
  // Any-direction copy ordered on `stream` of `device`; `sync` waits for it before returning.
  virtual void copy(void* dst, const void* src, std::size_t bytes, int device, void* stream, bool sync) const = 0;
  // Fills n elements with 2*i + 1 on the device, reads them back; the number of wrong ones.
  virtual std::size_t self_test(int device, std::size_t n) const = 0;
};

// The runtime of `kind`; BackendUnavailable for a kind this build lacks.
const DeviceRuntime& device_runtime(DeviceKind kind);
// Whether page-locked memory is available (a CUDA build with a GPU).
bool pinning_available();

// The backends' implementations (src/host/, src/cuda/), for the registry only.
const DeviceRuntime& host_runtime();
const DeviceRuntime& cuda_runtime();

}  // namespace tessera::detail
