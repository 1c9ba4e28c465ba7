// Reductions of distributed arrays (interiors only; halos never count).
//  - Whole array -> the same host scalar on every rank: sum, prod, min, max, any, all, mean,
//    sum_squares, norm2, dot(a, b), argmin/argmax (global flat row-major index of the first
//    extremum). Each rank reduces its interior on its device (no host sync), one collective over
//    the grid's group combines the partial results on the device (NCCL on GPUs), and one copy
//    brings the result to the host. Result types follow local::reduce_result_t (integer sums in
//    int64; mean of integers in double).
//  - Along an axis -> a distributed array with that axis of extent 1 and unsplit (keepdims), the
//    other axes' blocks as in the input, no halos: sum, prod, min, max, any, all, argmin/argmax
//    (global index along the axis), mean. When the axis is split, the local partial results are
//    all-reduced over grid.axis_group(split axis), so every rank of that group holds the result.
// Replicated grid axes (splitting no array axis) hold copies of the same data: only the ranks at
// coordinate 0 on those axes contribute to whole-array reductions, the others contribute the
// identity (so nothing counts twice; the copies are assumed equal and are not compared).
// min, max, argmin, argmax and mean of an empty array (or along an axis of extent 0) throw
// InvalidArgument on every rank. Complex arrays: sum, prod, any, all, sum_squares, norm2, dot,
// mean. Float sums combine per-rank partial sums, so they may differ from a serial sum in the
// last bits (and differ with the rank count); integer results are exact.
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/reduce.hpp"

namespace tessera::distributed {

namespace detail {
using local::ReduceOp;
template <class T, ReduceOp Op> using red_t = local::reduce_result_t<T, Op>;

constexpr bool has_identity(ReduceOp op) {
  return op != ReduceOp::min && op != ReduceOp::max && op != ReduceOp::argmin && op != ReduceOp::argmax;
}
constexpr bool is_arg(ReduceOp op) { return op == ReduceOp::argmin || op == ReduceOp::argmax; }

// The value a rank without data contributes.
template <class T, ReduceOp Op>
red_t<T, Op> identity() {
  using L = std::numeric_limits<T>;
  if constexpr (Op == ReduceOp::prod || Op == ReduceOp::all) return red_t<T, Op>(1);
  else if constexpr (Op == ReduceOp::min) return L::has_infinity ? L::infinity() : L::max();
  else if constexpr (Op == ReduceOp::max) return L::has_infinity ? -L::infinity() : L::lowest();
  else return red_t<T, Op>(0);
}

inline comm::ReduceOp comm_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod:
    case ReduceOp::all: return comm::ReduceOp::prod;  // bool: logical and
    case ReduceOp::min: return comm::ReduceOp::min;
    case ReduceOp::max:
    case ReduceOp::any: return comm::ReduceOp::max;  // bool: logical or
    default: return comm::ReduceOp::sum;
  }
}

// Whether this rank's data counts: coordinate 0 on every grid axis that splits no array axis.
template <int R>
bool contributes(const Layout<R>& l) {
  const auto& grid = l.grid();
  for (int g = 0; g < grid.ndims(); ++g) {
    bool splits = false;
    for (int a = 0; a < R; ++a) splits = splits || l.split()[a] == g;
    if (!splits && grid.coords()[g] != 0) return false;
  }
  return true;
}

inline std::string where(const char* fn) { return std::string("distributed::") + fn; }

template <int R>
void check_nonempty(ReduceOp op, const Layout<R>& l, index_t extent, const char* fn, Device d) {
  if (extent == 0 && !has_identity(op))
    throw InvalidArgument(where(fn) + " of zero elements (no identity) in " + l.str(), d);
}

// Global flat index of element `k` (row-major) of the block of `rank`.
template <int R>
index_t global_flat(const Layout<R>& l, int rank, index_t k) {
  const auto box = l.local_box(rank);
  const auto shape = box.shape();
  const auto gs = local::row_major_strides(l.global_shape());
  index_t g = 0;
  for (int a = R - 1; a >= 0; --a) {
    g += (box.lo[a] + k % shape[a]) * gs[a];
    k /= shape[a];
  }
  return g;
}

// For each j < m, among parts p < `parts` with idx[p*m+j] >= 0 (-1: no data): the idx of the best
// vals[p*m+j], ties to the smallest idx (argmin if is_min, else argmax); written to out[j].
// Precompiled for bool, int32, int64, float, double; ordered on `s`.
template <class T>
void arg_combine(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out, const Stream& s);

// Reduces `in` (this rank's interior, or a product of interiors) over the whole distributed array.
template <ReduceOp Op, class T, int R>
red_t<T, Op> reduce_all(const local::Array<T, R>& in, const Layout<R>& l, const char* fn) {
  static_assert(!is_arg(Op));
  using Res = red_t<T, Op>;
  const Device d = in.device();
  const auto agreed = check_call<T, R>(fn, l, d);
  const Stream& s = Stream::default_for(d);  // where local operations run
  check_nonempty(Op, l, l.global_size(), fn, d);
  local::Array<Res, 1> part({1}, d);
  if (contributes(l) && in.size() > 0)
    local::detail::reduce_all6<T, Op>(local::detail::widen(in), part.data(), d.is_cuda());
  else
    local::fill(part, identity<T, Op>());
  const auto& group = l.grid().group();
  Res r{};
  if constexpr (is_complex_v<Res> && Op == ReduceOp::prod) {  // NCCL/MPI reduce complex by sum only
    local::Array<Res, 1> all({group.size()}, d);
    group.all_gather(part.data(), all.data(), 1, dtype_v<Res>, s);
    r = Res(1);
    for (const Res& v : local::to_host(all)) r *= v;
  } else {
    group.all_reduce(part.data(), part.data(), 1, dtype_v<Res>, comm_op(Op), s);
    local::copy(local::Array<Res, 1>::view(&r, {1}, Device::host()), part);
  }
  return r;
}

template <ReduceOp Op, class T, int R>
index_t arg_reduce_all(const Array<T, R>& a, const char* fn) {
  static_assert(!is_complex_v<T>, "argmin/argmax of complex values are not defined");
  constexpr ReduceOp VOp = Op == ReduceOp::argmin ? ReduceOp::min : ReduceOp::max;
  const Device d = a.device();
  const auto agreed = check_call<T, R>(fn, a.layout(), d);
  const Stream& s = Stream::default_for(d);
  const auto& l = a.layout();
  s.wait_for(a.stream());
  check_nonempty(Op, l, l.global_size(), fn, d);
  const auto in = a.interior();
  local::Array<T, 1> val({1}, d);
  local::Array<index_t, 1> idx({1}, d);
  if (contributes(l) && in.size() > 0) {
    local::detail::reduce_all6<T, VOp>(local::detail::widen(in), val.data(), d.is_cuda());
    local::detail::reduce_all6<T, Op>(local::detail::widen(in), idx.data(), d.is_cuda());
  } else {
    local::fill(val, T{});
    local::fill(idx, index_t{-1});
  }
  // Every rank's (value, local index); each rank knows every block, so it maps them to global
  // indices and picks the winner itself.
  const auto& group = l.grid().group();
  local::Array<T, 1> vals({group.size()}, d);
  local::Array<index_t, 1> idxs({group.size()}, d);
  group.all_gather(val.data(), vals.data(), 1, dtype_v<T>, s);
  group.all_gather(idx.data(), idxs.data(), 1, DType::int64, s);
  const auto hv = local::to_host(vals);
  const auto hi = local::to_host(idxs);
  index_t best = -1;
  T bv{};
  for (int r = 0; r < group.size(); ++r) {
    if (hi[r] < 0) continue;
    const T v = hv[r];
    const index_t g = global_flat(l, r, hi[r]);
    const bool better = Op == ReduceOp::argmin ? v < bv : bv < v;
    if (best < 0 || better || (!(v < bv) && !(bv < v) && g < best)) best = g, bv = v;
  }
  return best;
}

// The layout of a reduction along `axis`: extent 1 there, unsplit; other blocks kept; no halos.
template <int R>
Layout<R> reduced_layout(const Layout<R>& l, int axis) {
  auto global = l.global_shape();
  auto split = l.split();
  auto periodic = l.periodic();
  typename Layout<R>::Offsets offsets;
  for (int a = 0; a < R; ++a) offsets[a] = l.offsets(a);
  global[axis] = 1, split[axis] = -1, periodic[axis] = false, offsets[axis] = {0, 1};
  return Layout<R>(l.grid(), global, split, std::move(offsets), Index<R>{}, periodic);
}

template <ReduceOp Op, class T, int R>
Array<red_t<T, Op>, R> reduce_along(const Array<T, R>& a, int axis, const char* fn) {
  using Res = red_t<T, Op>;
  const Device d = a.device();
  const auto agreed = check_call<T, R>(fn, a.layout(), d, "axis", axis);
  if (axis < 0 || axis >= R)
    throw InvalidArgument(where(fn) + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(R), d);
  const Stream& s = Stream::default_for(d);
  const auto& l = a.layout();
  s.wait_for(a.stream());
  check_nonempty(Op, l, l.global_shape()[axis], fn, d);
  Array<Res, R> out(reduced_layout(l, axis), d);
  const auto in = a.interior();
  const auto o = out.local();
  const int wa = local::detail::kMaxRank - R + axis;  // the axis in the widened (6-d) arrays
  const int g = l.split()[axis];
  const bool spread = g >= 0 && l.grid().dims()[g] > 1;
  if constexpr (is_arg(Op)) {
    static_assert(!is_complex_v<T>, "argmin/argmax of complex values are not defined");
    constexpr ReduceOp VOp = Op == ReduceOp::argmin ? ReduceOp::min : ReduceOp::max;
    local::Array<T, R> v(spread ? o.shape() : Index<R>{}, d);  // the local extremum, compared across ranks
    if (o.size() > 0 && in.shape(axis) > 0) {
      local::detail::reduce_axis6<T, Op>(local::detail::widen(in), wa, local::detail::widen(o));
      if (const index_t lo = l.local_box().lo[axis]; lo > 0) {  // local -> global index along axis
        Index<R> ones;
        ones.fill(1);
        local::add(o, o, local::full<index_t, std::size_t(R)>(ones, lo, d));
      }
      if (spread) local::detail::reduce_axis6<T, VOp>(local::detail::widen(in), wa, local::detail::widen(v));
    } else if (o.size() > 0) {  // an empty block (the axis is split: global extent > 0)
      local::fill(o, index_t{-1});
      local::fill(v, T{});
    }
    if (spread) {
      const auto& group = l.grid().axis_group(g);
      const auto m = static_cast<std::size_t>(o.size());
      local::Array<T, 1> vals({static_cast<index_t>(m) * group.size()}, d);
      local::Array<index_t, 1> idxs({static_cast<index_t>(m) * group.size()}, d);
      group.all_gather(v.data(), vals.data(), m, dtype_v<T>, s);
      group.all_gather(o.data(), idxs.data(), m, DType::int64, s);
      arg_combine<T>(vals.data(), idxs.data(), group.size(), o.size(), Op == ReduceOp::argmin, o.data(), s);
    }
    return out;
  } else {
    if (o.size() > 0) {
      if (in.shape(axis) > 0) local::detail::reduce_axis6<T, Op>(local::detail::widen(in), wa, local::detail::widen(o));
      else local::fill(o, identity<T, Op>());
    }
    if (!spread) return out;
    const auto& group = l.grid().axis_group(g);
    const auto m = static_cast<std::size_t>(o.size());
    if constexpr (is_complex_v<Res> && Op == ReduceOp::prod) {  // gather the partials, multiply locally
      local::Array<Res, 2> all({group.size(), o.size()}, d);
      group.all_gather(o.data(), all.data(), m, dtype_v<Res>, s);
      local::detail::reduce_axis6<Res, ReduceOp::prod>(local::detail::widen(all), local::detail::kMaxRank - 2,
                                                      local::detail::widen(o.template reshape<2>({1, o.size()})));
    } else {
      group.all_reduce(o.data(), o.data(), m, dtype_v<Res>, comm_op(Op), s);
    }
    return out;
  }
}
}  // namespace detail

/// NAME(a) -> the same host scalar on every rank; NAME(a, axis) -> an array, that axis of extent 1.
#define TESSERA_DIST_REDUCTION(NAME, OP)                                                                 \
  template <class T, int R> auto NAME(const Array<T, R>& a) {                                           \
    Stream::default_for(a.device()).wait_for(a.stream());                                          \
    return detail::reduce_all<OP>(a.interior(), a.layout(), #NAME);                                      \
  }                                                                                                      \
  template <class T, int R> auto NAME(const Array<T, R>& a, int axis) { return detail::reduce_along<OP>(a, axis, #NAME); }
TESSERA_DIST_REDUCTION(sum, local::ReduceOp::sum)
TESSERA_DIST_REDUCTION(prod, local::ReduceOp::prod)
TESSERA_DIST_REDUCTION(min, local::ReduceOp::min)
TESSERA_DIST_REDUCTION(max, local::ReduceOp::max)
TESSERA_DIST_REDUCTION(any, local::ReduceOp::any)
TESSERA_DIST_REDUCTION(all, local::ReduceOp::all)
#undef TESSERA_DIST_REDUCTION

/// sum of |x|^2 (real), and its square root.
template <class T, int R> local::real_t<T> sum_squares(const Array<T, R>& a) {
  Stream::default_for(a.device()).wait_for(a.stream());
  return detail::reduce_all<local::ReduceOp::sumsq>(a.interior(), a.layout(), "sum_squares");
}
template <class T, int R> local::real_t<T> norm2(const Array<T, R>& a) { return std::sqrt(sum_squares(a)); }

/// Global flat row-major index of the first minimum / maximum.
template <class T, int R> index_t argmin(const Array<T, R>& a) {
  return detail::arg_reduce_all<local::ReduceOp::argmin>(a, "argmin");
}
template <class T, int R> index_t argmax(const Array<T, R>& a) {
  return detail::arg_reduce_all<local::ReduceOp::argmax>(a, "argmax");
}
/// Global index along `axis` of the first minimum / maximum.
template <class T, int R> Array<index_t, R> argmin(const Array<T, R>& a, int axis) {
  return detail::reduce_along<local::ReduceOp::argmin>(a, axis, "argmin");
}
template <class T, int R> Array<index_t, R> argmax(const Array<T, R>& a, int axis) {
  return detail::reduce_along<local::ReduceOp::argmax>(a, axis, "argmax");
}

/// Mean: double for integers and bool (numpy), else T; of the whole array, or along `axis`.
template <class T> using mean_t = std::conditional_t<std::is_integral_v<T>, double, T>;
template <class T, int R> mean_t<T> mean(const Array<T, R>& a) {
  detail::check_nonempty(local::ReduceOp::min, a.layout(), a.global_size(), "mean", a.device());
  return static_cast<mean_t<T>>(sum(a)) / static_cast<local::real_t<mean_t<T>>>(a.global_size());
}
template <class T, int R> Array<mean_t<T>, R> mean(const Array<T, R>& a, int axis) {
  using M = mean_t<T>;
  auto s = sum(a, axis);  // checks the axis
  const index_t n = a.global_shape()[axis];
  detail::check_nonempty(local::ReduceOp::min, a.layout(), n, "mean", a.device());
  Array<M, R> m;
  if constexpr (std::is_same_v<M, local::sum_t<T>>) {
    m = s;
  } else {
    m = Array<M, R>(s.layout(), s.device());
    local::cast(m.local(), s.local());
  }
  Index<R> ones;
  ones.fill(1);
  local::div(m.local(), m.local(), local::full<M, std::size_t(R)>(ones, M(n), a.device()));
  return m;
}

/// sum(a * b) over the interiors (no conjugation, as numpy.dot of vectors). a and b must have the
/// same blocks (LayoutMismatch otherwise) and device (DeviceMismatch).
template <class T, int R> local::sum_t<T> dot(const Array<T, R>& a, const Array<T, R>& b) {
  if (a.device() != b.device())
    throw DeviceMismatch("device mismatch in distributed::dot: " + a.device().str() + " vs " + b.device().str(),
                         a.device());
  if (!a.layout().same_blocks(b.layout()))
    throw LayoutMismatch("layout mismatch in distributed::dot: " + a.layout().str() + " vs " + b.layout().str() +
                         " (redistribute one first)");
  const Stream& s = Stream::default_for(a.device());
  s.wait_for(a.stream());
  s.wait_for(b.stream());
  local::Array<T, R> ab(a.interior().shape(), a.device());
  local::mul(ab, a.interior(), b.interior());
  return detail::reduce_all<local::ReduceOp::sum>(ab, a.layout(), "dot");
}

}  // namespace tessera::distributed
