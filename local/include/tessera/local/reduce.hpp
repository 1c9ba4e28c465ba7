// Reductions: sum, prod, min, max, mean, argmin, argmax, norm2, dot, any, all — over the whole
// array (a host scalar, or a one-element device array with `on_device`, then no host sync) or
// along one axis (an array; keepdims keeps the axis with extent 1). CUB block reductions on CUDA;
// pairwise summation on host. Integer and bool sums accumulate in int64, as numpy does.
#pragma once
#include <type_traits>

#include "tessera/local/basic_ops.hpp"

namespace tessera::local {

/// The reductions.
enum class ReduceOp { sum, prod, min, max, argmin, argmax, any, all, sumsq };
/// Tags: the result as a one-element device array (no host sync); keep the reduced axis.
struct OnDevice {};
inline constexpr OnDevice on_device{};
struct KeepDims {};
inline constexpr KeepDims keepdims{};

/// The real type of T (T itself unless complex); the sum type (int64 for integers and bool).
template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using real_t = typename real_of<T>::type;
template <class T> using sum_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;

/// The accumulator/result type of each reduction of T.
template <class T, ReduceOp Op> struct reduce_result {
  using type = std::conditional_t<
      Op == ReduceOp::sum || Op == ReduceOp::prod, sum_t<T>,
      std::conditional_t<Op == ReduceOp::argmin || Op == ReduceOp::argmax, std::int64_t,
                         std::conditional_t<Op == ReduceOp::any || Op == ReduceOp::all, bool,
                                            std::conditional_t<Op == ReduceOp::sumsq, real_t<T>, T>>>>;
};
template <class T, ReduceOp Op> using reduce_result_t = typename reduce_result<T, Op>::type;

namespace detail {
// result points to host memory, or to device memory on a.device() when on_device.
template <class T, ReduceOp Op>
void reduce_all6(const Array6<T>& a, reduce_result_t<T, Op>* result, bool on_device);
// out has a's shape with extent 1 along axis.
template <class T, ReduceOp Op>
void reduce_axis6(const Array6<T>& a, int axis, const Array6<reduce_result_t<T, Op>>& out);

template <ReduceOp Op, class T, int R>
reduce_result_t<T, Op> reduce_host_scalar(const Array<T, R>& a) {
  reduce_result_t<T, Op> r{};
  reduce_all6<T, Op>(widen(a), &r, false);
  return r;
}
template <ReduceOp Op, class T, int R>
Array<reduce_result_t<T, Op>, 1> reduce_device_scalar(const Array<T, R>& a) {
  Array<reduce_result_t<T, Op>, 1> r({1}, a.device());
  reduce_all6<T, Op>(widen(a), r.data(), a.device().is_cuda());
  return r;
}
template <ReduceOp Op, class T, int R>
Array<reduce_result_t<T, Op>, R> reduce_keepdims(const Array<T, R>& a, int axis) {
  if (axis < 0 || axis >= R)
    throw InvalidArgument("reduction axis " + std::to_string(axis) + " out of range for rank " + std::to_string(R),
                          a.device());
  Shape<R> s = a.shape();
  s[axis] = 1;
  Array<reduce_result_t<T, Op>, R> out(s, a.device());
  reduce_axis6<T, Op>(widen(a), kMaxRank - R + axis, widen(out));
  return out;
}
template <ReduceOp Op, class T, int R>
Array<reduce_result_t<T, Op>, R - 1> reduce_axis(const Array<T, R>& a, int axis) {
  static_assert(R >= 1, "reduce along an axis of a rank-0 array");
  auto k = reduce_keepdims<Op>(a, axis);
  Shape<R - 1> s{};
  for (int d = 0, j = 0; d < R; ++d)
    if (d != axis) s[j++] = a.shape()[d];
  return k.template reshape<R - 1>(s);
}
}  // namespace detail

/// NAME(a) -> host scalar; NAME(a, on_device) -> one-element array; NAME(a, axis[, keepdims]).
#define TESSERA_REDUCTION(NAME, OP)                                                                       \
  template <class T, int R> auto NAME(const Array<T, R>& a) { return detail::reduce_host_scalar<OP>(a); }  \
  template <class T, int R> auto NAME(const Array<T, R>& a, OnDevice) {                                   \
    return detail::reduce_device_scalar<OP>(a);                                                           \
  }                                                                                                       \
  template <class T, int R> auto NAME(const Array<T, R>& a, int axis) { return detail::reduce_axis<OP>(a, axis); } \
  template <class T, int R> auto NAME(const Array<T, R>& a, int axis, KeepDims) {                         \
    return detail::reduce_keepdims<OP>(a, axis);                                                          \
  }
TESSERA_REDUCTION(sum, ReduceOp::sum)
TESSERA_REDUCTION(prod, ReduceOp::prod)
TESSERA_REDUCTION(min, ReduceOp::min)
TESSERA_REDUCTION(max, ReduceOp::max)
TESSERA_REDUCTION(argmin, ReduceOp::argmin)  // flat row-major index of the first minimum
TESSERA_REDUCTION(argmax, ReduceOp::argmax)
TESSERA_REDUCTION(any, ReduceOp::any)
TESSERA_REDUCTION(all, ReduceOp::all)
TESSERA_REDUCTION(sum_squares, ReduceOp::sumsq)  // sum of |x|^2
#undef TESSERA_REDUCTION

/// Mean as double for integers (numpy), else in T.
template <class T, int R> auto mean(const Array<T, R>& a) {
  if (a.size() == 0) throw InvalidArgument("mean of an empty array", a.device());
  using M = std::conditional_t<std::is_integral_v<T>, double, T>;
  return static_cast<M>(sum(a)) / static_cast<real_t<M>>(a.size());
}
/// The Euclidean norm, sqrt(sum of |x|^2).
template <class T, int R> real_t<T> norm2(const Array<T, R>& a) { return std::sqrt(sum_squares(a)); }
/// sum(a * b) (no conjugation, as numpy.dot of vectors); shapes must match.
template <class T, int R> sum_t<T> dot(const Array<T, R>& a, const Array<T, R>& b) {
  Array<T, R> prod_ab(a.shape(), a.device());
  mul(prod_ab, a, b);
  return sum(prod_ab);
}

}  // namespace tessera::local
