// Fused elementwise expressions on distributed arrays: the Local layer's expression templates
// applied to the interiors, with no communication. Every operand must have the same blocks
// (global shape, grid, splits, offsets; halos may differ): otherwise LayoutMismatch, printing
// both layouts. `z = a * b + c` runs one kernel per rank (in nvcc translation units; see expr.hpp);
// `map(f, a, b, ...)` applies any function of local operands, e.g. map([](auto x) { return
// sqrt(x); }, a).
#pragma once
#include <type_traits>

#include "tessera/distributed/array.hpp"
#include "tessera/local/jit/string_kernel.hpp"
#include "tessera/local/expr.hpp"

namespace tessera::distributed {

/// A local expression over the interiors, with the layout its operands share.
template <class E, int Rank>
struct Expr {
  using is_distributed_expr = void;
  static constexpr int rank = Rank;
  E local;
  const Layout<Rank>* layout;
};

/// What may appear in a distributed expression: arrays, expressions, scalars.
template <class X> struct is_darray : std::false_type {};
template <class T, int R> struct is_darray<Array<T, R>> : std::true_type {};
template <class X> concept DArray = is_darray<std::remove_cvref_t<X>>::value;
template <class X> concept DExpr = requires { typename std::remove_cvref_t<X>::is_distributed_expr; };
template <class X> concept DOperand = DArray<X> || DExpr<X>;
template <class X> concept DScalar = local::ScalarLike<std::remove_cvref_t<X>>;

namespace detail {
template <class X>
decltype(auto) local_of(const X& x) {
  if constexpr (DArray<X>) return x.interior();
  else if constexpr (DExpr<X>) return (x.local);
  else return x;
}
template <class X>
auto layout_of(const X& x) {
  if constexpr (DArray<X>) return &x.layout();
  else if constexpr (DExpr<X>) return x.layout;
  else return nullptr;
}
template <int R>
const Layout<R>* merge(const Layout<R>* a, const Layout<R>* b, const char* op) {
  if (a && b && !a->same_blocks(*b))
    throw LayoutMismatch(std::string("layout mismatch in ") + op + ": " + a->str() + " vs " + b->str() +
                         " (redistribute one first)");
  return a ? a : b;
}
template <int R> const Layout<R>* merge(const Layout<R>* a, std::nullptr_t, const char*) { return a; }
template <int R> const Layout<R>* merge(std::nullptr_t, const Layout<R>* b, const char*) { return b; }
template <class X> constexpr int rank_of() {
  if constexpr (DOperand<X>) return std::remove_cvref_t<X>::rank;
  else return -1;
}
template <class E, int R>
auto make(E&& e, const Layout<R>* l) { return Expr<std::remove_cvref_t<E>, R>{std::forward<E>(e), l}; }
}  // namespace detail

/// Operands of a binary operation: at least one distributed.
template <class X, class Y>
concept DBinary = (DOperand<X> && (DOperand<Y> || DScalar<Y>)) || (DScalar<X> && DOperand<Y>);

/// x + y, x - y, x * y, x / y, minimum, maximum: lazy, elementwise over operands of the same blocks.
#define TESSERA_DIST_BINARY(FN)                                                                        \
  template <class X, class Y>                                                                          \
    requires DBinary<X, Y>                                                                             \
  auto FN(const X& x, const Y& y) {                                                                    \
    constexpr int R = [] { if constexpr (DOperand<X>) return detail::rank_of<X>(); else return detail::rank_of<Y>(); }(); \
    const Layout<R>* l = detail::merge<R>(detail::layout_of(x), detail::layout_of(y), #FN);             \
    using local::FN;                                                                                   \
    return detail::make(FN(detail::local_of(x), detail::local_of(y)), l);                              \
  }
TESSERA_DIST_BINARY(operator+)
TESSERA_DIST_BINARY(operator-)
TESSERA_DIST_BINARY(operator*)
TESSERA_DIST_BINARY(operator/)
TESSERA_DIST_BINARY(minimum)
TESSERA_DIST_BINARY(maximum)
TESSERA_DIST_BINARY(operator==)
TESSERA_DIST_BINARY(operator!=)
TESSERA_DIST_BINARY(operator<)
TESSERA_DIST_BINARY(operator<=)
TESSERA_DIST_BINARY(operator>)
TESSERA_DIST_BINARY(operator>=)
TESSERA_DIST_BINARY(logical_and)
TESSERA_DIST_BINARY(logical_or)
TESSERA_DIST_BINARY(pow)
TESSERA_DIST_BINARY(arctan2)
#undef TESSERA_DIST_BINARY

/// -x, lazy.
template <class X> requires DOperand<X>
auto operator-(const X& x) {
  using local::operator-;
  return detail::make(-detail::local_of(x), detail::layout_of(x));
}

/// Math functions, logical not, real/imag/conj/angle as named lazy nodes (local/expr/tree.hpp's),
/// evaluated by either executor (nvcc's, or the runtime kernel compiler in plain C++ code).
#define TESSERA_DIST_UNARY(FN)                                          \
  template <class X> requires DOperand<X>                               \
  auto FN(const X& x) {                                                 \
    return detail::make(local::FN(detail::local_of(x)), detail::layout_of(x)); \
  }
TESSERA_DIST_UNARY(abs)
TESSERA_DIST_UNARY(sqrt)
TESSERA_DIST_UNARY(rsqrt)
TESSERA_DIST_UNARY(exp)
TESSERA_DIST_UNARY(expm1)
TESSERA_DIST_UNARY(log)
TESSERA_DIST_UNARY(log1p)
TESSERA_DIST_UNARY(sin)
TESSERA_DIST_UNARY(cos)
TESSERA_DIST_UNARY(tan)
TESSERA_DIST_UNARY(tanh)
TESSERA_DIST_UNARY(sinh)
TESSERA_DIST_UNARY(cosh)
TESSERA_DIST_UNARY(asin)
TESSERA_DIST_UNARY(acos)
TESSERA_DIST_UNARY(atan)
TESSERA_DIST_UNARY(floor)
TESSERA_DIST_UNARY(ceil)
TESSERA_DIST_UNARY(round)
TESSERA_DIST_UNARY(real)
TESSERA_DIST_UNARY(imag)
TESSERA_DIST_UNARY(conj)
TESSERA_DIST_UNARY(angle)
TESSERA_DIST_UNARY(logical_not)
#undef TESSERA_DIST_UNARY

/// Elementwise conversion to U (lazy).
template <class U, class X> requires DOperand<X>
auto cast(const X& x) {
  return detail::make(local::cast<U>(detail::local_of(x)), detail::layout_of(x));
}
/// numpy.where(c, a, b) on operands of the same blocks (scalars broadcast), lazy.
template <class C, class A, class B>
  requires DOperand<C>
auto where(const C& c, const A& a, const B& b) {
  constexpr int R = detail::rank_of<C>();
  const Layout<R>* l = detail::layout_of(c);
  if constexpr (DOperand<A>) l = detail::merge<R>(l, detail::layout_of(a), "where");
  if constexpr (DOperand<B>) l = detail::merge<R>(l, detail::layout_of(b), "where");
  return detail::make(local::where(detail::local_of(c), detail::local_of(a), detail::local_of(b)), l);
}
namespace detail {
/// The layout of the first distributed array among args (its rank R); LayoutMismatch, naming
/// `what`, where another of that rank has other blocks (other ranks: the kernel's ShapeMismatch).
template <int R, class... A> const Layout<R>* same_blocks_of(const std::string& what, const A&... args) {
  const Layout<R>* first = nullptr;
  auto check = [&](const auto& a) {
    using X = std::remove_cvref_t<decltype(a)>;
    if constexpr (DArray<X>) {
      if constexpr (X::rank == R) {
        if (!first) first = &a.layout();
        else if (!first->same_blocks(a.layout()))
          throw LayoutMismatch("layout mismatch in " + what + ": " + first->str() + " vs " + a.layout().str() +
                               " (redistribute one first)");
      }
    }
  };
  (check(args), ...);
  return first;
}
template <class X> constexpr int darray_rank() {
  if constexpr (DArray<X>) return std::remove_cvref_t<X>::rank;
  else return -1;
}
template <class... A> constexpr int first_darray_rank() {
  int r = -1;
  ((r = r < 0 ? darray_rank<A>() : r), ...);
  return r;
}
/// A string kernel's argument: a distributed array's interior, anything else as it is.
template <class X> local::jit::KernelArg kernel_arg(const X& x) {
  if constexpr (DArray<X>) return local::ElementwiseKernel::to_arg(x.interior());
  else return local::ElementwiseKernel::to_arg(x);
}
}  // namespace detail

/// Runs a string kernel (local::ElementwiseKernel, GPU arrays) on every rank's interiors of
/// distributed arrays of the same blocks (scalars pass through): inputs, then outputs. Operands
/// of other blocks throw LayoutMismatch on every rank before anything runs.
template <class... A>
  requires(DArray<A> || ...)
void launch(const local::ElementwiseKernel& k, const A&... args) {
  (void)detail::same_blocks_of<detail::first_darray_rank<A...>()>(k.name(), args...);
  k(detail::local_of(args)...);
}

/// launch(k, args...) below for arguments known at run time (a front end's: the Python package): `v`
/// are this rank's interiors of arrays of one layout over `group` (and scalars), inputs then
/// outputs, `global_size` the layout's element count. Collective over `group`.
inline void reduce_blocks(const local::ReductionKernel& k, const std::vector<local::jit::KernelArg>& v,
                          const comm::ProcessGroup& group, std::int64_t global_size) {
  constexpr int parts_per_rank = 1024;  // the same on every rank, whatever its device
  const auto mine = k.partials(v, parts_per_rank);
  const Stream& s = Stream::default_for(mine.values.device());
  Buffer all(mine.values.bytes() * static_cast<std::size_t>(group.size()), s);
  group.all_gather(mine.values.data(), all.data(), parts_per_rank, mine.type, s);
  k.finish(v, all.data(), static_cast<std::int64_t>(parts_per_rank) * group.size(), global_size);
}

/// Reduces distributed arrays of the same blocks (scalars pass through) as one array with a
/// reduction kernel (local::ReductionKernel, GPU arrays): every rank's per-block partials, one
/// all-gather over the layout's group, then post_map with n_reduced the global element count.
/// Outputs are local arrays of extent 1 (the inputs' rank) on each rank's device; every rank gets
/// the same values. Along the last axis, where the layout does not split it, each rank's rows are
/// whole: k.along_last_axis(x.interior(), y.interior()).
template <class... A>
  requires(DArray<A> || ...)
void launch(const local::ReductionKernel& k, const A&... args) {
  const auto* layout = detail::same_blocks_of<detail::first_darray_rank<A...>()>(k.name(), args...);
  reduce_blocks(k, {detail::kernel_arg(args)...}, layout->grid().group(), layout->global_size());
}

/// numpy.clip (lazy).
template <class X, class L, class H> requires DOperand<X>
auto clip(const X& x, const L& lo, const H& hi) { return minimum(maximum(x, lo), hi); }

/// f applied to the local operands (interiors, local expressions, scalars) of each rank.
template <class F, class... Xs>
  requires(DOperand<Xs> || ...)
auto map(F&& f, const Xs&... xs) {
  constexpr int R = [] {
    int r = -1;
    ((r = r < 0 ? detail::rank_of<Xs>() : r), ...);
    return r;
  }();
  const Layout<R>* l = nullptr;
  ((l = detail::merge<R>(l, detail::layout_of(xs), "map")), ...);
  return detail::make(f(local::as_expr(detail::local_of(xs))...), l);
}

template <class T, int Rank>
template <class E>
  requires requires { typename E::is_distributed_expr; }
Array<T, Rank>& Array<T, Rank>::operator=(const E& e) {
  detail::merge<Rank>(&layout(), e.layout, "assignment");
  local::assign(interior(), e.local);
  return *this;
}

}  // namespace tessera::distributed
