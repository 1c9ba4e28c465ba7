// ContextCache: values made once per key and kept in the current Context (plans, grids, transports,
// halo buffers), so that they end with it, before MPI and the CUDA driver do. One class for every
// cache of the layers, with the same locking, the same race rule and the same statistics.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/local/context.hpp"

namespace tessera {

/// Hits, misses and entries of one cache.
struct CacheStats {
  std::size_t hits = 0;
  std::size_t misses = 0;
  std::size_t entries = 0;
  /// "hits H, misses M, entries N".
  std::string str() const {
    return "hits " + std::to_string(hits) + ", misses " + std::to_string(misses) + ", entries " + std::to_string(entries);
  }
};

/// The values of one kind, by key, in a Context. `Tag` names the cache (two caches with the same
/// key and value types stay apart); keys are ordered (std::map), or hashed by `Hash` where one is
/// given. With a `Capacity`, a miss that makes the cache larger drops the least recently used
/// values that nobody else holds until it fits (a value in use is never dropped).
///
/// `get(key, make)` returns the value for key, calling `make()` (returning std::shared_ptr<V>) on
/// a miss outside the lock, so that a slow or collective make (a plan, a communicator) neither
/// blocks other lookups nor runs under a lock another rank's progress may need; where two threads
/// miss at once, the first value stored wins and both get it.
template <class Tag, class K, class V, std::size_t Capacity = 0, class Hash = void>
class ContextCache {
  struct Slot {
    std::shared_ptr<V> value;
    std::size_t used = 0;  // the lookup count when last used
  };
  using Map = std::conditional_t<std::is_void_v<Hash>, std::map<K, Slot>,
                                 std::unordered_map<K, Slot, std::conditional_t<std::is_void_v<Hash>, std::hash<K>, Hash>>>;

 public:
  /// This cache of the current Context, made on first use.
  static ContextCache& current() {
    return Context::current().resource<ContextCache>([] { return std::make_shared<ContextCache>(); });
  }

  template <class Make>
  std::shared_ptr<V> get(const K& key, Make&& make) {
    if (auto hit = find(key)) return hit;
    std::shared_ptr<V> made = make();
    std::vector<std::shared_ptr<V>> dropped;  // destroyed outside the lock
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = values_.try_emplace(key, Slot{std::move(made), hits_ + misses_});
    std::shared_ptr<V> value = it->second.value;
    if (inserted) drop_to_capacity(dropped);
    return value;
  }

  /// The value for key if there is one (counted as a hit or a miss), else null.
  std::shared_ptr<V> find(const K& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = values_.find(key);
    if (it == values_.end()) {
      ++misses_;
      return nullptr;
    }
    it->second.used = ++hits_ + misses_;
    return it->second.value;
  }

  /// Drops every value (those still held elsewhere live on with their holders); the statistics stay.
  void clear() {
    Map old;
    {
      std::lock_guard<std::mutex> lock(mu_);
      old.swap(values_);
    }  // destroyed outside the lock: a value's destructor may take other locks
  }

  /// Calls f(key, value) for each entry, under the lock (f must not use this cache).
  template <class F>
  void for_each(F&& f) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, slot] : values_) f(k, *slot.value);
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return values_.size();
  }
  CacheStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {hits_, misses_, values_.size()};
  }

 private:
  void drop_to_capacity(std::vector<std::shared_ptr<V>>& dropped) {
    if constexpr (Capacity > 0) {
      while (values_.size() > Capacity) {
        auto oldest = values_.end();
        for (auto it = values_.begin(); it != values_.end(); ++it)
          if (it->second.value.use_count() == 1 && (oldest == values_.end() || it->second.used < oldest->second.used))
            oldest = it;
        if (oldest == values_.end()) return;  // every value is in use
        dropped.push_back(std::move(oldest->second.value));
        values_.erase(oldest);
      }
    }
  }

  mutable std::mutex mu_;
  Map values_;
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace tessera
