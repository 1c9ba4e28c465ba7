// Helpers shared by the comm tests: a scoped environment variable; buffers on a device filled from
// and read back into host vectors (plain C++: device memory through tessera APIs); and serial
// references built from values that every rank can compute for any rank.
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/local/config.hpp"
#include "tessera/local/device.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/settings.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::testing {

inline int world_rank() { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
inline int world_size() { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }

// Sets an environment variable for one scope.
// Sets an environment variable for a scope and re-reads the settings (as a Runtime start would);
// restores both after. A value the settings refuse throws their InvalidArgument, leaving nothing set.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (auto old = tessera::config::environment_value(name)) old_ = *old, had_ = true;
    setenv(name, value, 1);
    try {
      tessera::config::install_all();
    } catch (...) {
      restore();
      throw;
    }
  }
  ~ScopedEnv() { restore(); }
  void restore() {
    had_ ? (void)setenv(name_, old_.c_str(), 1) : (void)unsetenv(name_);
    tessera::config::install_all();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// Host storage for T; bool is kept one byte per element (std::vector<bool> is packed).
template <class T>
using HostVec = std::vector<std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>>;

// n elements of T on a device; copies to and from the host go through the device's default
// stream, so they are ordered after collectives enqueued there, and download() synchronizes.
template <class T>
class DeviceVec {
 public:
  DeviceVec(std::size_t n, Device d) : n_(n), dev_(d), buf_(std::max<std::size_t>(n, 1) * sizeof(T), d) {}
  DeviceVec(const HostVec<T>& h, Device d) : DeviceVec(h.size(), d) { upload(h); }

  T* data() const { return static_cast<T*>(buf_.data()); }
  std::size_t size() const { return n_; }
  void upload(const HostVec<T>& h) {
    if (n_) detail::memcpy_any(buf_.data(), dev_, h.data(), Device::host(), n_ * sizeof(T), stream());
  }
  HostVec<T> download() const {
    HostVec<T> h(n_);
    if (n_) detail::memcpy_any(h.data(), Device::host(), buf_.data(), dev_, n_ * sizeof(T), stream());
    return h;
  }

 private:
  Stream& stream() const { return Stream::default_for(dev_); }
  std::size_t n_;
  Device dev_;
  Buffer buf_;
};

// ---- serial references ----
// Small nonzero values, exact in every type: sums and products over a few ranks are then exact
// in any order, so reductions compare exactly, floats included.
template <class T>
T val(int r, std::size_t i) {
  const int k = static_cast<int>((r * 5 + (i % 1000) * 3) % 4) + 1;
  const int v = (r + i) % 3 == 0 ? -k : k;
  if constexpr (std::is_same_v<T, bool>) return (r + i) % 3 == 0;
  else if constexpr (is_complex_v<T>) return T(0.5 * v, 0.25 * val<int>(r + 1, i));
  else return T(std::is_floating_point_v<T> ? 0.5 * v : v);
}
// A value naming its origin, for data movement: rank r's element i (never the sentinel).
template <class T>
T id(int r, std::size_t i) {
  if constexpr (is_complex_v<T>) return T(r * 1000 + i + 1, -r);
  else return T(r * 1000 + i + 1);
}
template <class T> const T sentinel = T(-7);

// One step of a reduction; bool reduces as or (sum, max) and as and (prod, min).
template <class T>
T fold(comm::ReduceOp op, T a, T b) {
  using enum comm::ReduceOp;
  if constexpr (std::is_same_v<T, bool>) return op == sum || op == max ? a || b : a && b;
  else if constexpr (is_complex_v<T>) return a + b;  // complex reduces with sum only
  else return op == sum ? a + b : op == prod ? a * b : op == min ? std::min(a, b) : std::max(a, b);
}
template <class T>
HostVec<T> values(int r, std::size_t n, std::size_t from = 0) {
  HostVec<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = val<T>(r, from + i);
  return v;
}
template <class T>
HostVec<T> ids(int r, std::size_t n) {
  HostVec<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = id<T>(r, i);
  return v;
}
// Elements [from, from + n) reduced over ranks 0..size-1, serially.
template <class T>
HostVec<T> reduced(comm::ReduceOp op, int size, std::size_t n, std::size_t from = 0) {
  HostVec<T> out = values<T>(0, n, from);
  for (int r = 1; r < size; ++r)
    for (std::size_t i = 0; i < n; ++i) out[i] = fold<T>(op, out[i], val<T>(r, from + i));
  return out;
}

template <class T>
void expect_equal(const HostVec<T>& got, const HostVec<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]) && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " wrong, first at " << first;
}
// Rank 0's ids, then rank 1's, ... (n each): what a gather of ids(r, n) yields.
template <class T>
HostVec<T> all_ids(int size, std::size_t n) {
  HostVec<T> v;
  for (int r = 0; r < size; ++r) for (auto x : ids<T>(r, n)) v.push_back(x);
  return v;
}
// Packs blocks of counts[q] elements with a one-element gap before each: nonzero displacements.
inline std::vector<std::size_t> gapped(const std::vector<std::size_t>& counts, std::size_t& total) {
  std::vector<std::size_t> displs(counts.size());
  total = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) displs[q] = total + 1, total += counts[q] + 1;
  return displs;
}

}  // namespace tessera::testing
