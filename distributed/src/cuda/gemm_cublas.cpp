// cuda::gemm (detail/gemm.hpp): cuBLAS. Row-major C = op_a(A) op_b(B) is column-major
// C^T = op_b(B)^T op_a(A)^T, and a row-major buffer read column-major is its transpose: so the
// call swaps the operands (and m, n) and keeps each op. One handle per device, kept in the
// current Context (destroyed with it); its stream is set per call.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "../detail/gemm.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/error.hpp"

namespace tessera::distributed::detail::cuda {
namespace {
void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string("cuBLAS ") + what + " failed: " + cublasGetStatusString(st), static_cast<int>(st));
}

struct Handles {
  std::mutex mu;
  std::map<int, cublasHandle_t> by_device;
  ~Handles() {
    for (auto& [d, h] : by_device) cublasDestroy(h);
  }
  cublasHandle_t get() {
    int dev = 0;
    cudaGetDevice(&dev);  // the dispatch made the stream's device current
    std::lock_guard<std::mutex> lock(mu);
    auto it = by_device.find(dev);
    if (it == by_device.end()) {
      cublasHandle_t h = nullptr;
      check(cublasCreate(&h), "cublasCreate");
      it = by_device.emplace(dev, h).first;
    }
    return it->second;
  }
};

cublasOperation_t trans(Op op) { return op == Op::none ? CUBLAS_OP_N : op == Op::trans ? CUBLAS_OP_T : CUBLAS_OP_C; }

// The typed cuBLAS entry points, plain and strided-batched.
#define TESSERA_CUBLAS_GEMM(T, CT, P)                                                                          \
  void call(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T* alpha,    \
            const T* a, int lda, const T* b, int ldb, const T* beta, T* c, int ldc) {                           \
    check(cublas##P##gemm(h, ta, tb, m, n, k, reinterpret_cast<const CT*>(alpha), reinterpret_cast<const CT*>(a), \
                          lda, reinterpret_cast<const CT*>(b), ldb, reinterpret_cast<const CT*>(beta),           \
                          reinterpret_cast<CT*>(c), ldc),                                                         \
          "gemm");                                                                                               \
  }                                                                                                              \
  void call_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,             \
                    const T* alpha, const T* a, int lda, long long sa, const T* b, int ldb, long long sb,          \
                    const T* beta, T* c, int ldc, long long sc, int batch) {                                      \
    check(cublas##P##gemmStridedBatched(h, ta, tb, m, n, k, reinterpret_cast<const CT*>(alpha),                   \
                                        reinterpret_cast<const CT*>(a), lda, sa, reinterpret_cast<const CT*>(b),  \
                                        ldb, sb, reinterpret_cast<const CT*>(beta), reinterpret_cast<CT*>(c), ldc, \
                                        sc, batch),                                                              \
          "gemmStridedBatched");                                                                                 \
  }
TESSERA_CUBLAS_GEMM(float, float, S)
TESSERA_CUBLAS_GEMM(double, double, D)
TESSERA_CUBLAS_GEMM(std::complex<float>, cuComplex, C)
TESSERA_CUBLAS_GEMM(std::complex<double>, cuDoubleComplex, Z)
#undef TESSERA_CUBLAS_GEMM
}  // namespace

template <class T> void gemm(const GemmArgs& g, const T* a, const T* b, T* c, void* stream) {
  cublasHandle_t h = Context::current().resource<Handles>([] { return std::make_shared<Handles>(); }).get();
  check(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  const T alpha(1), beta(g.accumulate ? 1 : 0);
  const int m = static_cast<int>(g.n), n = static_cast<int>(g.m), k = static_cast<int>(g.k);  // swapped
  if (g.batch == 1)
    call(h, trans(g.op_b), trans(g.op_a), m, n, k, &alpha, b, static_cast<int>(g.ldb), a, static_cast<int>(g.lda),
         &beta, c, static_cast<int>(g.ldc));
  else
    call_batched(h, trans(g.op_b), trans(g.op_a), m, n, k, &alpha, b, static_cast<int>(g.ldb), g.sb, a,
                 static_cast<int>(g.lda), g.sa, &beta, c, static_cast<int>(g.ldc), g.sc, static_cast<int>(g.batch));
}

TESSERA_GEMM_INSTANCES

}  // namespace tessera::distributed::detail::cuda
