// The expression tree (expression templates, as MatX does it): `x * y + z` builds a node; nothing
// is evaluated until an executor (host_executor.hpp, cuda_executor.cuh) runs it. Scalars and size-1
// dimensions broadcast. Nodes evaluate with TESSERA_HD functions, so that one tree runs in a host
// loop and, compiled by nvcc, in a CUDA kernel.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <optional>
#include <type_traits>
#include <utility>

#include "tessera/local/array.hpp"
#include "tessera/local/hd.hpp"

#ifdef __CUDACC__
#include <cuda/std/cmath>
#include <cuda/std/complex>
#endif

// The inline namespace of expression code: expr_cuda under nvcc, expr_host otherwise (see below).
#ifdef __CUDACC__
#define TESSERA_EXPR_NS expr_cuda
#else
#define TESSERA_EXPR_NS expr_host
#endif

namespace tessera::local {

namespace detail {
// Counts kernels launched by the library and by expressions (tests read it).
void note_kernel_launch() noexcept;
int multiprocessor_count(int device);
}  // namespace detail
/// Kernels launched so far by the library and by expressions (tests read it).
long long kernel_launch_count() noexcept;
/// The common device of two operands; DeviceMismatch naming both if they differ.
std::optional<Device> merge_devices(std::optional<Device> a, std::optional<Device> b, const char* op);

// Under nvcc the device-side element type of std::complex is cuda::std::complex (its operations run
// in kernels); plain C++ keeps std::complex. The tree's types differ, so each compiler gets its
// own inline namespace and the linker never merges the two.
#ifdef __CUDACC__
inline namespace expr_cuda {
namespace xm = ::cuda::std;
template <class T> struct dev_type { using type = T; };
template <class R> struct dev_type<std::complex<R>> { using type = ::cuda::std::complex<R>; };
#else
inline namespace expr_host {
namespace xm = ::std;
template <class T> struct dev_type { using type = T; };
#endif
template <class T> using dev_t = typename dev_type<T>::type;
template <class T> struct host_type { using type = T; };
#ifdef __CUDACC__
template <class R> struct host_type<::cuda::std::complex<R>> { using type = std::complex<R>; };
#endif
template <class T> using host_t = typename host_type<std::remove_cvref_t<T>>::type;

template <class T> struct is_cplx : std::false_type {};
template <class R> struct is_cplx<std::complex<R>> : std::true_type {};
#ifdef __CUDACC__
template <class R> struct is_cplx<::cuda::std::complex<R>> : std::true_type {};
#endif

// Value conversion used on assignment and casts: complex -> real keeps the real part.
template <class To, class From>
TESSERA_HD To convert(const From& v) {
  if constexpr (is_cplx<From>::value && !is_cplx<To>::value) return static_cast<To>(v.real());
  else return static_cast<To>(v);
}

template <class X> concept Expr = requires { typename X::is_tessera_expr; };
template <class X> struct is_array : std::false_type {};
template <class T, int R> struct is_array<Array<T, R>> : std::true_type {};
template <class X> concept ArrayLike = is_array<std::remove_cvref_t<X>>::value;
template <class X> concept ScalarLike = std::is_arithmetic_v<X> || is_complex_v<X>;

// ---- leaves ----------------------------------------------------------------------------------
template <class T, int R>
struct Leaf {
  using is_tessera_expr = void;
  using value_type = T;
  static constexpr int rank = R;
  const dev_t<T>* ptr;
  Shape<R> shape_, strides_;
  Device dev;
  bool contiguous;

  explicit Leaf(const Array<T, R>& a)
      : ptr(reinterpret_cast<const dev_t<T>*>(a.data())), shape_(a.shape()), strides_(a.strides()),
        dev(a.device()), contiguous(a.is_contiguous()) {}
  Shape<R> shape() const { return shape_; }
  std::optional<Device> device() const { return dev; }
  bool linear_as(const Shape<R>& out) const { return contiguous && shape_ == out; }
  Leaf bind(const Shape<R>& out) const {
    Leaf b = *this;
    for (int d = 0; d < R; ++d)
      if (shape_[d] == 1 && out[d] != 1) b.strides_[d] = 0;  // broadcast a size-1 dimension
    return b;
  }
  template <bool Linear>
  TESSERA_HD dev_t<T> eval(index_t i, const index_t* idx) const {
    if constexpr (Linear) {
      return ptr[i];
    } else {
      index_t off = 0;
      for (int d = 0; d < R; ++d) off += idx[d] * strides_[d];
      return ptr[off];
    }
  }
};

template <class T>
struct Scalar {
  using is_tessera_expr = void;
  using value_type = T;
  static constexpr int rank = -1;  // broadcasts to any rank
  dev_t<T> v;
  explicit Scalar(const T& x) : v(convert<dev_t<T>>(x)) {}
  std::optional<Device> device() const { return std::nullopt; }
  template <std::size_t R> bool linear_as(const std::array<index_t, R>&) const { return true; }
  template <std::size_t R> Scalar bind(const std::array<index_t, R>&) const { return *this; }
  template <bool Linear> TESSERA_HD dev_t<T> eval(index_t, const index_t*) const { return v; }
};

template <class X>
auto as_expr(const X& x) {
  if constexpr (ArrayLike<X>) return Leaf<typename X::value_type, X::rank>(x);
  else if constexpr (Expr<X>) return x;
  else return Scalar<X>(x);
}
template <class X> using expr_t = decltype(as_expr(std::declval<X>()));

template <std::size_t R>
std::array<index_t, R> broadcast_shapes(const std::array<index_t, R>& a, const std::array<index_t, R>& b,
                                        const char* op, std::optional<Device> dev) {
  std::array<index_t, R> out{};
  for (std::size_t d = 0; d < R; ++d) {
    if (a[d] == b[d] || b[d] == 1) out[d] = a[d];
    else if (a[d] == 1) out[d] = b[d];
    else {
      const std::string msg = std::string("shape mismatch in ") + op + ": " + shape_str(a) + " vs " + shape_str(b);
      if (dev) throw ShapeMismatch(msg, *dev);
      throw ShapeMismatch(msg);
    }
  }
  return out;
}

// ---- interior nodes --------------------------------------------------------------------------
template <class Op, class A>
struct Unary {
  using is_tessera_expr = void;
  using value_type = host_t<decltype(Op::apply(std::declval<dev_t<typename A::value_type>>()))>;
  static constexpr int rank = A::rank;
  A a;
  auto shape() const { return a.shape(); }
  std::optional<Device> device() const { return a.device(); }
  template <std::size_t R> bool linear_as(const std::array<index_t, R>& out) const { return a.linear_as(out); }
  template <std::size_t R> auto bind(const std::array<index_t, R>& out) const { return Unary<Op, decltype(a.bind(out))>{a.bind(out)}; }
  template <bool Linear>
  TESSERA_HD auto eval(index_t i, const index_t* idx) const {
    return Op::apply(a.template eval<Linear>(i, idx));
  }
};

template <class Op, class A, class B>
struct Binary {
  using is_tessera_expr = void;
  using value_type = host_t<decltype(Op::apply(std::declval<dev_t<typename A::value_type>>(),
                                               std::declval<dev_t<typename B::value_type>>()))>;
  static constexpr int rank = A::rank > B::rank ? A::rank : B::rank;
  A a;
  B b;
  std::optional<Device> dev;
  Shape<(rank > 0 ? rank : 0)> shape_{};

  Binary(const A& a_, const B& b_) : a(a_), b(b_), dev(merge_devices(a_.device(), b_.device(), Op::name)) {
    static_assert(A::rank == B::rank || A::rank < 0 || B::rank < 0,
                  "operands of different rank: reshape one (size-1 dimensions broadcast)");
    if constexpr (A::rank >= 0 && B::rank >= 0) shape_ = broadcast_shapes<rank>(a.shape(), b.shape(), Op::name, dev);
    else if constexpr (A::rank >= 0) shape_ = a.shape();
    else if constexpr (B::rank >= 0) shape_ = b.shape();
  }
  Binary(const A& a_, const B& b_, std::optional<Device> d, const Shape<(rank > 0 ? rank : 0)>& s)
      : a(a_), b(b_), dev(d), shape_(s) {}
  auto shape() const { return shape_; }
  std::optional<Device> device() const { return dev; }
  template <std::size_t R> bool linear_as(const std::array<index_t, R>& out) const { return a.linear_as(out) && b.linear_as(out); }
  template <std::size_t R> auto bind(const std::array<index_t, R>& out) const {
    return Binary<Op, decltype(a.bind(out)), decltype(b.bind(out))>(a.bind(out), b.bind(out), dev, shape_);
  }
  template <bool Linear>
  TESSERA_HD auto eval(index_t i, const index_t* idx) const {
    return Op::apply(a.template eval<Linear>(i, idx), b.template eval<Linear>(i, idx));
  }
};

template <class C, class A, class B>
struct Where {
  using is_tessera_expr = void;
  using value_type = typename A::value_type;
  static_assert(std::is_same_v<typename A::value_type, typename B::value_type>,
                "where(c, a, b): a and b must have the same element type (use cast<T>)");
  static constexpr int rank = std::max({C::rank, A::rank, B::rank});
  C c;
  A a;
  B b;
  std::optional<Device> dev;
  Shape<(rank > 0 ? rank : 0)> shape_{};
  Where(const C& c_, const A& a_, const B& b_, std::optional<Device> d, const Shape<(rank > 0 ? rank : 0)>& s)
      : c(c_), a(a_), b(b_), dev(d), shape_(s) {}
  auto shape() const { return shape_; }
  std::optional<Device> device() const { return dev; }
  template <std::size_t R> bool linear_as(const std::array<index_t, R>& out) const {
    return c.linear_as(out) && a.linear_as(out) && b.linear_as(out);
  }
  template <std::size_t R> auto bind(const std::array<index_t, R>& out) const {
    return Where<decltype(c.bind(out)), decltype(a.bind(out)), decltype(b.bind(out))>(c.bind(out), a.bind(out),
                                                                                        b.bind(out), dev, shape_);
  }
  template <bool Linear>
  TESSERA_HD dev_t<value_type> eval(index_t i, const index_t* idx) const {
    return c.template eval<Linear>(i, idx) ? dev_t<value_type>(a.template eval<Linear>(i, idx))
                                           : dev_t<value_type>(b.template eval<Linear>(i, idx));
  }
};

// ---- operations --------------------------------------------------------------------------------
// Complex products by the textbook formula, as NumPy and CuPy compute them: std::complex and
// cuda::std::complex add C99 Annex G's inf/NaN recovery (a libgcc call on the host, branches in a
// kernel) that costs a complex triad bandwidth (docs/performance/local.md, History).
template <class X, class Y>
TESSERA_HD auto mul_values(const X& x, const Y& y) {
  if constexpr (is_cplx<X>::value && std::is_same_v<X, Y>)
    return X(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
  else
    return x * y;
}
#define TESSERA_BINARY_OP(NAME, OPNAME, EXPR)                                  \
  struct NAME {                                                                \
    static constexpr const char* name = OPNAME;                                \
    template <class X, class Y>                                                \
    TESSERA_HD static auto apply(const X& x, const Y& y) { return EXPR; }      \
  };
TESSERA_BINARY_OP(AddOp, "add", x + y)
TESSERA_BINARY_OP(SubOp, "sub", x - y)
TESSERA_BINARY_OP(MulOp, "mul", mul_values(x, y))
TESSERA_BINARY_OP(DivOp, "div", x / y)
TESSERA_BINARY_OP(EqOp, "==", bool(x == y))
TESSERA_BINARY_OP(NeOp, "!=", bool(x != y))
TESSERA_BINARY_OP(LtOp, "<", bool(x < y))
TESSERA_BINARY_OP(LeOp, "<=", bool(x <= y))
TESSERA_BINARY_OP(GtOp, ">", bool(x > y))
TESSERA_BINARY_OP(GeOp, ">=", bool(x >= y))
TESSERA_BINARY_OP(AndOp, "logical_and", bool(x) && bool(y))
TESSERA_BINARY_OP(OrOp, "logical_or", bool(x) || bool(y))
TESSERA_BINARY_OP(MinOp, "minimum", (y < x ? y : x))
TESSERA_BINARY_OP(MaxOp, "maximum", (x < y ? y : x))
TESSERA_BINARY_OP(PowOp, "pow", xm::pow(x, y))
TESSERA_BINARY_OP(Atan2Op, "arctan2", xm::atan2(x, y))
#undef TESSERA_BINARY_OP

#define TESSERA_UNARY_OP(NAME, EXPR)                                  \
  struct NAME {                                                       \
    template <class X>                                                \
    TESSERA_HD static auto apply(const X& x) { return EXPR; }         \
  };
TESSERA_UNARY_OP(NegOp, -x)
TESSERA_UNARY_OP(NotOp, !bool(x))
TESSERA_UNARY_OP(AbsOp, xm::abs(x))
TESSERA_UNARY_OP(SqrtOp, xm::sqrt(x))
TESSERA_UNARY_OP(ExpOp, xm::exp(x))
TESSERA_UNARY_OP(LogOp, xm::log(x))
TESSERA_UNARY_OP(SinOp, xm::sin(x))
TESSERA_UNARY_OP(CosOp, xm::cos(x))
TESSERA_UNARY_OP(TanOp, xm::tan(x))
TESSERA_UNARY_OP(TanhOp, xm::tanh(x))
TESSERA_UNARY_OP(Expm1Op, xm::expm1(x))
TESSERA_UNARY_OP(Log1pOp, xm::log1p(x))
TESSERA_UNARY_OP(SinhOp, xm::sinh(x))
TESSERA_UNARY_OP(CoshOp, xm::cosh(x))
TESSERA_UNARY_OP(AsinOp, xm::asin(x))
TESSERA_UNARY_OP(AcosOp, xm::acos(x))
TESSERA_UNARY_OP(AtanOp, xm::atan(x))
TESSERA_UNARY_OP(FloorOp, xm::floor(x))
TESSERA_UNARY_OP(CeilOp, xm::ceil(x))
TESSERA_UNARY_OP(RoundOp, xm::rint(x))  // numpy.round: halves to even
TESSERA_UNARY_OP(ArgOp, xm::arg(x))
#undef TESSERA_UNARY_OP
// 1/sqrt(x): CUDA's rsqrt on the device (one instruction; both executors use it), the quotient
// on the host.
struct RsqrtOp {
  template <class X> TESSERA_HD static auto apply(const X& x) {
#ifdef __CUDA_ARCH__
    if constexpr (std::is_same_v<X, float>) return ::rsqrtf(x); else return ::rsqrt(static_cast<double>(x));
#else
    if constexpr (std::is_same_v<X, float>) return 1.0f / std::sqrt(x); else return 1.0 / std::sqrt(static_cast<double>(x));
#endif
  }
};
struct RealOp {
  template <class X> TESSERA_HD static auto apply(const X& x) {
    if constexpr (is_cplx<X>::value) return x.real(); else return x;
  }
};
struct ImagOp {
  template <class X> TESSERA_HD static auto apply(const X& x) {
    if constexpr (is_cplx<X>::value) return x.imag(); else return X(0);
  }
};
struct ConjOp {
  template <class X> TESSERA_HD static auto apply(const X& x) {
    if constexpr (is_cplx<X>::value) return xm::conj(x); else return x;
  }
};
template <class U>
struct CastOp {
  template <class X> TESSERA_HD static auto apply(const X& x) { return convert<dev_t<U>>(x); }
};
template <class Op, class A>
auto make_unary(const A& a) {
  return Unary<Op, expr_t<A>>{as_expr(a)};
}

// A scalar joins an expression as the expression's element type (numpy's weak scalars).
template <class X, class Other>
auto operand(const X& x) {
  if constexpr (ScalarLike<X>) return Scalar<typename expr_t<Other>::value_type>(static_cast<typename expr_t<Other>::value_type>(x));
  else return as_expr(x);
}
template <class Op, class X, class Y>
auto make_binary(const X& x, const Y& y) {
  auto a = operand<X, Y>(x);
  auto b = operand<Y, X>(y);
  return Binary<Op, decltype(a), decltype(b)>(a, b);
}

template <class X> concept Operand = ArrayLike<X> || Expr<X>;
template <class X, class Y> concept BinaryOperands =
    (Operand<X> && (Operand<Y> || ScalarLike<Y>)) || (ScalarLike<X> && Operand<Y>);

/// Elementwise arithmetic, comparison, logical, minimum/maximum and pow of arrays, expressions and
/// scalars (lazy; size-1 dimensions broadcast).
#define TESSERA_BINARY_FN(FN, OP) \
  template <class X, class Y> requires BinaryOperands<X, Y> auto FN(const X& x, const Y& y) { return make_binary<OP>(x, y); }
TESSERA_BINARY_FN(operator+, AddOp)
TESSERA_BINARY_FN(operator-, SubOp)
TESSERA_BINARY_FN(operator*, MulOp)
TESSERA_BINARY_FN(operator/, DivOp)
TESSERA_BINARY_FN(operator==, EqOp)
TESSERA_BINARY_FN(operator!=, NeOp)
TESSERA_BINARY_FN(operator<, LtOp)
TESSERA_BINARY_FN(operator<=, LeOp)
TESSERA_BINARY_FN(operator>, GtOp)
TESSERA_BINARY_FN(operator>=, GeOp)
TESSERA_BINARY_FN(operator&&, AndOp)
TESSERA_BINARY_FN(operator||, OrOp)
TESSERA_BINARY_FN(logical_and, AndOp)
TESSERA_BINARY_FN(logical_or, OrOp)
TESSERA_BINARY_FN(minimum, MinOp)
TESSERA_BINARY_FN(maximum, MaxOp)
TESSERA_BINARY_FN(pow, PowOp)
TESSERA_BINARY_FN(arctan2, Atan2Op)
TESSERA_BINARY_FN(atan2, Atan2Op)
#undef TESSERA_BINARY_FN

/// Elementwise negation, logical not, math functions and real/imag/conj of an array or expression (lazy).
#define TESSERA_UNARY_FN(FN, OP) \
  template <class X> requires Operand<X> auto FN(const X& x) { return make_unary<OP>(x); }
TESSERA_UNARY_FN(operator-, NegOp)
TESSERA_UNARY_FN(operator!, NotOp)
TESSERA_UNARY_FN(logical_not, NotOp)
TESSERA_UNARY_FN(abs, AbsOp)
TESSERA_UNARY_FN(sqrt, SqrtOp)
TESSERA_UNARY_FN(exp, ExpOp)
TESSERA_UNARY_FN(log, LogOp)
TESSERA_UNARY_FN(sin, SinOp)
TESSERA_UNARY_FN(cos, CosOp)
TESSERA_UNARY_FN(tan, TanOp)
TESSERA_UNARY_FN(tanh, TanhOp)
TESSERA_UNARY_FN(rsqrt, RsqrtOp)
TESSERA_UNARY_FN(expm1, Expm1Op)
TESSERA_UNARY_FN(log1p, Log1pOp)
TESSERA_UNARY_FN(sinh, SinhOp)
TESSERA_UNARY_FN(cosh, CoshOp)
TESSERA_UNARY_FN(asin, AsinOp)
TESSERA_UNARY_FN(acos, AcosOp)
TESSERA_UNARY_FN(atan, AtanOp)
TESSERA_UNARY_FN(floor, FloorOp)
TESSERA_UNARY_FN(ceil, CeilOp)
TESSERA_UNARY_FN(round, RoundOp)
TESSERA_UNARY_FN(angle, ArgOp)
TESSERA_UNARY_FN(real, RealOp)
TESSERA_UNARY_FN(imag, ImagOp)
TESSERA_UNARY_FN(conj, ConjOp)
#undef TESSERA_UNARY_FN

/// numpy.clip: minimum(maximum(x, lo), hi) (lazy).
template <class X, class L, class H> requires Operand<X>
auto clip(const X& x, const L& lo, const H& hi) { return minimum(maximum(x, lo), hi); }

/// Elementwise conversion to element type U (complex -> real keeps the real part; lazy).
template <class U, class X> requires Operand<X>
auto cast(const X& x) { return make_unary<CastOp<U>>(x); }

/// Elementwise choice: `a` where `c` is true, else `b` (lazy; scalars take the other branch's type).
template <class C, class A, class B> requires Operand<C>
auto where(const C& c, const A& a, const B& b) {
  auto ec = as_expr(c);
  // Scalars take the other branch's type; if both are scalars they keep their own.
  auto ea = [&] { if constexpr (ScalarLike<A> && !ScalarLike<B>) return operand<A, B>(a); else return as_expr(a); }();
  auto eb = [&] { if constexpr (ScalarLike<B> && !ScalarLike<A>) return operand<B, A>(b); else return as_expr(b); }();
  using W = Where<decltype(ec), decltype(ea), decltype(eb)>;
  auto dev = merge_devices(merge_devices(ec.device(), ea.device(), "where"), eb.device(), "where");
  Shape<(W::rank > 0 ? W::rank : 0)> s{};
  if constexpr (W::rank > 0) {
    s = ec.shape();
    if constexpr (decltype(ea)::rank >= 0) s = broadcast_shapes<W::rank>(s, ea.shape(), "where", dev);
    if constexpr (decltype(eb)::rank >= 0) s = broadcast_shapes<W::rank>(s, eb.shape(), "where", dev);
  }
  return W(ec, ea, eb, dev, s);
}

}  // inline namespace expr_cuda / expr_host
}  // namespace tessera::local
