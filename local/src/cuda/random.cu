// CUDA side of tessera::random: one grid-stride kernel, one Philox block per element, with the
// same philox.hpp conversions as the host loop (hence bitwise identical values).
#include <cuda_runtime.h>

#include <cstdint>

#include "../detail/random_kernels.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/philox.hpp"

namespace tessera::detail {
namespace cuda {
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

#define TESSERA_RANDOM_ARGS std::int64_t n, std::uint64_t seed, std::uint64_t offset
class CudaRandom final : public RandomKernels {
 public:
  void uniform(float* o, TESSERA_RANDOM_ARGS, float low, float range, float top, void* s) const override {
    launch(o, n, seed, offset, Uniform<float>{low, range, top}, s);
  }
  void uniform(double* o, TESSERA_RANDOM_ARGS, double low, double range, double top, void* s) const override {
    launch(o, n, seed, offset, Uniform<double>{low, range, top}, s);
  }
  void normal(float* o, TESSERA_RANDOM_ARGS, float mean, float stddev, void* s) const override {
    launch(o, n, seed, offset, Normal<float>{mean, stddev}, s);
  }
  void normal(double* o, TESSERA_RANDOM_ARGS, double mean, double stddev, void* s) const override {
    launch(o, n, seed, offset, Normal<double>{mean, stddev}, s);
  }
  void integers(std::int32_t* o, TESSERA_RANDOM_ARGS, std::int32_t low, std::uint64_t range, void* s) const override {
    launch(o, n, seed, offset, Integer<std::int32_t>{low, range}, s);
  }
  void integers(std::int64_t* o, TESSERA_RANDOM_ARGS, std::int64_t low, std::uint64_t range, void* s) const override {
    launch(o, n, seed, offset, Integer<std::int64_t>{low, range}, s);
  }
};
#undef TESSERA_RANDOM_ARGS
}  // namespace cuda

const RandomKernels& cuda_random() {
  static const cuda::CudaRandom k;
  return k;
}
}  // namespace tessera::detail
