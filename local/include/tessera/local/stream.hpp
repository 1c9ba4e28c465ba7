// Streams, events and a device guard. On CUDA these wrap cudaStream_t / cudaEvent_t; on host the
// same interface runs work immediately (a host stream is always idle) and events read a clock.
#pragma once
#include <chrono>

#include "tessera/local/device.hpp"

namespace tessera {

/// A CUDA stream (on host, an always-idle stand-in) on one device; move-only.
class Stream {
 public:
  enum class Priority { normal, high };
  /// A new stream on `d` (CUDA: non-blocking with respect to the legacy default stream). A `high`
  /// priority stream's kernels are scheduled first whenever SMs free up: communication kernels
  /// (NCCL) on it are not starved by the compute kernels they are meant to overlap.
  explicit Stream(Device d, Priority priority = Priority::normal);
  /// Move-only; the destructor destroys a stream it owns.
  ~Stream();
  Stream(Stream&& o) noexcept;
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// The default (compute) stream of `d` in the current Context, made on first use; Tessera's
  /// operations use it unless given another.
  static Stream& default_for(Device d);
  /// A stream the caller owns (a cudaStream_t as void*; null is CUDA's legacy default stream),
  /// used but never destroyed: how C and Fortran callers hand Tessera their stream. Buffers
  /// allocated on it are freed in its order while a borrowing Stream lives.
  static Stream borrow(Device d, void* native);

  /// The device the stream runs on.
  Device device() const noexcept { return device_; }
  /// The cudaStream_t, as void* so that plain C++ code need not include CUDA headers; null on host.
  void* native() const noexcept { return handle_; }
  /// Blocks the host until all work queued on the stream has finished.
  void synchronize() const;
  /// Makes this stream wait, on the device and without blocking the host, for the work queued so
  /// far on `other` (nothing when they are one stream or `other` is a host stream, which is always
  /// idle; a host stream waiting for a GPU stream blocks until that work is done).
  void wait_for(const Stream& other) const;

 private:
  Stream(Device d, void* handle, bool owned) : device_(d), handle_(handle), owned_(owned) {}
  Device device_;
  void* handle_ = nullptr;
  bool owned_ = true;
};

/// A CUDA event (on host, a clock reading) for ordering streams and timing; move-only.
class Event {
 public:
  /// An event on device `d`.
  explicit Event(Device d);
  /// Move-only; the destructor destroys the event.
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Records the event at the current end of stream `s`.
  void record(const Stream& s);
  /// Makes `s` wait (on the device, without blocking the host) until this event has happened.
  void wait_on(const Stream& s) const;
  /// Blocks the host until the event has happened.
  void synchronize() const;
  /// Milliseconds from `start` to this event; both must have been recorded and completed.
  float elapsed_ms_since(const Event& start) const;
  /// The device of the event.
  Device device() const noexcept { return device_; }

 private:
  Device device_;
  void* handle_ = nullptr;
  std::chrono::steady_clock::time_point host_time_{};
};

/// Makes a device current for a scope and restores the previous one.
class DeviceGuard {
 public:
  /// Makes `d` current; the destructor restores the previous device. Non-copyable.
  explicit DeviceGuard(Device d);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  DeviceKind kind_ = DeviceKind::host;
};

}  // namespace tessera
