// The host executor of expression trees: one per-element loop (OpenMP when enabled), linear when
// destination and operands are contiguous, else row by row.
#pragma once
#include "tessera/local/expr/tree.hpp"

namespace tessera::local {
inline namespace TESSERA_EXPR_NS {
/// Evaluates bound expression `e` into host array `dst`: one flat loop if `linear`, else row by row.
template <class T, int R, class E>
void eval_host(const Array<T, R>& dst, const E& e, bool linear) {
  using D = dev_t<T>;
  D* out = reinterpret_cast<D*>(dst.data());
  const index_t n = dst.size();
  if (linear) {
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (n > 65536)
#endif
    for (index_t i = 0; i < n; ++i) out[i] = convert<D>(e.template eval<true>(i, nullptr));
    return;
  }
  const auto& shape = dst.shape();
  const auto& st = dst.strides();
  const index_t inner = R > 0 ? shape[R - 1] : 1;
  const index_t rows = inner > 0 ? n / inner : 0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (n > 65536)
#endif
  for (index_t row = 0; row < rows; ++row) {
    index_t idx[R > 0 ? R : 1] = {};
    index_t rem = row, off = 0;
    for (int d = R - 2; d >= 0; --d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      off += idx[d] * st[d];
    }
    for (index_t k = 0; k < inner; ++k) {
      if constexpr (R > 0) idx[R - 1] = k;
      out[off + (R > 0 ? k * st[R - 1] : 0)] = convert<D>(e.template eval<false>(row * inner + k, idx));
    }
  }
}

}  // inline namespace expr_cuda / expr_host
}  // namespace tessera::local
