// Reused byte buffers for the chunk pipeline (codec outputs, chunk files read for decoding).
// glibc serves a block over 32 MiB by mmap and unmaps it on free, so a fresh buffer per chunk per
// call page-faults (and zero-fills) all of it again, and the faults and unmaps of many threads of
// one process serialize on its memory map. A PooledBytes is not initialised; when it dies, a
// buffer of at least `min` bytes goes back to a process-wide pool that keeps at most `keep` bytes
// (the least recently returned are freed first). Header-only: the fuzz targets build
// zarr_codecs.cpp alone.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::io::detail {

struct BytePoolBounds {
  std::size_t keep = 0, min = 0;
};

class BytePool {
 public:
  static BytePool& get() {
    static BytePool* p = new BytePool;  // never destroyed: buffers dying at exit still find it
    return *p;
  }
  // A buffer of at least n bytes; n becomes its capacity.
  std::unique_ptr<char[]> take(std::size_t& n) {
    std::unique_lock<std::mutex> lock(m_);
    if (n >= b_.min) {
      auto best = free_.end();  // the smallest that fits and wastes at most half
      for (auto f = free_.begin(); f != free_.end(); ++f)
        if (f->cap >= n && f->cap / 2 <= n && (best == free_.end() || f->cap < best->cap)) best = f;
      if (best != free_.end()) {
        auto buf = std::move(best->buf);
        n = best->cap, kept_ -= n;
        free_.erase(best);
        return buf;
      }
      n = size_class(n);  // rounded up, so that a slightly larger request later fits
    }
    lock.unlock();
    try {
      return std::make_unique_for_overwrite<char[]>(n);
    } catch (const std::bad_alloc&) {
      trim(0);  // what the pool keeps may be what is missing
      return std::make_unique_for_overwrite<char[]>(n);
    }
  }
  void give(std::unique_ptr<char[]> buf, std::size_t cap) noexcept {
    std::vector<Free> drop;  // freed (unmapped) after the lock
    std::lock_guard<std::mutex> lock(m_);
    if (cap < b_.min) return;
    try {
      free_.push_back(Free{std::move(buf), cap});
      kept_ += cap;
    } catch (...) {  // not kept
    }
    evict(b_.keep, drop);
  }
  void set_bounds(BytePoolBounds b) noexcept {
    std::vector<Free> drop;
    std::lock_guard<std::mutex> lock(m_);
    b_ = b;
    evict(b_.keep, drop);
  }
  BytePoolBounds bounds() const {
    std::lock_guard<std::mutex> lock(m_);
    return b_;
  }
  std::size_t kept() const {
    std::lock_guard<std::mutex> lock(m_);
    return kept_;
  }
  void trim(std::size_t keep) noexcept {
    std::vector<Free> drop;
    std::lock_guard<std::mutex> lock(m_);
    evict(keep, drop);
  }

 private:
  struct Free {
    std::unique_ptr<char[]> buf;
    std::size_t cap;
  };
  // Default bounds: an eighth of the memory, within [256 MiB, 4 GiB]; from 1 MiB (smaller blocks
  // stay in malloc's heap).
  BytePool() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    const std::size_t mem = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
    b_ = {std::clamp<std::size_t>(mem / 8, std::size_t(256) << 20, std::size_t(4) << 30), std::size_t(1) << 20};
  }
  // 16 classes per octave (at most 1/16 more than asked; untouched pages cost nothing).
  static std::size_t size_class(std::size_t n) {
    const std::size_t step = std::size_t(1) << std::max(0, static_cast<int>(std::bit_width(n)) - 5);
    const std::size_t r = (n + step - 1) / step * step;
    return r < n ? n : r;
  }
  // Under the lock: the oldest go to `out` (freed by the caller after unlocking) until at most
  // `keep` bytes are kept.
  void evict(std::size_t keep, std::vector<Free>& out) noexcept {
    while (!free_.empty() && kept_ > keep) {
      kept_ -= free_.front().cap;
      try {
        out.push_back(std::move(free_.front()));
      } catch (...) {  // freed here instead
      }
      free_.erase(free_.begin());
    }
  }
  mutable std::mutex m_;
  std::vector<Free> free_;  // in the order returned
  std::size_t kept_ = 0;
  BytePoolBounds b_;
};

// n bytes (uninitialised) from the pool, returned to it when the handle dies. Moves keep data()
// where it is, so views of it stay valid.
class PooledBytes {
 public:
  PooledBytes() = default;
  explicit PooledBytes(std::size_t n) : cap_(n), size_(n) {
    if (n > 0) buf_ = BytePool::get().take(cap_);
  }
  PooledBytes(PooledBytes&& o) noexcept
      : buf_(std::move(o.buf_)), cap_(std::exchange(o.cap_, 0)), size_(std::exchange(o.size_, 0)) {}
  PooledBytes& operator=(PooledBytes&& o) noexcept {
    if (this != &o) {
      release();
      buf_ = std::move(o.buf_), cap_ = std::exchange(o.cap_, 0), size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~PooledBytes() { release(); }
  char* data() noexcept { return buf_.get(); }
  const char* data() const noexcept { return buf_.get(); }
  std::size_t size() const noexcept { return size_; }
  std::string_view view() const noexcept { return {buf_.get(), size_}; }
  // Keeps the first n bytes (n <= size()): what a codec wrote into a buffer of its bound.
  void shrink(std::size_t n) noexcept { size_ = std::min(n, size_); }

 private:
  void release() noexcept {
    if (buf_) BytePool::get().give(std::move(buf_), cap_);
    cap_ = size_ = 0;
  }
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0, size_ = 0;
};

}  // namespace tessera::io::detail
