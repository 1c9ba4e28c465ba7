// CUDA side of arg_combine (reduce.hpp): one thread per output element scans the ranks' partial
// (value, global index) pairs with the same rule as the host loop in src/host/reduce.cpp.
#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/local/array.hpp"
#include "tessera/local/cuda_check.hpp"
#include "../detail/arg_combine.hpp"

namespace tessera::distributed::detail::cuda {
using local::index_t;
namespace {

template <class T>
__global__ void arg_combine_kernel(const T* vals, const index_t* idx, int parts, index_t m, bool is_min,
                                   index_t* out) {
  for (index_t j = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < m;
       j += static_cast<index_t>(gridDim.x) * blockDim.x) {
    out[j] = arg_combine_one(vals, idx, parts, m, j, is_min);
  }
}

}  // namespace

template <class T>
void arg_combine(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out, void* stream) {
  constexpr int kThreads = 256;
  const index_t blocks = (m + kThreads - 1) / kThreads;
  arg_combine_kernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), kThreads, 0,
                       static_cast<cudaStream_t>(stream)>>>(vals, idx, parts, m, is_min, out);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

template void arg_combine<bool>(const bool*, const index_t*, int, index_t, bool, index_t*, void*);
template void arg_combine<std::int32_t>(const std::int32_t*, const index_t*, int, index_t, bool, index_t*, void*);
template void arg_combine<std::int64_t>(const std::int64_t*, const index_t*, int, index_t, bool, index_t*, void*);
template void arg_combine<float>(const float*, const index_t*, int, index_t, bool, index_t*, void*);
template void arg_combine<double>(const double*, const index_t*, int, index_t, bool, index_t*, void*);

}  // namespace tessera::distributed::detail::cuda
