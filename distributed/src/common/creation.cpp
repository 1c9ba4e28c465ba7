// Precompiled fills of creation.hpp keyed by the global flat index: argument checks, then the
// device's kernel (detail/kernels.hpp). Host and CUDA evaluate the same philox.hpp functions per
// element, hence bitwise identical values on every device and for every rank count.
#include <cmath>
#include <complex>
#include <cstdint>

#include "../detail/kernels.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/random.hpp"

namespace tessera::distributed::detail {

template <class T>
void arange_fill(T* data, const IndexMap& m, const Stream& s) {
  if (m.size == 0) return;
  arange_kernel(data, m, s);
}

// The random fills check their arguments by asking tessera::random for zero values: the same
// checks and messages as the local functions.
template <class T>
void uniform_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T high, const Stream& s) {
  random::uniform<T>(nullptr, 0, seed, 0, low, high, s);
  if (m.size == 0) return;
  const T range = high - low, top = std::nextafter(high, low);  // as random::uniform
  uniform_kernel(data, m, seed, low, range, top, s);
}

template <class T>
void normal_fill(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, const Stream& s) {
  random::normal<T>(nullptr, 0, seed, 0, mean, stddev, s);
  if (m.size == 0) return;
  normal_kernel(data, m, seed, mean, stddev, s);
}

template <class T>
void integers_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T high, const Stream& s) {
  random::integers<T>(nullptr, 0, seed, 0, low, high, s);
  if (m.size == 0) return;
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  integers_kernel(data, m, seed, low, range, s);
}

#define TESSERA_ARANGE(T) template void arange_fill<T>(T*, const IndexMap&, const Stream&);
#define TESSERA_REAL_FILLS(T)                                                                  \
  template void uniform_fill<T>(T*, const IndexMap&, std::uint64_t, T, T, const Stream&);      \
  template void normal_fill<T>(T*, const IndexMap&, std::uint64_t, T, T, const Stream&);
#define TESSERA_INTEGER_FILLS(T) \
  template void integers_fill<T>(T*, const IndexMap&, std::uint64_t, T, T, const Stream&);
TESSERA_FOR_EACH_NUMERIC(TESSERA_ARANGE)
TESSERA_FOR_EACH_REAL(TESSERA_REAL_FILLS)
TESSERA_FOR_EACH_INTEGER(TESSERA_INTEGER_FILLS)

}  // namespace tessera::distributed::detail
