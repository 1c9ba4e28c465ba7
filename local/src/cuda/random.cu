// CUDA side of tessera::random: one grid-stride kernel, one Philox block per element, with the
// same philox.hpp conversions as the host loop (hence bitwise identical values).
#include <cuda_runtime.h>

#include <cstdint>

#include "../detail/random_cuda.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/philox.hpp"

namespace tessera::detail::cuda {
namespace {

template <class T>
struct Uniform {
  T low, range, top;
  __device__ T operator()(const philox::Block& b) const {
    return philox::uniform(b, low, range, top);
  }
};
template <class T>
struct Normal {
  T mean, stddev;
  __device__ T operator()(const philox::Block& b) const { return philox::normal(b, mean, stddev); }
};
template <class T>
struct Integer {
  T low;
  std::uint64_t range;
  __device__ T operator()(const philox::Block& b) const { return philox::integer(b, low, range); }
};

template <class T, class F>
__global__ void fill(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset, F f) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = f(philox::block_at(seed, offset + static_cast<std::uint64_t>(i)));
}

template <class T, class F>
void launch(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset, F f, void* stream) {
  constexpr int kThreads = 256;
  constexpr std::int64_t kMaxBlocks = 1 << 16;  // enough to fill any GPU; the loop does the rest
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  fill<<<static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads, 0,
         static_cast<cudaStream_t>(stream)>>>(out, n, seed, offset, f);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

}  // namespace

void random_uniform(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                    float low, float range, float top, void* stream) {
  launch(out, n, seed, offset, Uniform<float>{low, range, top}, stream);
}
void random_uniform(double* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                    double low, double range, double top, void* stream) {
  launch(out, n, seed, offset, Uniform<double>{low, range, top}, stream);
}
void random_normal(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                   float mean, float stddev, void* stream) {
  launch(out, n, seed, offset, Normal<float>{mean, stddev}, stream);
}
void random_normal(double* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                   double mean, double stddev, void* stream) {
  launch(out, n, seed, offset, Normal<double>{mean, stddev}, stream);
}
void random_integers(std::int32_t* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                     std::int32_t low, std::uint64_t range, void* stream) {
  launch(out, n, seed, offset, Integer<std::int32_t>{low, range}, stream);
}
void random_integers(std::int64_t* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                     std::int64_t low, std::uint64_t range, void* stream) {
  launch(out, n, seed, offset, Integer<std::int64_t>{low, range}, stream);
}

}  // namespace tessera::detail::cuda
