// Precompiled fills of creation.hpp keyed by the global flat index: argument checks, the host
// loops, and the dispatch to src/cuda/creation.cu. Both evaluate the same philox.hpp functions per
// element, hence bitwise identical values on every device and for every rank count.
#include <cmath>
#include <complex>
#include <cstdint>

#include "tessera/config.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/local/philox.hpp"
#include "tessera/local/random.hpp"

namespace tessera::distributed::detail {

#if TESSERA_HAVE_CUDA
namespace cuda {  // src/cuda/creation.cu; called with m.size > 0 and the device current
template <class T> void arange_fill(T* data, const IndexMap& m, void* stream);
template <class T> void uniform_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T range, T top, void* stream);
template <class T> void normal_fill(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, void* stream);
template <class T> void integers_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, std::uint64_t range, void* stream);
}  // namespace cuda
#endif

namespace {

// Calls f(offset, global flat index) for every element of the interior, the last axis fastest.
template <class F>
void for_each_index(const IndexMap& m, F f) {
  if (m.size == 0) return;
  const int r = m.rank;
  index_t i[IndexMap::kMaxRank] = {}, off = 0, g = 0;
  for (int d = 0; d < r; ++d) g += m.lo[d] * m.gstrides[d];
  const index_t inner = r ? m.shape[r - 1] : 1, st = r ? m.strides[r - 1] : 0, gst = r ? m.gstrides[r - 1] : 0;
  for (index_t k = 0; k < m.size; k += inner) {
    for (index_t j = 0; j < inner; ++j) f(off + j * st, g + j * gst);
    for (int d = r - 2; d >= 0; --d) {  // next row: carry into the outer axes
      off += m.strides[d], g += m.gstrides[d];
      if (++i[d] < m.shape[d]) break;
      off -= i[d] * m.strides[d], g -= i[d] * m.gstrides[d], i[d] = 0;
    }
  }
}

bool on_cuda(const Stream& s, const char* fn) {
  if (!s.device().is_cuda()) return false;
  if (!TESSERA_HAVE_CUDA)
    throw BackendUnavailable(std::string("distributed::") + fn + " on " + s.device().str() + " needs the CUDA backend",
                             s.device());
  return true;
}

}  // namespace

template <class T>
void arange_fill(T* data, const IndexMap& m, const Stream& s) {
  if (m.size == 0) return;
  if (on_cuda(s, "arange")) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    cuda::arange_fill(data, m, s.native());
#endif
    return;
  }
  for_each_index(m, [&](index_t off, index_t g) { data[off] = static_cast<T>(g); });
}

// The random fills check their arguments by asking tessera::random for zero values: the same
// checks and messages as the local functions.
template <class T>
void uniform_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T high, const Stream& s) {
  random::uniform<T>(nullptr, 0, seed, 0, low, high, s);
  if (m.size == 0) return;
  const T range = high - low, top = std::nextafter(high, low);  // as random::uniform
  if (on_cuda(s, "random_uniform")) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    cuda::uniform_fill(data, m, seed, low, range, top, s.native());
#endif
    return;
  }
  for_each_index(m, [&](index_t off, index_t g) {
    data[off] = philox::uniform(philox::block_at(seed, static_cast<std::uint64_t>(g)), low, range, top);
  });
}

template <class T>
void normal_fill(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, const Stream& s) {
  random::normal<T>(nullptr, 0, seed, 0, mean, stddev, s);
  if (m.size == 0) return;
  if (on_cuda(s, "random_normal")) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    cuda::normal_fill(data, m, seed, mean, stddev, s.native());
#endif
    return;
  }
  for_each_index(m, [&](index_t off, index_t g) {
    data[off] = philox::normal(philox::block_at(seed, static_cast<std::uint64_t>(g)), mean, stddev);
  });
}

template <class T>
void integers_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T high, const Stream& s) {
  random::integers<T>(nullptr, 0, seed, 0, low, high, s);
  if (m.size == 0) return;
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  if (on_cuda(s, "random_integers")) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    cuda::integers_fill(data, m, seed, low, range, s.native());
#endif
    return;
  }
  for_each_index(m, [&](index_t off, index_t g) {
    data[off] = philox::integer(philox::block_at(seed, static_cast<std::uint64_t>(g)), low, range);
  });
}

template void arange_fill<std::int32_t>(std::int32_t*, const IndexMap&, const Stream&);
template void arange_fill<std::int64_t>(std::int64_t*, const IndexMap&, const Stream&);
template void arange_fill<float>(float*, const IndexMap&, const Stream&);
template void arange_fill<double>(double*, const IndexMap&, const Stream&);
template void arange_fill<complex64>(complex64*, const IndexMap&, const Stream&);
template void arange_fill<complex128>(complex128*, const IndexMap&, const Stream&);
template void uniform_fill<float>(float*, const IndexMap&, std::uint64_t, float, float, const Stream&);
template void uniform_fill<double>(double*, const IndexMap&, std::uint64_t, double, double, const Stream&);
template void normal_fill<float>(float*, const IndexMap&, std::uint64_t, float, float, const Stream&);
template void normal_fill<double>(double*, const IndexMap&, std::uint64_t, double, double, const Stream&);
template void integers_fill<std::int32_t>(std::int32_t*, const IndexMap&, std::uint64_t, std::int32_t, std::int32_t,
                                          const Stream&);
template void integers_fill<std::int64_t>(std::int64_t*, const IndexMap&, std::uint64_t, std::int64_t, std::int64_t,
                                          const Stream&);

}  // namespace tessera::distributed::detail
