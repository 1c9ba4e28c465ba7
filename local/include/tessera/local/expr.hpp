// Fused lazy expressions: `x * y + z` builds a tree (expr/tree.hpp); assigning it to an Array
// evaluates the whole tree at once, by the executor of the destination's device: a host loop
// (expr/host_executor.hpp) or, in translation units compiled by nvcc, ONE CUDA kernel
// (expr/cuda_executor.cuh). In a plain C++ translation unit (and everywhere with TESSERA_JIT=on)
// the tree is lowered to the runtime IR and compiled by NVRTC (jit/lower.hpp, jit/compiler.hpp).
#pragma once
#include "tessera/local/expr/host_executor.hpp"
#include "tessera/local/expr/tree.hpp"
#include "tessera/local/jit/lower.hpp"
#include "tessera/local/settings.hpp"
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
  constexpr bool lowerable = jit_lowering::lowerable<decltype(b)>::value;
  [[maybe_unused]] const auto jit = settings().jit;
#ifdef __CUDACC__
  if constexpr (lowerable)
    if (jit == Settings::Jit::on) return eval_jit(dst, b, linear);
  return eval_cuda(dst, b, linear);
#else
  if constexpr (lowerable) {
    if (jit != Settings::Jit::off) return eval_jit(dst, b, linear);
    throw BackendUnavailable("a fused expression on " + dst.device().str() +
                                 " in code not compiled by nvcc needs the runtime kernel compiler, and TESSERA_JIT=off",
                             dst.device());
  }
  throw BackendUnavailable("this expression on " + dst.device().str() +
                               " holds a node without a runtime IR form (map, a generator): compile it with nvcc (a .cu "
                               "file), or use the precompiled operations of basic_ops.hpp",
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
