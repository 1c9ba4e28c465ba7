// sort / argsort of algorithms.hpp: sample sort over the kernels of detail/algo_kernels.hpp.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "../detail/algo_common.hpp"
#include "../detail/algo_kernels.hpp"
#include "tessera/distributed/algorithms.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::distributed {
namespace {
using local::Array;  // (local arrays below; distributed ones spelled out)
template <class T> using DArray = distributed::Array<T, 1>;

// The (key, rank, position) of one regular sample; position -1: none (an empty block).
template <class T> struct Sample {
  T key;
  std::int64_t rank, pos;
};

// The local block sorted (keys, and global indices if `with_index`), each buffer of its result.
template <class T> struct Sorted {
  Array<T, 1> keys;
  Array<index_t, 1> idx;
};
// `in`: the keys to sort out of place (keys only), else null (the keys are in `keys`).
template <class T>
Sorted<T> sort_block(const T* in, Array<T, 1> keys, Array<index_t, 1> idx, bool with_index, const Stream& s) {
  const index_t n = keys.shape(0);
  if (n == 0) return {keys, idx};
  const Device d = keys.device();
  Array<T, 1> k1({n}, d);
  Array<index_t, 1> v1(with_index ? Index<1>{n} : Index<1>{0}, d);
  const int which = detail::sort_kernel(in, keys.data(), k1.data(), with_index ? idx.data() : nullptr,
                                        with_index ? v1.data() : nullptr, n, with_index, s);
  return which ? Sorted<T>{k1, v1} : Sorted<T>{keys, idx};
}

template <class T>
std::pair<DArray<T>, DArray<index_t>> sample_sort(const DArray<T>& a, bool with_index, const char* fn) {
  const Device d = a.device();
  const auto agreed = check_call<T, 1>(fn, a.layout(), d);
  const ProcessGrid g = detail::grid_for(a.layout().grid(), 1);
  const Layout<1> balanced(g, a.global_shape(), {0});
  const DArray<T> in = a.layout().same_blocks(balanced) ? a : redistribute(a, balanced);
  const Stream& s = Stream::default_for(d);
  s.wait_for(in.stream());
  const index_t n = a.global_size(), nl = balanced.local_shape()[0], lo = balanced.local_box().lo[0];
  const int p = g.size(), me = g.rank();

  Array<T, 1> keys({nl}, d);
  const bool direct = !with_index && in.interior().is_contiguous();  // sorted straight out of the input
  if (!direct) local::copy(keys, in.interior());
  Array<index_t, 1> idx(with_index ? Index<1>{nl} : Index<1>{0}, d);
  if (with_index && nl > 0) local::detail::iota(idx, static_cast<double>(lo), 1.0);
  auto local_sorted = sort_block(direct ? in.interior().data() : nullptr, keys, idx, with_index, s);
  a.stream().wait_for(s);
  auto result = [&](const Layout<1>& l, const Sorted<T>& v) -> std::pair<DArray<T>, DArray<index_t>> {
    if (with_index) return {DArray<T>(), DArray<index_t>::wrap(l, v.idx)};
    return {DArray<T>::wrap(l, v.keys), DArray<index_t>()};
  };
  if (p == 1 || n == 0) return result(balanced, local_sorted);

  // p-1 regular samples per rank, gathered everywhere; p-1 splitters from their sorted list.
  const auto& group = g.group();
  const Stream& hs = Stream::default_for(Device::host());
  std::vector<Sample<T>> mine(p - 1, Sample<T>{T{}, me, -1});
  for (int i = 0; i < p - 1 && nl > 0; ++i) {
    const index_t pos = (i + 1) * nl / p;
    mine[i].pos = pos;
    local::copy(Array<T, 1>::view(&mine[i].key, {1}, Device::host()), local_sorted.keys.slice(0, pos, pos + 1));
  }
  std::vector<T> skeys(p * (p - 1));
  std::vector<std::int64_t> sinfo(2 * p * (p - 1)), myinfo(2 * (p - 1));
  std::vector<T> mykeys(p - 1);
  for (int i = 0; i < p - 1; ++i) mykeys[i] = mine[i].key, myinfo[2 * i] = mine[i].rank, myinfo[2 * i + 1] = mine[i].pos;
  group.all_gather(mykeys.data(), skeys.data(), p - 1, dtype_v<T>, hs);
  group.all_gather(myinfo.data(), sinfo.data(), 2 * (p - 1), DType::int64, hs);
  std::vector<Sample<T>> all;
  for (int i = 0; i < p * (p - 1); ++i)
    if (sinfo[2 * i + 1] >= 0) all.push_back({skeys[i], sinfo[2 * i], sinfo[2 * i + 1]});
  std::sort(all.begin(), all.end(), [](const Sample<T>& x, const Sample<T>& y) {
    if (detail::sort_less(x.key, y.key)) return true;
    if (detail::sort_less(y.key, x.key)) return false;
    return std::tie(x.rank, x.pos) < std::tie(y.rank, y.pos);
  });
  std::vector<T> sk(p - 1);
  std::vector<int> sr(p - 1);
  std::vector<index_t> sp(p - 1);
  for (int i = 0; i < p - 1; ++i) {
    const auto& smp = all[std::min<std::size_t>(all.size() - 1, (i + 1) * all.size() / p)];
    sk[i] = smp.key, sr[i] = static_cast<int>(smp.rank), sp[i] = smp.pos;
  }

  // Where this rank's sorted block splits, and the all-to-all-v of keys (and indices).
  std::vector<index_t> cuts(p + 1, 0);
  cuts[p] = nl;
  if (nl > 0) {
    Array<index_t, 1> out({p - 1}, d);
    const auto dk = local::from_host(sk, Index<1>{p - 1}, d);
    const auto dr = local::from_host(sr, Index<1>{p - 1}, d);
    const auto dp = local::from_host(sp, Index<1>{p - 1}, d);
    detail::split_points_kernel(local_sorted.keys.data(), nl, dk.data(), dr.data(), dp.data(), p - 1, me, out.data(), s);
    const auto h = local::to_host(local::to(out, Device::host()));
    for (int i = 0; i < p - 1; ++i) cuts[i + 1] = std::clamp<index_t>(h[i], cuts[i], nl);
  }
  std::vector<std::size_t> sc(p), sd(p), rc(p), rd(p);
  for (int r = 0; r < p; ++r) sd[r] = cuts[r], sc[r] = cuts[r + 1] - cuts[r];
  group.all_to_all(sc.data(), rc.data(), 1, DType::int64, hs);
  std::size_t got = 0;
  for (int r = 0; r < p; ++r) rd[r] = got, got += rc[r];
  Array<T, 1> rk({static_cast<index_t>(got)}, d);
  Array<index_t, 1> ri(with_index ? Index<1>{static_cast<index_t>(got)} : Index<1>{0}, d);
  group.all_to_allv(local_sorted.keys.data(), sc, sd, rk.data(), rc, rd, dtype_v<T>, s);
  if (with_index) group.all_to_allv(local_sorted.idx.data(), sc, sd, ri.data(), rc, rd, DType::int64, s);
  // The received runs arrive in rank order (global index order within equal keys): a stable sort
  // of their concatenation is their merge.
  auto merged = sort_block<T>(nullptr, rk, ri, with_index, s);

  // Bucket r is global range [sum of earlier buckets, ...): balance it with one redistribute.
  std::vector<std::int64_t> counts(p);
  const std::int64_t mycount = static_cast<std::int64_t>(got);
  group.all_gather(&mycount, counts.data(), 1, DType::int64, hs);
  std::vector<index_t> offs(p + 1, 0);
  for (int r = 0; r < p; ++r) offs[r + 1] = offs[r] + counts[r];
  const Layout<1> buckets(g, {n}, {0}, {offs}, {0});
  auto out = result(buckets, merged);
  if (buckets.same_blocks(balanced)) return out;
  if (with_index) return {DArray<T>(), redistribute(out.second, balanced)};
  return {redistribute(out.first, balanced), DArray<index_t>()};
}

// A layout of l's shape on which `axis` is whole on every rank: l (without halos) if it does
// not split `axis`, else a 1-D grid of l's group splitting the longest other axis.
template <int R> Layout<R> whole_along(const Layout<R>& l, int axis) {
  const int g = l.split()[axis];
  if (g < 0 || l.grid().dims()[g] == 1) return l.with_halo({});
  int other = axis == 0 ? 1 : 0;
  for (int ax = 0; ax < R; ++ax)
    if (ax != axis && l.global_shape()[ax] > l.global_shape()[other]) other = ax;
  typename Layout<R>::Split split;
  split.fill(-1);
  split[other] = 0;
  return Layout<R>(detail::grid_for(l.grid(), 1), l.global_shape(), split);
}

// Rows along `axis` sorted on a layout where the axis is whole (values, or indices along the axis).
template <class T, int R>
std::pair<distributed::Array<T, R>, distributed::Array<index_t, R>> sort_rows(const distributed::Array<T, R>& a,
                                                                               int axis, bool with_index) {
  const Device d = a.device();
  const Layout<R> whole = whole_along(a.layout(), axis);
  const distributed::Array<T, R> in = a.layout().same_blocks(whole) ? a : redistribute(a, whole);
  const Stream& s = Stream::default_for(d);
  s.wait_for(in.stream());
  const auto blk = in.interior();
  const index_t n = blk.size(), len = blk.shape(axis);
  index_t inner = 1;
  for (int ax = axis + 1; ax < R; ++ax) inner *= blk.shape(ax);
  local::Array<T, R> values(with_index ? Index<R>{} : blk.shape(), d);
  local::Array<index_t, R> indices(with_index ? blk.shape() : Index<R>{}, d);
  if (n > 0) {
    // The block in row-major order: the input itself where it is contiguous.
    local::Array<T, 1> copy(blk.is_contiguous() ? Index<1>{0} : Index<1>{n}, d);
    if (!blk.is_contiguous()) local::copy(copy.template reshape<R>(blk.shape()), blk);
    const T* flat = blk.is_contiguous() ? blk.data() : copy.data();
    // Stable by key, then stable by row: each row's positions in key order.
    local::Array<index_t, 1> pos({n}, d);
    local::detail::iota(pos, 0.0, 1.0);
    const auto by_key = sort_block<T>(flat, local::Array<T, 1>({n}, d), pos, true, s);
    local::Array<index_t, 1> rows({n}, d);
    detail::rows_of_kernel(by_key.idx.data(), n, len, inner, rows.data(), s);
    const auto by_row = sort_block<index_t>(nullptr, rows, by_key.idx, true, s);
    local::Array<index_t, 1> dst({n}, d);
    if (with_index) {
      local::Array<index_t, 1> along({n}, d);
      detail::places_of_kernel(by_row.idx.data(), n, len, inner, dst.data(), along.data(), s);
      detail::scatter_kernel(indices.data(), dst.data(), along.data(), n, s);
    } else if (inner == 1) {  // rows are contiguous: the q-th in order is the q-th out
      detail::gather_kernel(flat, by_row.idx.data(), n, values.data(), s);
    } else {
      local::Array<T, 1> ordered({n}, d);
      detail::gather_kernel(flat, by_row.idx.data(), n, ordered.data(), s);
      detail::places_of_kernel(by_row.idx.data(), n, len, inner, dst.data(), nullptr, s);
      detail::scatter_kernel(values.data(), dst.data(), ordered.data(), n, s);
    }
  }
  in.stream().wait_for(s);
  a.stream().wait_for(s);
  if (with_index) return {distributed::Array<T, R>(), distributed::Array<index_t, R>::wrap(whole, indices)};
  return {distributed::Array<T, R>::wrap(whole, values), distributed::Array<index_t, R>()};
}

// sort / argsort along `axis`, on a's blocks without halos.
template <class T, int R>
std::pair<distributed::Array<T, R>, distributed::Array<index_t, R>> sort_along(const distributed::Array<T, R>& a,
                                                                                int axis, bool with_index,
                                                                                const char* fn) {
  const Device d = a.device();
  if (axis < 0 || axis >= R)
    throw InvalidArgument(std::string("distributed::") + fn + ": axis " + std::to_string(axis) +
                              " out of range for a " + std::to_string(R) + "-D array",
                          d);
  const Layout<R> target = a.layout().with_halo({});
  std::pair<distributed::Array<T, R>, distributed::Array<index_t, R>> r;
  if constexpr (R == 1) {
    r = sample_sort(a, with_index, fn);
  } else {
    const auto agreed = check_call<T, R>(fn, a.layout(), d, "axis", axis);
    r = sort_rows(a, axis, with_index);
  }
  auto& got = with_index ? r.second.layout() : r.first.layout();
  if (got.same_blocks(target)) return r;
  if (with_index) return {distributed::Array<T, R>(), redistribute(r.second, target)};
  return {redistribute(r.first, target), distributed::Array<index_t, R>()};
}
}  // namespace

template <class T, int R> distributed::Array<T, R> sort(const distributed::Array<T, R>& a, int axis) {
  return sort_along(a, axis, false, "sort").first;
}
template <class T, int R> distributed::Array<std::int64_t, R> argsort(const distributed::Array<T, R>& a, int axis) {
  return sort_along(a, axis, true, "argsort").second;
}

template <class T> DArray<T> sort(const DArray<T>& a) { return sample_sort(a, false, "sort").first; }
template <class T> DArray<std::int64_t> argsort(const DArray<T>& a) { return sample_sort(a, true, "argsort").second; }

#define TESSERA_SORT_RANK(T, R)                                                                       \
  template distributed::Array<T, R> sort<T, R>(const distributed::Array<T, R>&, int);                  \
  template distributed::Array<std::int64_t, R> argsort<T, R>(const distributed::Array<T, R>&, int);
#define TESSERA_SORT(T)                                  \
  template DArray<T> sort<T>(const DArray<T>&);          \
  template DArray<std::int64_t> argsort<T>(const DArray<T>&); \
  TESSERA_FOR_EACH_RANK(TESSERA_SORT_RANK, T)
TESSERA_FOR_EACH_INTEGER(TESSERA_SORT)
TESSERA_FOR_EACH_REAL(TESSERA_SORT)

}  // namespace tessera::distributed
