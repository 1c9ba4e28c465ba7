// Context: everything Tessera keeps for the life of a program, owned in one place — per-device
// streams (compute, transfer, comm) and the resources the layers register (plan caches, pinned
// host pools, halo buffers, prepared communicators). A Runtime makes one and destroys it before
// MPI_Finalize; a program may also make one itself. Contexts nest: the newest live one is
// current. Without any, a process-wide default context is made on first use and lives until exit.
//
// Destruction order: wait for the context's streams, destroy the resources newest first, then
// the streams. Arrays should not outlive the context they were made in; a buffer that does is
// still freed safely (synchronously) when it goes.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <typeindex>
#include <vector>

#include "tessera/local/device.hpp"
#include "tessera/local/stream.hpp"

namespace tessera {

/// The roles of a device's streams: computation (the default stream), transfers of the exchange
/// and halo (and SUMMA) communication; the last two are high priority, so that NCCL kernels get SMs first.
enum class StreamRole { compute, transfer, comm };

class Context {
 public:
  /// A new context, current until it is destroyed (contexts must be destroyed newest first).
  Context();
  /// Waits for its streams, releases its resources (newest first) and destroys its streams.
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// The current context: the newest live one, else the process-wide default one.
  static Context& current();
  /// True while a context other than the process default exists.
  static bool explicit_context_alive() noexcept;

  /// The stream of `role` on `d`, made on first use (host: the one host stream).
  Stream& stream(Device d, StreamRole role = StreamRole::compute);
  /// A process-unique number (never reused), to key caches by context.
  std::uint64_t id() const noexcept { return id_; }

  /// The resource of type R in this context, made by `make()` (returning std::shared_ptr<R>) on
  /// first use. Layers above keep their caches here, so that they end with the context.
  template <class R, class Make>
  R& resource(Make&& make) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    for (auto& [type, ptr] : resources_)
      if (type == std::type_index(typeid(R))) return *static_cast<R*>(ptr.get());
    std::shared_ptr<R> r = make();
    resources_.emplace_back(std::type_index(typeid(R)), r);
    return *r;
  }
  /// Waits for every stream of this context.
  void synchronize();
  /// Releases every resource now (newest first); the streams stay. Runtime calls this before it
  /// shuts communicators down.
  void release_resources();

 private:
  struct Default {};
  explicit Context(Default);
  std::uint64_t id_;
  bool is_default_ = false;
  std::recursive_mutex mu_;
  std::map<std::pair<Device, StreamRole>, std::unique_ptr<Stream>> streams_;
  std::vector<std::pair<std::type_index, std::shared_ptr<void>>> resources_;  // in creation order
};

}  // namespace tessera
