// histogram, bincount, flatnonzero, compress and where of algorithms.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "../detail/algo_common.hpp"
#include "../detail/algo_kernels.hpp"
#include "tessera/distributed/algorithms.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::distributed {
namespace {
std::string where_(const char* fn) { return std::string("distributed::") + fn; }

// The interior as a contiguous local array (a copy only where halos make it strided).
template <class T, int R> local::Array<T, R> dense(const Array<T, R>& a) {
  const auto in = a.interior();
  if (in.is_contiguous()) return in;
  local::Array<T, R> c(in.shape(), a.device());
  local::copy(c, in);
  return c;
}

template <class A, class B> void same_blocks(const A& a, const B& b, const char* fn) {
  if (a.device() != b.device())
    throw DeviceMismatch("device mismatch in " + where_(fn) + ": " + a.device().str() + " vs " + b.device().str(), a.device());
  if (!a.layout().same_blocks(b.layout()))
    throw LayoutMismatch("layout mismatch in " + where_(fn) + ": " + a.layout().str() + " vs " + b.layout().str() +
                         " (redistribute one first)");
}

template <class T, int R>
local::Array<std::int64_t, 1> count_bins(const Array<T, R>& x, index_t bins, double lo, double hi) {
  const Device d = x.device();
  const Stream& s = Stream::default_for(d);
  s.wait_for(x.stream());
  local::Array<std::int64_t, 1> counts({bins}, d);
  if (bins == 0) return counts;
  local::fill(counts, std::int64_t(0));
  if (detail::contributes(x.layout()) && x.interior().size() > 0) {
    const auto in = dense(x);
    detail::histogram_kernel(in.data(), in.size(), lo, hi, bins, counts.data(), s);
  }
  x.layout().grid().group().all_reduce(counts.data(), counts.data(), static_cast<std::size_t>(bins), DType::int64,
                                       comm::ReduceOp::sum, s);
  return counts;
}

// a's data on row blocks of a 1-D grid (rank order = row-major order), contiguous.
template <class T, int R> local::Array<T, R> rows_of(const Array<T, R>& a, const Layout<R>& rows) {
  return dense(a.layout().same_blocks(rows) ? a : redistribute(a, rows));
}
template <int R> Layout<R> row_layout(const Layout<R>& l) {
  typename Layout<R>::Split split;
  split.fill(-1);
  split[0] = 0;
  return Layout<R>(detail::grid_for(l.grid(), 1), l.global_shape(), split);
}

// The selected values of every rank (in rank order) as one array on balanced 1-D blocks.
template <class T>
Array<T, 1> balance(local::Array<T, 1> picked, index_t k, const ProcessGrid& g, const Device& d) {
  const auto& group = g.group();
  std::vector<std::int64_t> counts(group.size());
  const std::int64_t mine = k;
  group.all_gather(&mine, counts.data(), 1, DType::int64, Stream::default_for(Device::host()));
  std::vector<index_t> offs(group.size() + 1, 0);
  for (int r = 0; r < group.size(); ++r) offs[r + 1] = offs[r] + counts[r];
  const index_t n = offs.back();
  const Layout<1> parts(g, {n}, {0}, {offs}, {0}), balanced(g, {n}, {0});
  auto a = Array<T, 1>::wrap(parts, k == picked.shape(0) ? picked : picked.slice(0, 0, k));
  return parts.same_blocks(balanced) ? a : redistribute(a, balanced);
}
}  // namespace

template <class T, int R>
local::Array<std::int64_t, 1> histogram(const Array<T, R>& x, index_t bins, double lo, double hi) {
  const auto agreed = check_call<T, R>("histogram", x.layout(), x.device(), "bins", bins, "range",
                                       std::to_string(lo) + "," + std::to_string(hi));
  if (bins <= 0 || !(lo < hi))
    throw InvalidArgument(where_("histogram") + ": needs bins > 0 and lo < hi, got bins " + std::to_string(bins) +
                              " over [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
                          x.device());
  return count_bins(x, bins, lo, hi);
}

template <class T, int R> local::Array<std::int64_t, 1> bincount(const Array<T, R>& x, index_t minlength) {
  const auto agreed = check_call<T, R>("bincount", x.layout(), x.device(), "minlength", minlength);
  if (minlength < 0)
    throw InvalidArgument(where_("bincount") + ": minlength " + std::to_string(minlength) + " < 0", x.device());
  index_t bins = minlength;
  if (x.global_size() > 0) {
    const auto lo = min(x);
    if (lo < 0) throw InvalidArgument(where_("bincount") + ": negative value " + std::to_string(lo), x.device());
    bins = std::max<index_t>(bins, static_cast<index_t>(max(x)) + 1);
  }
  return count_bins(x, bins, 0.0, static_cast<double>(bins));
}

template <class T, int R> Array<std::int64_t, 1> flatnonzero(const Array<T, R>& a) {
  const Device d = a.device();
  const auto agreed = check_call<T, R>("flatnonzero", a.layout(), d);
  const auto rows = row_layout(a.layout());
  const auto in = rows_of(a, rows);
  const Stream& s = Stream::default_for(d);
  const index_t nl = in.size();
  local::Array<std::int64_t, 1> idx({nl}, d), picked({nl}, d);
  index_t k = 0;
  if (nl > 0) {
    local::Array<bool, 1> flags({nl}, d);
    detail::nonzero_flags_kernel(in.data(), nl, flags.data(), s);
    const index_t first = rows.local_box().lo[0] * (a.global_size() / std::max<index_t>(1, a.global_shape()[0]));
    local::detail::iota(idx, static_cast<double>(first), 1.0);
    k = detail::compact_kernel(idx.data(), flags.data(), nl, picked.data(), s);
  }
  return balance(picked, k, rows.grid(), d);
}

template <class T, int R> Array<T, 1> compress(const Array<bool, R>& mask, const Array<T, R>& a) {
  const Device d = a.device();
  const auto agreed = check_call<T, R>("compress", a.layout(), d, "mask", mask.layout());
  same_blocks(a, mask, "compress");
  const auto rows = row_layout(a.layout());
  const auto in = rows_of(a, rows);
  const auto flags = rows_of(mask, rows);
  const index_t nl = in.size();
  local::Array<T, 1> picked({nl}, d);
  const index_t k = nl > 0 ? detail::compact_kernel(in.data(), flags.data(), nl, picked.data(), Stream::default_for(d)) : 0;
  return balance(picked, k, rows.grid(), d);
}

template <class T, int R> Array<T, 1> ravel(const Array<T, R>& a) {
  const auto agreed = check_call<T, R>("ravel", a.layout(), a.device());
  const auto rows = row_layout(a.layout());
  const auto in = rows_of(a, rows);  // row blocks: this rank's elements are one flat range
  const index_t row = a.global_size() / std::max<index_t>(1, a.global_shape()[0]);
  std::vector<index_t> offs(rows.offsets(0));
  for (auto& o : offs) o *= row;
  return Array<T, 1>::wrap(Layout<1>(rows.grid(), {a.global_size()}, {0}, {offs}, {0}),
                           in.template reshape<1>({in.size()}));
}

template <class T, int R> Array<T, R> where(const Array<bool, R>& c, const Array<T, R>& x, const Array<T, R>& y) {
  const Device d = x.device();
  const auto agreed = check_call<T, R>("where", x.layout(), d);
  same_blocks(x, c, "where");
  same_blocks(x, y, "where");
  const Stream& s = Stream::default_for(d);
  for (const Stream* st : {&c.stream(), &x.stream(), &y.stream()}) s.wait_for(*st);
  Array<T, R> out(x.layout().with_halo({}), d);
  const index_t n = out.local().size();
  if (n > 0) detail::select_kernel(dense(c).data(), dense(x).data(), dense(y).data(), n, out.local().data(), s);
  return out;
}

#define TESSERA_SELECT_RANK(T, R)                                                                          \
  template Array<std::int64_t, 1> flatnonzero<T, R>(const Array<T, R>&);                                   \
  template Array<T, 1> compress<T, R>(const Array<bool, R>&, const Array<T, R>&);                          \
  template Array<T, R> where<T, R>(const Array<bool, R>&, const Array<T, R>&, const Array<T, R>&);      \
  template Array<T, 1> ravel<T, R>(const Array<T, R>&);
#define TESSERA_SELECT(T) TESSERA_FOR_EACH_RANK(TESSERA_SELECT_RANK, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_SELECT)
#define TESSERA_HISTOGRAM_RANK(T, R) \
  template local::Array<std::int64_t, 1> histogram<T, R>(const Array<T, R>&, index_t, double, double);
#define TESSERA_HISTOGRAM(T) TESSERA_FOR_EACH_RANK(TESSERA_HISTOGRAM_RANK, T)
TESSERA_FOR_EACH_INTEGER(TESSERA_HISTOGRAM)
TESSERA_FOR_EACH_REAL(TESSERA_HISTOGRAM)
#define TESSERA_BINCOUNT_RANK(T, R) template local::Array<std::int64_t, 1> bincount<T, R>(const Array<T, R>&, index_t);
#define TESSERA_BINCOUNT(T) TESSERA_FOR_EACH_RANK(TESSERA_BINCOUNT_RANK, T)
TESSERA_FOR_EACH_INTEGER(TESSERA_BINCOUNT)

}  // namespace tessera::distributed
