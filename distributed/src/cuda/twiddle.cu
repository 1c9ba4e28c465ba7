// CUDA side of the 1-D FFT's twiddles and chirps (detail/kernels.hpp's Twiddle): one pass, the
// phase computed per element from exact integer indices (no table to read).
#include <cuda_runtime.h>

#include <complex>
#include <type_traits>

#include "../detail/kernels.hpp"
#include "../detail/twiddle_phase.hpp"
#include "tessera/local/cuda_check.hpp"

namespace tessera::distributed::detail::cuda {
namespace {

template <class Real, class V>
__global__ void twiddle_kernel(V* data, Twiddle t) {
  const long long n = t.rows * t.cols;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const double x = 2.0 / static_cast<double>(t.modulus);  // angle / pi per unit of p
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const long long r = e / t.cols, c = e - r * t.cols;
    double s, co;
    sincospi(t.sign * x * static_cast<double>(twiddle_index(t.row0, t.col0, r, c, t.modulus, t.square)), &s, &co);
    const Real fr = static_cast<Real>(t.scale * co), fi = static_cast<Real>(t.scale * s);
    V& d = data[r * (t.ld ? t.ld : t.cols) + c];
    const V v = d;
    d = V{v.x * fr - v.y * fi, v.x * fi + v.y * fr};
  }
}

}  // namespace

template <class Real>
void twiddle(std::complex<Real>* data, const Twiddle& t, void* stream) {
  const long long n = t.rows * t.cols;
  if (n <= 0) return;
  int device = 0, sms = 0;
  TESSERA_CHECK_CUDA(cudaGetDevice(&device));  // the dispatch made the stream's device current
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  constexpr int threads = 256;
  const long long want = (n + threads - 1) / threads;
  const int blocks = static_cast<int>(want < sms * 16LL ? want : sms * 16LL);
  using V = std::conditional_t<sizeof(Real) == 4, float2, double2>;
  twiddle_kernel<Real, V><<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(reinterpret_cast<V*>(data), t);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

template void twiddle<float>(std::complex<float>*, const Twiddle&, void*);
template void twiddle<double>(std::complex<double>*, const Twiddle&, void*);

}  // namespace tessera::distributed::detail::cuda
