// CUDA side of the FFT normalization (detail/kernels.hpp): data *= factor in one pass.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../detail/kernels.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/cuda_check.hpp"

namespace tessera::distributed::detail::cuda {
namespace {

// 16-byte vectors over the aligned body; the head and tail (fewer than one vector each) by thread 0.
template <class Real, class Vec>
__global__ void scale_kernel(Real* data, std::size_t n, std::size_t head, Real f) {
  constexpr int per = sizeof(Vec) / sizeof(Real);
  const std::size_t vecs = (n - head) / per;
  Vec* v = reinterpret_cast<Vec*>(data + head);
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    Vec x = v[i];
    Real* e = reinterpret_cast<Real*>(&x);
#pragma unroll
    for (int k = 0; k < per; ++k) e[k] *= f;
    v[i] = x;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::size_t i = 0; i < head; ++i) data[i] *= f;
    for (std::size_t i = head + vecs * per; i < n; ++i) data[i] *= f;
  }
}

}  // namespace

template <class Real>
void scale(Real* data, std::size_t n, double factor, void* stream) {
  if (n == 0) return;
  int device = 0, sms = 0;
  TESSERA_CHECK_CUDA(cudaGetDevice(&device));  // the dispatch made the stream's device current
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  constexpr int threads = 256;
  const std::size_t want = (n * sizeof(Real) / 16 + threads - 1) / threads + 1;
  const int blocks = static_cast<int>(want < std::size_t(sms) * 8 ? want : std::size_t(sms) * 8);
  using Vec = std::conditional_t<sizeof(Real) == 4, float4, double2>;
  const std::size_t skew = (16 - reinterpret_cast<std::uintptr_t>(data) % 16) % 16 / sizeof(Real);
  const std::size_t head = skew < n ? skew : n;  // elements before the first 16-byte boundary
  scale_kernel<Real, Vec><<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(data, n, head,
                                                                                      static_cast<Real>(factor));
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

#define TESSERA_SCALE(T) template void scale<T>(T*, std::size_t, double, void*);
TESSERA_FOR_EACH_REAL(TESSERA_SCALE)

}  // namespace tessera::distributed::detail::cuda
