// The apps' timers. median_ms: median over `iters` of the slowest rank's wall time (ms) of `fn`
// followed by a sync of stream `s`, after `warmup` untimed runs (0 when iters <= 0).
#pragma once
#include <tessera/comm/process_group.hpp>
#include <tessera/local/stream.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

namespace apps {

// The median of the samples (the upper one of an even count); 0 for none.
inline double median(std::vector<double> t) {
  if (t.empty()) return 0;
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

inline double median_ms(tessera::comm::ProcessGroup& g, const tessera::Stream& s, int warmup, int iters,
                        const std::function<void()>& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  s.synchronize();
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    g.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    s.synchronize();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    t.push_back(g.all_reduce(ms, tessera::comm::ReduceOp::max));
  }
  return median(std::move(t));
}

}  // namespace apps
