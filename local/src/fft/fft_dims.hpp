// Internal: the size arithmetic shared by FFT plan validation (fft_plan.cpp) and the
// backends that lay out strides from the same descriptor (fft_fftw.cpp).
#pragma once
#include <array>

namespace tessera::local::fft::detail {
using Dims = std::array<long long, 3>;

// a[from] * ... * a[to - 1] (1 when empty).
inline long long product(const Dims& a, int from, int to) {
  long long p = 1;
  for (int i = from; i < to; ++i) p *= a[i];
  return p;
}
}  // namespace tessera::local::fft::detail
