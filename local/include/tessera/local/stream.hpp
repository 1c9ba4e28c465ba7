// Streams, events and a device guard. On CUDA these wrap cudaStream_t / cudaEvent_t; on host the
// same interface runs work immediately (a host stream is always idle) and events read a clock.
#pragma once
#include <chrono>

#include "tessera/local/device.hpp"

namespace tessera {

class Stream {
 public:
  enum class Priority { normal, high };
  // A new stream on `d` (CUDA: non-blocking with respect to the legacy default stream). A `high`
  // priority stream's kernels are scheduled first whenever SMs free up: communication kernels
  // (NCCL) on it are not starved by the compute kernels they are meant to overlap.
  explicit Stream(Device d, Priority priority = Priority::normal);
  ~Stream();
  Stream(Stream&& o) noexcept;
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// The default (compute) stream of `d` in the current Context, made on first use; Tessera's
  /// operations use it unless given another.
  static Stream& default_for(Device d);

  Device device() const noexcept { return device_; }
  // The cudaStream_t, as void* so that plain C++ code need not include CUDA headers; null on host.
  void* native() const noexcept { return handle_; }
  void synchronize() const;

 private:
  Stream(Device d, void* handle, bool owned) : device_(d), handle_(handle), owned_(owned) {}
  Device device_;
  void* handle_ = nullptr;
  bool owned_ = true;
};

class Event {
 public:
  explicit Event(Device d);
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(const Stream& s);
  // Makes `s` wait (on the device, without blocking the host) until this event has happened.
  void wait_on(const Stream& s) const;
  void synchronize() const;
  // Milliseconds from `start` to this event; both must have been recorded and completed.
  float elapsed_ms_since(const Event& start) const;
  Device device() const noexcept { return device_; }

 private:
  Device device_;
  void* handle_ = nullptr;
  std::chrono::steady_clock::time_point host_time_{};
};

// Makes a device current for a scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device d);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  DeviceKind kind_ = DeviceKind::host;
};

}  // namespace tessera
