// Store-multiplying cuFFT plans, the parts that run as ordinary kernels: writing one execution's
// parameters into the plan's device slot (stream-ordered, so that the host never waits), and the
// fallback pass for a plan whose callback cuFFT refused.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "fft_store_cuda.hpp"
#include "tessera/local/cuda_check.hpp"

namespace tessera::local::fft::detail {
namespace {

__device__ void mul(float& v, float f) { v *= f; }
__device__ void mul(double& v, double f) { v *= f; }
__device__ void mul(float2& v, float f) { v.x *= f, v.y *= f; }
__device__ void mul(double2& v, double f) { v.x *= f, v.y *= f; }

__global__ void write_params(StoreParams* slot, StoreParams p) { *slot = p; }

// One thread per output element of the layout (batch, m[], onembed[], ostride, odist).
template <class T, class R>
__global__ void multiply(T* out, StoreLayout l, StoreParams p) {
  const long long count = l.m[0] * l.m[1] * l.m[2];
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < l.batch * count;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long rest = t % count, off = (t / count) * l.odist, inner = l.ostride;
    for (int a = l.rank - 1; a >= 0; --a) {
      off += (rest % l.m[a]) * inner;
      rest /= l.m[a];
      inner *= l.onembed[a];
    }
    mul(out[off], static_cast<R>(store_factor(p, static_cast<unsigned long long>(off))));
  }
}

// Contiguous output (the usual case): a flat pass, each element's offset its index.
template <class T, class R>
__global__ void multiply_flat(T* out, long long n, StoreParams p) {
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
       t += static_cast<long long>(gridDim.x) * blockDim.x)
    mul(out[t], static_cast<R>(p.kind == 0 ? p.scale : store_factor(p, static_cast<unsigned long long>(t))));
}

template <class T, class R>
void launch(void* out, const StoreLayout& l, const StoreParams& p, cudaStream_t s) {
  const long long n = l.batch * l.m[0] * l.m[1] * l.m[2];
  if (n == 0) return;
  const int threads = 256;
  const long long blocks = std::min<long long>((n + threads - 1) / threads, 1 << 16);
  const long long count = l.m[0] * l.m[1] * l.m[2];
  bool flat = l.ostride == 1 && (l.batch == 1 || l.odist == count);
  for (int a = 1; a < l.rank; ++a) flat = flat && l.onembed[a] == l.m[a];
  if (flat) {
    multiply_flat<T, R><<<static_cast<unsigned>(blocks), threads, 0, s>>>(static_cast<T*>(out), n, p);
    TESSERA_CHECK_CUDA(cudaGetLastError());
    return;
  }
  multiply<T, R><<<static_cast<unsigned>(blocks), threads, 0, s>>>(static_cast<T*>(out), l, p);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

}  // namespace

void store_write_params(StoreParams* slot, const StoreParams& p, cudaStream_t s) {
  write_params<<<1, 1, 0, s>>>(slot, p);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

void store_multiply_cuda(void* out, bool real, bool single, const StoreLayout& l, const StoreParams& p,
                         cudaStream_t s) {
  if (real) {
    if (single) launch<float, float>(out, l, p, s);
    else launch<double, double>(out, l, p, s);
  } else if (single) {
    launch<float2, float>(out, l, p, s);
  } else {
    launch<double2, double>(out, l, p, s);
  }
}

}  // namespace tessera::local::fft::detail
