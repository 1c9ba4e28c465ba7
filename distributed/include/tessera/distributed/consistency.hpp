// Consistency mode: before each distributed operation the ranks of the layout's group check that
// they all call the same operation on the same element type, device kind, global shape and layout
// (and the same root, target layout, slice box, path ... where the operation has one). Off by
// default; on with TESSERA_CHECK=1 in the environment or set_consistency_checks(true).
//
// Cost: one all-reduce of two 64-bit integers (the min and max of a hash of the call) per
// operation, on the host, under the group's deadline. On a mismatch a second all-gather of each
// rank's description lets every rank throw ConsistencyError naming the operation and which ranks
// called what, instead of hanging in mismatched collectives or corrupting memory. While on, every
// checked operation is collective over its group (even a reduction along an unsplit axis).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/local/dtype.hpp"
#include "tessera/local/error.hpp"

namespace tessera::distributed {

/// Ranks called a distributed operation with different arguments (consistency mode).
class ConsistencyError : public Error { using Error::Error; };

/// Turns the checks on or off for this process (every rank must agree). The initial setting is
/// TESSERA_CHECK (on unless unset, empty or "0").
void set_consistency_checks(bool on);
/// True while the checks are on.
bool consistency_checks() noexcept;

/// A description of one call; its hash is what the ranks compare.
class CallSignature {
 public:
  /// The operation, element type and device kind.
  CallSignature(std::string_view op, DType t, const Device& d);
  /// Appends one argument that must agree (a value, a layout, a box).
  CallSignature& add(std::string_view key, std::string_view value);
  CallSignature& add(std::string_view key, long long value);
  template <int R>
  CallSignature& add(std::string_view key, const Layout<R>& l) {
    std::string p;
    for (int a = 0; a < R; ++a) p += l.periodic()[a] ? '1' : '0';
    return add(key, l.str() + ", periodic " + p);
  }
  template <int R>
  CallSignature& add(std::string_view key, const Box<R>& b) { return add(key, b.str()); }
  /// The operation, the whole description, and its hash.
  const std::string& op() const noexcept { return op_; }
  const std::string& text() const noexcept { return text_; }
  std::uint64_t hash() const noexcept;

 private:
  std::string op_, text_;
};

/// Collective over `g`: returns if every rank passed an equal signature, else throws
/// ConsistencyError on every rank.
void check_consistent(const comm::ProcessGroup& g, const CallSignature& s);

/// While a checked operation runs, the operations it calls inside (an FFT's redistribute, a
/// checkpoint's save_zarr) are not checked again: their arguments follow from the checked ones,
/// and some are called by only part of the ranks (a local-only redistribute, for instance).
class [[nodiscard]] CheckScope {
 public:
  /// Marks a checked operation in progress on this thread while alive (if `active`).
  explicit CheckScope(bool active) noexcept : active_(active) {
    if (active_) ++depth();
  }
  ~CheckScope() {
    if (active_) --depth();
  }
  CheckScope(const CheckScope&) = delete;
  CheckScope& operator=(const CheckScope&) = delete;
  /// This thread's number of checked operations in progress.
  static int& depth() noexcept;

 private:
  bool active_;
};

namespace detail {
// Adds (key, value) pairs in order.
inline void add_pairs(CallSignature&) {}
template <class K, class V, class... Rest>
void add_pairs(CallSignature& s, const K& key, const V& value, const Rest&... rest) {
  if constexpr (std::is_integral_v<V> || std::is_enum_v<V>) s.add(key, static_cast<long long>(value));
  else s.add(key, value);
  add_pairs(s, rest...);
}
}  // namespace detail

/// The one-line hook at the start of an operation, kept for its duration:
///   const auto agreed = check_call<T, R>("gather", a.layout(), a.device(), "root", root);
/// op name, element type, the (first) layout and the device, plus key/value pairs that must agree
/// too. Does nothing unless checks are on (or inside another checked operation).
template <class T, int R, class... KV>
CheckScope check_call(std::string_view op, const Layout<R>& l, const Device& d, const KV&... kv) {
  if (!consistency_checks() || CheckScope::depth() > 0) return CheckScope(false);
  CallSignature s(op, dtype_v<T>, d);
  s.add("layout", l);
  detail::add_pairs(s, kv...);
  check_consistent(l.grid().group(), s);
  return CheckScope(true);
}

}  // namespace tessera::distributed
