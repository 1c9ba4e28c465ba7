// CUDA side of arg_combine (reduce.hpp): one thread per output element scans the ranks' partial
// (value, global index) pairs with the same rule as the host loop in src/host/reduce.cpp.
#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/local/array.hpp"
#include "tessera/local/cuda_check.hpp"
#include "../detail/arg_combine.hpp"
#include "../detail/kernels.hpp"
#include "tessera/local/element_types.hpp"

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

#define TESSERA_ARG_COMBINE(T) \
  template void arg_combine<T>(const T*, const index_t*, int, index_t, bool, index_t*, void*);
TESSERA_FOR_EACH_ORDERED(TESSERA_ARG_COMBINE)

}  // namespace tessera::distributed::detail::cuda
