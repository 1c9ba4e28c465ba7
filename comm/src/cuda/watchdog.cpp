#include "watchdog.hpp"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <thread>
#include <vector>
#include <algorithm>

#include "tessera/local/cuda_check.hpp"

namespace tessera::comm::detail {

using State = ProcessGroup::State;

namespace {

struct Entry {
  State* st;
  int device;
  cudaEvent_t event;
  Clock::time_point start, deadline;
  Call call;
};

class Watchdog {
 public:
  ~Watchdog() { stop(); }

  void follow(State& st, int device, cudaStream_t stream, const Call& c) {
    cudaEvent_t ev = take_event(device);
    TESSERA_CHECK_CUDA(cudaEventRecord(ev, stream));
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back({&st, device, ev, now, now + seconds(st.timeout.load()), c});
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }

  bool drain(State& st) {
    const auto deadline = Clock::now() + seconds(st.timeout.load());
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        bool pending = false, bad = false;
        for (auto it = entries_.begin(); it != entries_.end();) {
          if (it->st != &st) { ++it; continue; }
          const cudaError_t q = query(*it);
          if (q == cudaErrorNotReady) { pending = true; ++it; continue; }
          bad = bad || q != cudaSuccess;
          recycle(*it);
          it = entries_.erase(it);
        }
        if (bad || (pending && (Clock::now() >= deadline || st.failed.load()))) {
          forget_locked(st);
          return false;
        }
        if (!pending) return true;
      }
      std::this_thread::yield();
    }
  }

  void set_poll(std::function<std::vector<AsyncFailure>()> p) {
    std::lock_guard<std::mutex> lock(mu_);
    poll_ = std::move(p);
  }

  void fail_async(const std::vector<AsyncFailure>& failures) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_async_locked(failures);
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
  }

 private:
  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  cudaError_t query(const Entry& e) {
    cudaSetDevice(e.device);  // events belong to their device's context
    const cudaError_t q = cudaEventQuery(e.event);
    if (q != cudaSuccess && q != cudaErrorNotReady) cudaGetLastError();  // do not leave it for others
    return q;
  }
  cudaEvent_t take_event(int device) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& pool = pool_[device];
      if (!pool.empty()) {
        cudaEvent_t e = pool.back();
        pool.pop_back();
        return e;
      }
    }
    cudaEvent_t e = nullptr;
    TESSERA_CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void recycle(const Entry& e) { pool_[e.device].push_back(e.event); }
  void forget_locked(State& st) {
    std::erase_if(aborts_, [&](const Abort& a) { return a.st == &st; });
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->st == &st) { recycle(*it); it = entries_.erase(it); }
      else ++it;
    }
  }

  void fail_async_locked(const std::vector<AsyncFailure>& failures) {
    std::string first;
    for (const auto& f : failures) {
      State& st = *f.st;
      // A group failed before (a timeout, the program's abort) reports its peers' aborts too:
      // that is not a lost peer.
      if (st.failed.load()) continue;
      const auto oldest = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.st == &st; });
      const std::string what = oldest != entries_.end() ? st.describe(oldest->call) : st.describe();
      forget_locked(st);
      st.fail(what + ": " + f.error);
      if (first.empty()) first = what + ": " + f.error;
    }
    // A lost peer is lost to every group: work of another group (the world's synchronize after
    // a grid's exchange) would otherwise return with its data unmoved, or wait for the deadline.
    if (!first.empty()) nccl_fail_every_group("a peer was lost in another group of this process: " + first);
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(20));
      if (stopping_) break;
      const auto now = Clock::now();
      for (auto it = entries_.begin(); it != entries_.end();) {
        const cudaError_t q = query(*it);
        if (q == cudaSuccess) { recycle(*it); it = entries_.erase(it); continue; }
        if (q == cudaErrorNotReady && now < it->deadline) { ++it; continue; }
        State& st = *it->st;
        const Call call = it->call;
        const double waited = std::chrono::duration<double>(now - it->start).count();
        char msg[160];
        if (q == cudaErrorNotReady)
          std::snprintf(msg, sizeof msg, ": no completion after %.1f s (timeout %.1f s, TESSERA_COMM_TIMEOUT); "
                        "NCCL communicator aborted shortly", waited, st.timeout.load());
        else
          std::snprintf(msg, sizeof msg, ": CUDA reported %s after %.1f s", cudaGetErrorName(q), waited);
        forget_locked(st);  // its other entries go with it
        it = entries_.begin();
        if (q == cudaErrorNotReady) {
          // Fail now, abort later: a peer's abort can let this collective finish, with garbage,
          // on ranks whose own deadline is a moment away; they must see the failure first.
          st.fail(st.describe(call) + msg, false);
          aborts_.push_back({&st, now + seconds(std::min(st.timeout.load(), 10.0))});
        } else {
          st.fail(st.describe(call) + msg);
        }
      }
      for (auto a = aborts_.begin(); a != aborts_.end();) {
        if (now < a->at) { ++a; continue; }
        nccl_abort(*a->st);  // the kernels return, the streams drain
        a = aborts_.erase(a);
      }
      if (poll_) fail_async_locked(poll_());
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool stopping_ = false;
  std::deque<Entry> entries_;
  struct Abort {
    State* st;
    Clock::time_point at;
  };
  std::vector<Abort> aborts_;  // failed groups whose communicators are aborted at `at`
  std::map<int, std::vector<cudaEvent_t>> pool_;
  std::function<std::vector<AsyncFailure>()> poll_;
};

Watchdog& watchdog() {
  static Watchdog w;
  return w;
}

}  // namespace

void watchdog_follow(State& st, int device, cudaStream_t stream, const Call& c) { watchdog().follow(st, device, stream, c); }
bool watchdog_drain(State& st) { return watchdog().drain(st); }
void watchdog_set_poll(std::function<std::vector<AsyncFailure>()> poll) { watchdog().set_poll(std::move(poll)); }
void watchdog_fail_async(const std::vector<AsyncFailure>& failures) { watchdog().fail_async(failures); }
void watchdog_stop() { watchdog().stop(); }

}  // namespace tessera::comm::detail
