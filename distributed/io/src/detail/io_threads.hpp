// The chunk pipeline's workers: parallel_for runs f(i) for i in [0, n) on up to `threads` threads
// (the caller's among them) and returns the first failure's message, or "" (every i still runs:
// the files of a collective write are all attempted).
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "error_text.hpp"

namespace tessera::io::detail {

// The threads each of `items` pieces of work may take when they share `threads`: fewer pieces
// than threads leave the rest to each piece's codecs (Blosc encodes and decodes on threads of its own).
inline int threads_each(int threads, std::size_t items) {
  return std::max(1, threads / static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(items, 1u << 30))));
}

template <class F>
std::string parallel_for(std::size_t n, int threads, F&& f) {
  std::atomic<std::size_t> next{0};
  std::mutex m;
  std::string err;
  auto work = [&] {
    for (std::size_t i; (i = next++) < n;) {
      try {
        f(i);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m);
        if (err.empty()) err = tessera::detail::message_of(e);
      }
    }
  };
  std::vector<std::thread> pool;
  const std::size_t extra = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(threads, 1))) - (n > 0);
  for (std::size_t t = 0; t < extra; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return err;
}

}  // namespace tessera::io::detail
