// Streams, events and device guards, backend-neutral: the device's runtime (detail/
// device_runtime.hpp) does the work. Default streams belong to the current Context.
#include "tessera/local/stream.hpp"

#include <mutex>
#include <set>
#include <utility>

#include "../detail/device_runtime.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
namespace {
const detail::DeviceRuntime& rt(Device d) { return detail::device_runtime(d.kind()); }

// Native handles of live streams: a buffer that outlives its stream is freed without one.
std::mutex& live_mu() { static std::mutex m; return m; }
// A multiset: a caller's stream may be borrowed by several Stream values at once.
std::multiset<void*>& live() { static auto* s = new std::multiset<void*>(); return *s; }
}  // namespace

namespace detail {
bool stream_alive(void* native) {
  if (!native) return false;
  std::lock_guard<std::mutex> lock(live_mu());
  return live().count(native) > 0;
}
}  // namespace detail

Stream::Stream(Device d, Priority priority) : device_(d) {
  check_device_usable(d);
  handle_ = rt(d).stream_create(d.index(), priority == Priority::high);
  if (handle_) {
    std::lock_guard<std::mutex> lock(live_mu());
    live().insert(handle_);
  }
}

Stream Stream::borrow(Device d, void* native) {
  if (native) {
    std::lock_guard<std::mutex> lock(live_mu());
    live().insert(native);
  }
  return Stream(d, native, false);
}

Stream::~Stream() {
  if (!handle_) return;
  {
    std::lock_guard<std::mutex> lock(live_mu());
    const auto it = live().find(handle_);
    if (it != live().end()) live().erase(it);
  }
  if (owned_) rt(device_).stream_destroy(device_.index(), handle_);
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

Stream& Stream::default_for(Device d) { return Context::current().stream(d, StreamRole::compute); }

void Stream::synchronize() const { rt(device_).stream_synchronize(device_.index(), handle_); }

void Stream::wait_for(const Stream& other) const {
  if (other.device_.is_host() || (other.device_ == device_ && other.handle_ == handle_)) return;  // also this stream
  Event e(other.device_);
  e.record(other);
  e.wait_on(*this);
}

Event::Event(Device d) : device_(d) {
  check_device_usable(d);
  handle_ = rt(d).event_create(d.index());
}

Event::~Event() {
  if (handle_) rt(device_).event_destroy(handle_);
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
  host_time_ = std::chrono::steady_clock::now();
  if (handle_) rt(device_).event_record(device_.index(), handle_, s.native());
}

void Event::wait_on(const Stream& s) const {
  if (!handle_) return;  // a host event has always happened
  if (s.device().kind() == device_.kind()) return rt(device_).stream_wait_event(s.device().index(), s.native(), handle_);
  synchronize();  // a stream of another kind (the host's) waits by blocking
}

void Event::synchronize() const {
  if (handle_) rt(device_).event_synchronize(handle_);
}

float Event::elapsed_ms_since(const Event& start) const {
  if (start.device_ != device_)
    throw DeviceMismatch("Event::elapsed_ms_since: events on " + start.device_.str() + " and " + device_.str(), device_);
  if (handle_) return rt(device_).event_elapsed_ms(start.handle_, handle_);
  return std::chrono::duration<float, std::milli>(host_time_ - start.host_time_).count();
}

DeviceGuard::DeviceGuard(Device d) {
  check_device_usable(d);
  if (!d.is_cuda()) return;
  const auto& r = rt(d);
  previous_ = r.current_device();
  if (previous_ != d.index()) r.set_current_device(d.index());
  kind_ = d.kind();
}

DeviceGuard::~DeviceGuard() {
  if (previous_ < 0) return;
  try {
    detail::device_runtime(kind_).set_current_device(previous_);
  } catch (...) {
  }
}

}  // namespace tessera
