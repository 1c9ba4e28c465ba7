// The store multiply of FFT plans applied by a loop over one execution's output (FFTW, and the
// GPU fallback's reference): the same factor as the cuFFT callbacks (detail/fft_store.hpp).
#include <complex>

#include "fft_dims.hpp"
#include "fft_store_params.hpp"

namespace tessera::local::fft::detail {
namespace {

template <class T>
void apply(const PlanDesc& d, T* out, const StoreParams& p) {
  Dims m = d.n;
  if (d.kind != Kind::c2c && d.kind != Kind::c2r) m[d.rank - 1] = m[d.rank - 1] / 2 + 1;  // r2c output
  const long long count = product(m, 0, d.rank);
#pragma omp parallel for schedule(static) if (count * d.batch > (1 << 16))
  for (long long t = 0; t < d.batch * count; ++t) {
    long long rest = t % count, off = (t / count) * d.odist, inner = d.ostride;
    for (int a = d.rank - 1; a >= 0; --a) {
      off += (rest % m[a]) * inner;
      rest /= m[a];
      inner *= d.onembed[a];
    }
    out[off] *= static_cast<decltype(std::abs(out[off]))>(store_factor(p, static_cast<unsigned long long>(off)));
  }
}

}  // namespace

void store_multiply_host(const PlanDesc& d, void* out, const StoreMultiply& m) {
  const StoreParams p = to_params(m);
  const bool single = d.precision == Precision::single;
  if (d.kind == Kind::c2r) {
    if (single) apply(d, static_cast<float*>(out), p);
    else apply(d, static_cast<double*>(out), p);
  } else if (single) {
    apply(d, static_cast<std::complex<float>*>(out), p);
  } else {
    apply(d, static_cast<std::complex<double>*>(out), p);
  }
}

}  // namespace tessera::local::fft::detail
