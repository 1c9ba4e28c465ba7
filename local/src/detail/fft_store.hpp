// Internal: the factor a store-multiplying FFT plan applies to each output element, in one form
// for the cuFFT LTO store callbacks (src/cuda/fft_callbacks.cu, compiled to LTO-IR on its own),
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
};

// The factor of the element at memory offset `off` from the output pointer of one execution.
TESSERA_STORE_HD double store_factor(const StoreParams& p, unsigned long long off) {
  if (p.kind == 0) return p.scale;
  long long pos = p.offset + static_cast<long long>(off);
  double k2 = 0;
  for (int a = p.dims - 1; a >= 0; --a) {
    const long long i = pos % p.block[a];
    pos /= p.block[a];
    if (p.n[a] == 0) continue;
    long long k = p.lo[a] + i;
    if (!p.half[a] && 2 * k >= p.n[a]) k -= p.n[a];  // numpy.fft.fftfreq's order
    const double w = p.k[a] * static_cast<double>(k);
    k2 += w * w;
  }
  if (p.kind == 1) return k2 > 0 ? -p.scale / k2 : 0.0;
  return -p.scale * k2;
}

}  // namespace tessera::local::fft::detail
