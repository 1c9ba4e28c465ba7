// Fused lazy expressions: `x * y + z` builds a tree (expr/tree.hpp); assigning it to an Array
// evaluates the whole tree at once, by the executor of the destination's device: a host loop
// (expr/host_executor.hpp) or, in translation units compiled by nvcc, ONE CUDA kernel
// (expr/cuda_executor.cuh). A plain C++ translation unit can evaluate host arrays; for CUDA arrays
// it calls the precompiled operations of basic_ops.hpp instead (assigning throws otherwise).
#pragma once
#include "tessera/local/expr/host_executor.hpp"
#include "tessera/local/expr/tree.hpp"
#ifdef __CUDACC__
#include "tessera/local/expr/cuda_executor.cuh"
#endif

namespace tessera::local {
inline namespace TESSERA_EXPR_NS {
/// Evaluates `x` (expression, array or scalar; broadcast to dst's shape) into `dst` in one pass.
template <class T, int R, class X>
void assign(const Array<T, R>& dst, const X& x) {
  auto e = as_expr(x);
  using E = decltype(e);
  static_assert(E::rank == R || E::rank < 0, "assigning an expression of another rank");
  if (auto d = e.device(); d && *d != dst.device())
    throw DeviceMismatch("device mismatch in assign: destination on " + dst.device().str() + ", operands on " + d->str(),
                         dst.device());
  if constexpr (E::rank >= 0) {
    const auto es = e.shape();
    for (int d = 0; d < R; ++d)
      if (es[d] != dst.shape()[d] && es[d] != 1)
        throw ShapeMismatch("shape mismatch in assign: destination " + shape_str(dst.shape()) + " vs expression " +
                                shape_str(es),
                            dst.device());
  }
  const index_t n = dst.size();
  if (n == 0) return;
  const bool linear = dst.is_contiguous() && e.linear_as(dst.shape());
  auto b = e.bind(dst.shape());
  if (dst.device().is_host()) return eval_host(dst, b, linear);
#ifdef __CUDACC__
  return eval_cuda(dst, b, linear);
#else
  throw BackendUnavailable("a fused expression on " + dst.device().str() +
                               " must be compiled by nvcc (a .cu file); plain C++ code can use the "
                               "precompiled operations of basic_ops.hpp",
                           dst.device());
#endif
}
}  // inline namespace expr_cuda / expr_host

template <class T, int Rank>
template <class E> requires requires { typename E::is_tessera_expr; }
Array<T, Rank>& Array<T, Rank>::operator=(const E& e) { assign(*this, e); return *this; }
template <class T, int Rank>
template <class E>
Array<T, Rank>& Array<T, Rank>::operator+=(const E& e) { assign(*this, *this + e); return *this; }
template <class T, int Rank>
template <class E>
Array<T, Rank>& Array<T, Rank>::operator-=(const E& e) { assign(*this, *this - e); return *this; }
template <class T, int Rank>
template <class E>
Array<T, Rank>& Array<T, Rank>::operator*=(const E& e) { assign(*this, *this * e); return *this; }
template <class T, int Rank>
template <class E>
Array<T, Rank>& Array<T, Rank>::operator/=(const E& e) { assign(*this, *this / e); return *this; }

}  // namespace tessera::local
