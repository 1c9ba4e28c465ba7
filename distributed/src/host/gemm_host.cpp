// host::gemm (detail/gemm.hpp): OpenBLAS's row-major cblas GEMM, one call per batch matrix.
#include <cblas.h>

#include <complex>

#include "../detail/gemm.hpp"

namespace tessera::distributed::detail::host {
namespace {
CBLAS_TRANSPOSE trans(Op op) {
  return op == Op::none ? CblasNoTrans : op == Op::trans ? CblasTrans : CblasConjTrans;
}
template <class T>
void one(const GemmArgs& g, const T* a, const T* b, T* c) {
  const auto ta = trans(g.op_a), tb = trans(g.op_b);
  const blasint m = static_cast<blasint>(g.m), n = static_cast<blasint>(g.n), k = static_cast<blasint>(g.k);
  const blasint lda = static_cast<blasint>(g.lda), ldb = static_cast<blasint>(g.ldb), ldc = static_cast<blasint>(g.ldc);
  const T alpha(1), beta(g.accumulate ? 1 : 0);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  else
    cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
}  // namespace

template <class T> void gemm(const GemmArgs& g, const T* a, const T* b, T* c, void*) {
  for (index_t i = 0; i < g.batch; ++i) one(g, a + i * g.sa, b + i * g.sb, c + i * g.sc);
}

TESSERA_GEMM_INSTANCES

}  // namespace tessera::distributed::detail::host
