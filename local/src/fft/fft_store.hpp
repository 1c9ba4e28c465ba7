// Internal: the factor a store-multiplying FFT plan applies to each output element, in one form
// for the cuFFT LTO store callbacks (fft_callbacks.cu, compiled to LTO-IR on its own),
// the GPU fallback pass and the FFTW loop. Plain C arrays: this header is also compiled as C++17
// by the callback build, without the library's other headers.
#pragma once

#ifdef __CUDACC__
#define TESSERA_STORE_HD __host__ __device__ __forceinline__
#else
#define TESSERA_STORE_HD inline
#endif

namespace tessera::local::fft::detail {

// Mirrors StoreMultiply (fft_plan.hpp), flattened for the device.
struct StoreParams {
  double scale;
  int kind;   // 0: scale only, 1: inverse Laplacian, 2: Laplacian
  int dims;   // axes of `block`
  long long block[4], lo[4], n[4];
  int half[4];
  double k[4];
  long long offset;
  // Blocks of fewer than 2^31 elements (fast != 0): positions split into indices by 32-bit
  // multiply-high divisions (mul/shift per axis, set by set_fast_division), not 64-bit divides:
  // three of those per element cost a Poisson solve's callback more than a pass over the data.
  int fast;
  unsigned mul[4];
  int shift[4];
};

// Division of n < 2^31 by d in [1, 2^31) as (mulhi(n, m) + n) >> s, m and s chosen here
// (round-up multiplier: l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1, s = l).
inline void set_fast_division(StoreParams& p) {
  long long total = 1;
  for (int a = 0; a < p.dims; ++a) total *= p.block[a];
  p.fast = p.dims > 0 && total < (1ll << 31) && p.offset >= 0;
  for (int a = 0; a < 4; ++a) {
    const unsigned long long d = static_cast<unsigned long long>(p.block[a] > 0 ? p.block[a] : 1);
    int l = 0;
    while ((1ull << l) < d) ++l;
    p.shift[a] = l;
    p.mul[a] = p.fast ? static_cast<unsigned>(((1ull << 32) * ((1ull << l) - d)) / d + 1) : 0;
  }
}

TESSERA_STORE_HD unsigned fast_div(unsigned n, unsigned m, int s) {
#ifdef __CUDA_ARCH__
  return (__umulhi(n, m) + n) >> s;
#else
  return static_cast<unsigned>(((static_cast<unsigned long long>(n) * m >> 32) + n) >> s);
#endif
}

// The frequency index of global index k along an axis of n points: numpy.fft.fftfreq's order,
// rfftfreq's (k itself) where `half`.
TESSERA_STORE_HD long long store_frequency(long long k, long long n, bool half) {
  return !half && 2 * k >= n ? k - n : k;
}

// The wavenumber of index i (in the block) along axis a.
TESSERA_STORE_HD double store_wavenumber(const StoreParams& p, int a, long long i) {
  return p.k[a] * static_cast<double>(store_frequency(p.lo[a] + i, p.n[a], p.half[a] != 0));
}

// |k|^2 of the element at memory offset `off` from the output pointer, over every axis but `skip`.
TESSERA_STORE_HD double store_k2(const StoreParams& p, unsigned long long off, int skip = -1) {
  double k2 = 0;
  long long pos = p.offset + static_cast<long long>(off);
  for (int a = p.dims - 1; a >= 0; --a) {
    const long long q = p.fast ? fast_div(static_cast<unsigned>(pos), p.mul[a], p.shift[a]) : pos / p.block[a];
    const long long i = pos - q * p.block[a];
    pos = q;
    if (p.n[a] == 0 || a == skip) continue;
    const double w = store_wavenumber(p, a, i);
    k2 += w * w;
  }
  return k2;
}

// The factor of a store of kind `kind` (StoreParams::kind) at squared wavenumber k2, in T (the axis
// pass's float kernels take it in float).
template <class T = double>
TESSERA_STORE_HD T store_factor_of(int kind, T scale, T k2) {
  if (kind == 0) return scale;
  if (kind == 1) return k2 > T(0) ? -scale / k2 : T(0);
  return -scale * k2;
}

// The factor of the element at memory offset `off` from the output pointer of one execution.
TESSERA_STORE_HD double store_factor(const StoreParams& p, unsigned long long off) {
  if (p.kind == 0) return p.scale;
  return store_factor_of(p.kind, p.scale, store_k2(p, off));
}

}  // namespace tessera::local::fft::detail
