// Lowering a C++ expression tree (expr/tree.hpp, bound to its destination's shape) to the runtime
// IR and launch arguments: a compile-time walk over the tree's node types, so that any translation
// unit (g++, clang, nvcc) can hand a fused expression to the runtime kernel compiler.
#pragma once
#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "tessera/local/expr/tree.hpp"
#include "tessera/local/jit/compiler.hpp"

namespace tessera::local {
inline namespace TESSERA_EXPR_NS {
namespace jit_lowering {

// The IR operation of each node type of tree.hpp.
template <class Op> struct op_of;
#define TESSERA_JIT_OP(TYPE, OP) \
  template <> struct op_of<TYPE> { static constexpr jit::Op value = jit::Op::OP; };
TESSERA_JIT_OP(NegOp, neg)
TESSERA_JIT_OP(NotOp, logical_not)
TESSERA_JIT_OP(AbsOp, abs)
TESSERA_JIT_OP(SqrtOp, sqrt)
TESSERA_JIT_OP(ExpOp, exp)
TESSERA_JIT_OP(LogOp, log)
TESSERA_JIT_OP(SinOp, sin)
TESSERA_JIT_OP(CosOp, cos)
TESSERA_JIT_OP(TanOp, tan)
TESSERA_JIT_OP(TanhOp, tanh)
TESSERA_JIT_OP(RealOp, real)
TESSERA_JIT_OP(ImagOp, imag)
TESSERA_JIT_OP(ConjOp, conj)
TESSERA_JIT_OP(AddOp, add)
TESSERA_JIT_OP(SubOp, sub)
TESSERA_JIT_OP(MulOp, mul)
TESSERA_JIT_OP(DivOp, div)
TESSERA_JIT_OP(EqOp, eq)
TESSERA_JIT_OP(NeOp, ne)
TESSERA_JIT_OP(LtOp, lt)
TESSERA_JIT_OP(LeOp, le)
TESSERA_JIT_OP(GtOp, gt)
TESSERA_JIT_OP(GeOp, ge)
TESSERA_JIT_OP(AndOp, logical_and)
TESSERA_JIT_OP(OrOp, logical_or)
TESSERA_JIT_OP(MinOp, minimum)
TESSERA_JIT_OP(MaxOp, maximum)
TESSERA_JIT_OP(PowOp, pow)
TESSERA_JIT_OP(Atan2Op, atan2)
TESSERA_JIT_OP(RsqrtOp, rsqrt)
TESSERA_JIT_OP(Expm1Op, expm1)
TESSERA_JIT_OP(Log1pOp, log1p)
TESSERA_JIT_OP(SinhOp, sinh)
TESSERA_JIT_OP(CoshOp, cosh)
TESSERA_JIT_OP(AsinOp, asin)
TESSERA_JIT_OP(AcosOp, acos)
TESSERA_JIT_OP(AtanOp, atan)
TESSERA_JIT_OP(FloorOp, floor)
TESSERA_JIT_OP(CeilOp, ceil)
TESSERA_JIT_OP(RoundOp, round)
TESSERA_JIT_OP(ArgOp, arg)
#undef TESSERA_JIT_OP
template <class U> struct op_of<CastOp<U>> { static constexpr jit::Op value = jit::Op::cast; };

template <class T> constexpr DType dtype_of_node() { return dtype_v<host_t<T>>; }

// Whether a bound tree lowers to the IR: its leaves, scalars and operations all have IR forms
// (other nodes, such as map() with a user's functor, need the compile-time executor).
template <class Op> concept HasIrOp = requires { op_of<Op>::value; };
template <class E> struct lowerable : std::false_type {};
template <class T, int R> struct lowerable<Leaf<T, R>> : std::true_type {};
template <class T> struct lowerable<Scalar<T>> : std::true_type {};
template <class Op, class A> struct lowerable<Unary<Op, A>> : std::bool_constant<HasIrOp<Op> && lowerable<A>::value> {};
template <class Op, class A, class B>
struct lowerable<Binary<Op, A, B>> : std::bool_constant<HasIrOp<Op> && lowerable<A>::value && lowerable<B>::value> {};
template <class C, class A, class B>
struct lowerable<Where<C, A, B>>
    : std::bool_constant<lowerable<C>::value && lowerable<A>::value && lowerable<B>::value> {};

struct Lowered {
  jit::Kernel kernel;
  jit::Args args;
  int add(jit::Node n) {
    kernel.nodes.push_back(n);
    return static_cast<int>(kernel.nodes.size()) - 1;
  }
};

template <class T, int R> int lower(Lowered& L, const Leaf<T, R>& x) {
  jit::Operand o;
  o.ptr = x.ptr;
  for (int d = 0; d < R; ++d) o.strides[d] = x.strides_[d];
  L.args.operands.push_back(o);
  return L.add({jit::Op::load, dtype_of_node<T>(), -1, -1, -1, static_cast<int>(L.args.operands.size()) - 1});
}
template <class T> int lower(Lowered& L, const Scalar<T>& x) {
  std::array<unsigned char, 16> bytes{};
  static_assert(sizeof(x.v) <= bytes.size());
  std::memcpy(bytes.data(), &x.v, sizeof(x.v));
  L.args.scalars.push_back(bytes);
  return L.add({jit::Op::scalar, dtype_of_node<T>(), -1, -1, -1, static_cast<int>(L.args.scalars.size()) - 1});
}
template <class Op, class A> int lower(Lowered& L, const Unary<Op, A>& x) {
  const int a = lower(L, x.a);
  return L.add({op_of<Op>::value, dtype_of_node<typename Unary<Op, A>::value_type>(), a});
}
template <class Op, class A, class B> int lower(Lowered& L, const Binary<Op, A, B>& x) {
  const int a = lower(L, x.a);
  const int b = lower(L, x.b);
  return L.add({op_of<Op>::value, dtype_of_node<typename Binary<Op, A, B>::value_type>(), a, b});
}
template <class C, class A, class B> int lower(Lowered& L, const Where<C, A, B>& x) {
  const int c = lower(L, x.c);
  const int a = lower(L, x.a);
  const int b = lower(L, x.b);
  return L.add({jit::Op::where, dtype_of_node<typename Where<C, A, B>::value_type>(), c, a, b});
}

/// The kernel and arguments of `dst = e` (e bound to dst's shape), on the given path.
template <class T, int R, class E>
Lowered lower_assignment(const Array<T, R>& dst, const E& e, bool linear) {
  Lowered L;
  lower(L, e);
  L.kernel.out = dtype_v<T>;
  L.kernel.rank = R;
  L.kernel.linear = linear;
  L.kernel.index32 = dst.size() < (index_t(1) << 31);
  L.args.out = dst.data();
  L.args.n = dst.size();
  for (int d = 0; d < R; ++d) L.args.shape[d] = dst.shape()[d], L.args.out_strides[d] = dst.strides()[d];
  return L;
}
}  // namespace jit_lowering

/// Evaluates `dst = e` by the runtime kernel compiler (NVRTC) on dst's device and default stream.
template <class T, int R, class E>
void eval_jit(const Array<T, R>& dst, const E& e, bool linear) {
  const auto L = jit_lowering::lower_assignment(dst, e, linear);
  // The IR depends only on the expression's type and the path, so its keys are built once per
  // instantiation (the per-launch cost is then the argument packing and one map lookup).
  static const std::array<std::string, 4> keys = [&] {
    jit::Kernel k = L.kernel;
    std::array<std::string, 4> s;
    for (int path = 0; path < 4; ++path) k.linear = path < 2, k.index32 = path % 2 == 0, s[path] = k.key();
    return s;
  }();
  const auto& key = keys[(linear ? 0 : 2) + (L.kernel.index32 ? 0 : 1)];
  jit::launch(L.kernel, key, L.args, dst.device(), Stream::default_for(dst.device()));
  detail::note_kernel_launch();
}

}  // inline namespace expr_cuda / expr_host
}  // namespace tessera::local
