// Internal: local GEMM of row-major matrices for matmul (linalg.hpp), per backend — host::gemm
// (src/host/gemm_host.cpp, OpenBLAS cblas) and cuda::gemm (src/cuda/gemm_cublas.cpp, cuBLAS) —
// dispatched by device in src/common/backends.cpp.
//   C[i] = op_a(A[i]) @ op_b(B[i]) + beta * C[i], i < batch, A[i] = a + i*sa (likewise b, c);
// op_a(A) is m x k, op_b(B) k x n, C m x n; lda, ldb, ldc are the stored row lengths. Callers pass
// m, n, k > 0.
#pragma once
#include "tessera/distributed/linalg.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed::detail {

struct GemmArgs {
  Op op_a = Op::none, op_b = Op::none;
  index_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  index_t batch = 1, sa = 0, sb = 0, sc = 0;
  bool accumulate = false;  // beta = 1 (else 0)
};

namespace host {
template <class T> void gemm(const GemmArgs& g, const T* a, const T* b, T* c, void* stream);
}
namespace cuda {
template <class T> void gemm(const GemmArgs& g, const T* a, const T* b, T* c, void* stream);
}
template <class T> void gemm_kernel(const GemmArgs& g, const T* a, const T* b, T* c, const Stream& s);

// Each backend's explicit instantiations, at the end of its namespace: the types matmul takes.
#define TESSERA_GEMM_INSTANCE(T) template void gemm<T>(const GemmArgs&, const T*, const T*, T*, void*);
#define TESSERA_GEMM_INSTANCES TESSERA_FOR_EACH_FFT(TESSERA_GEMM_INSTANCE)

}  // namespace tessera::distributed::detail
