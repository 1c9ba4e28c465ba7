#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "tessera/local/cuda_check.hpp"
#include "tessera/local/device.hpp"

namespace tessera::detail {
namespace {
__global__ void fill_odd(std::int64_t* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = 2 * static_cast<std::int64_t>(i) + 1;
}
}  // namespace

std::size_t cuda_self_test(const Device& device, std::size_t n) {
  int previous = 0;
  TESSERA_CHECK_CUDA(cudaGetDevice(&previous));
  TESSERA_CHECK_CUDA(cudaSetDevice(device.index()));
  std::int64_t* d = nullptr;
  std::vector<std::int64_t> h(n);
  TESSERA_CHECK_CUDA(cudaMalloc(&d, n * sizeof(std::int64_t)));
  fill_odd<<<256, 256>>>(d, n);
  TESSERA_CHECK_CUDA(cudaGetLastError());
  TESSERA_CHECK_CUDA(cudaMemcpy(h.data(), d, n * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  TESSERA_CHECK_CUDA(cudaFree(d));
  TESSERA_CHECK_CUDA(cudaSetDevice(previous));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += h[i] != 2 * static_cast<std::int64_t>(i) + 1;
  return wrong;
}
}  // namespace tessera::detail
