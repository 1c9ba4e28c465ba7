#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../detail/scale.hpp"
#include "tessera/local/cuda_check.hpp"

namespace tessera::distributed::detail {
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
void scale_cuda(Real* data, std::size_t n, double factor, int device, void* stream) {
  if (n == 0) return;
  int prev = 0;
  TESSERA_CHECK_CUDA(cudaGetDevice(&prev));
  if (prev != device) TESSERA_CHECK_CUDA(cudaSetDevice(device));
  int sms = 0;
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  constexpr int threads = 256;
  const std::size_t want = (n * sizeof(Real) / 16 + threads - 1) / threads + 1;
  const int blocks = static_cast<int>(want < std::size_t(sms) * 8 ? want : std::size_t(sms) * 8);
  using Vec = std::conditional_t<sizeof(Real) == 4, float4, double2>;
  const std::size_t skew = (16 - reinterpret_cast<std::uintptr_t>(data) % 16) % 16 / sizeof(Real);
  const std::size_t head = skew < n ? skew : n;  // elements before the first 16-byte boundary
  scale_kernel<Real, Vec><<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(data, n, head,
                                                                                      static_cast<Real>(factor));
  const cudaError_t e = cudaGetLastError();
  if (prev != device) TESSERA_CHECK_CUDA(cudaSetDevice(prev));
  TESSERA_CHECK_CUDA(e);
}

template void scale_cuda<float>(float*, std::size_t, double, int, void*);
template void scale_cuda<double>(double*, std::size_t, double, int, void*);

}  // namespace tessera::distributed::detail
