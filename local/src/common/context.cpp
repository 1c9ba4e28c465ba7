// The context stack and the default context (context.hpp).
#include "tessera/local/context.hpp"

#include <algorithm>
#include <atomic>

namespace tessera {
namespace {
std::atomic<std::uint64_t> next_id{1};
std::mutex& stack_mu() { static std::mutex m; return m; }
std::vector<Context*>& stack() { static auto* s = new std::vector<Context*>(); return *s; }
}  // namespace

Context::Context() : id_(next_id.fetch_add(1)) {
  std::lock_guard<std::mutex> lock(stack_mu());
  stack().push_back(this);
}

Context::Context(Default) : id_(next_id.fetch_add(1)), is_default_(true) {}

Context::~Context() {
  try {
    synchronize();
  } catch (...) {  // a failed device: release what can be released
  }
  release_resources();
  streams_.clear();
  std::lock_guard<std::mutex> lock(stack_mu());
  auto& s = stack();
  s.erase(std::remove(s.begin(), s.end(), this), s.end());
}

Context& Context::current() {
  {
    std::lock_guard<std::mutex> lock(stack_mu());
    if (!stack().empty()) return *stack().back();
  }
  // Leaked on purpose: destroying CUDA streams after the driver shut down at exit is an error.
  static Context* fallback = new Context(Default{});
  return *fallback;
}

bool Context::explicit_context_alive() noexcept {
  std::lock_guard<std::mutex> lock(stack_mu());
  return !stack().empty();
}

Stream& Context::stream(Device d, StreamRole role) {
  if (d.is_host()) role = StreamRole::compute;  // the host has one (always idle) stream
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto& s = streams_[{d, role}];
  // Transfer and comm streams run NCCL kernels beside the compute stream's: high priority, so that
  // their blocks get SMs as soon as any free up rather than after a long compute grid's last block.
  if (!s) s = std::make_unique<Stream>(d, role == StreamRole::compute ? Stream::Priority::normal : Stream::Priority::high);
  return *s;
}

void Context::synchronize() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (auto& [key, s] : streams_) s->synchronize();
}

void Context::release_resources() {
  std::vector<std::pair<std::type_index, std::shared_ptr<void>>> old;
  {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    old.swap(resources_);
  }
  while (!old.empty()) old.pop_back();  // newest first, outside the lock (they may use streams)
}

}  // namespace tessera
