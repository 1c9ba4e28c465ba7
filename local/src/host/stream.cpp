// Streams, events and device guards for both backends; the CUDA calls are in src/cuda/.
#include "tessera/local/stream.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "../detail/cuda_backend.hpp"
#include "tessera/config.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
namespace cu = detail::cuda;

Stream::Stream(Device d, Priority priority) : device_(d) {
  check_device_usable(d);
#if TESSERA_HAVE_CUDA
  if (d.is_cuda()) handle_ = cu::stream_create(d.index(), priority == Priority::high);
#else
  (void)priority;
#endif
}

Stream::~Stream() {
#if TESSERA_HAVE_CUDA
  if (owned_ && handle_) cu::stream_destroy(device_.index(), handle_);
#endif
}

Stream::Stream(Stream&& o) noexcept
    : device_(o.device_), handle_(std::exchange(o.handle_, nullptr)), owned_(o.owned_) {}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    Stream tmp(std::move(*this));
    device_ = o.device_;
    handle_ = std::exchange(o.handle_, nullptr);
    owned_ = o.owned_;
  }
  return *this;
}

Stream& Stream::default_for(Device d) {
  static std::mutex mu;
  static std::map<Device, std::unique_ptr<Stream>>* streams = new std::map<Device, std::unique_ptr<Stream>>();
  // Leaked on purpose: destroying CUDA streams after the driver shut down at exit is an error.
  std::lock_guard<std::mutex> lock(mu);
  auto& s = (*streams)[d];
  if (!s) s = std::make_unique<Stream>(d);
  return *s;
}

void Stream::synchronize() const {
#if TESSERA_HAVE_CUDA
  if (device_.is_cuda()) cu::stream_synchronize(device_.index(), handle_);
#endif
}

Event::Event(Device d) : device_(d) {
  check_device_usable(d);
#if TESSERA_HAVE_CUDA
  if (d.is_cuda()) handle_ = cu::event_create(d.index());
#endif
}

Event::~Event() {
#if TESSERA_HAVE_CUDA
  if (handle_) cu::event_destroy(device_.index(), handle_);
#endif
}

Event::Event(Event&& o) noexcept
    : device_(o.device_), handle_(std::exchange(o.handle_, nullptr)), host_time_(o.host_time_) {}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    Event tmp(std::move(*this));
    device_ = o.device_;
    handle_ = std::exchange(o.handle_, nullptr);
    host_time_ = o.host_time_;
  }
  return *this;
}

void Event::record(const Stream& s) {
  if (s.device() != device_)
    throw DeviceMismatch("Event::record: event on " + device_.str() + ", stream on " + s.device().str(), device_);
#if TESSERA_HAVE_CUDA
  if (device_.is_cuda()) return cu::event_record(device_.index(), handle_, s.native());
#endif
  host_time_ = std::chrono::steady_clock::now();
}

void Event::wait_on(const Stream& s) const {
#if TESSERA_HAVE_CUDA
  if (device_.is_cuda() && s.device().is_cuda()) return cu::stream_wait_event(s.device().index(), s.native(), handle_);
  if (device_.is_cuda()) return synchronize();  // a host stream waits by blocking
#endif
  (void)s;
}

void Event::synchronize() const {
#if TESSERA_HAVE_CUDA
  if (handle_) cu::event_synchronize(handle_);
#endif
}

float Event::elapsed_ms_since(const Event& start) const {
  if (start.device_ != device_)
    throw DeviceMismatch("Event::elapsed_ms_since: events on " + start.device_.str() + " and " + device_.str(), device_);
#if TESSERA_HAVE_CUDA
  if (handle_) return cu::event_elapsed_ms(start.handle_, handle_);
#endif
  return std::chrono::duration<float, std::milli>(host_time_ - start.host_time_).count();
}

DeviceGuard::DeviceGuard(Device d) {
#if TESSERA_HAVE_CUDA
  if (d.is_cuda()) {
    check_device_usable(d);
    previous_ = cu::current_device();
    if (previous_ != d.index()) cu::set_current_device(d.index());
  }
#else
  check_device_usable(d);
#endif
}

DeviceGuard::~DeviceGuard() {
#if TESSERA_HAVE_CUDA
  if (previous_ >= 0) {
    try {
      cu::set_current_device(previous_);
    } catch (...) {
    }
  }
#endif
}

}  // namespace tessera
