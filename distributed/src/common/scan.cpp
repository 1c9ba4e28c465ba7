// cumsum / cumprod of algorithms.hpp: local scans along the axis, then an exclusive scan of the
// per-rank totals along the grid axis that splits it.
#include <complex>
#include <cstdint>
#include <string>

#include "../detail/algo_common.hpp"
#include "../detail/algo_kernels.hpp"
#include "tessera/distributed/algorithms.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::distributed {
namespace {

template <class T, int R>
Array<scan_t<T>, R> scan_along(const Array<T, R>& a, int axis, bool prod, const char* fn) {
  using U = scan_t<T>;
  const Device d = a.device();
  const auto agreed = check_call<T, R>(fn, a.layout(), d, "axis", axis);
  if (axis < 0 || axis >= R)
    throw InvalidArgument(std::string("distributed::") + fn + ": axis " + std::to_string(axis) +
                              " out of range for a " + std::to_string(R) + "-D array",
                          d);
  const Stream& s = Stream::default_for(d);
  s.wait_for(a.stream());
  const auto& l = a.layout();
  Array<U, R> out(l.with_halo({}), d);
  const auto o = out.local();
  index_t outer = 1, inner = 1;
  const index_t len = o.shape(axis);
  for (int ax = 0; ax < axis; ++ax) outer *= o.shape(ax);
  for (int ax = axis + 1; ax < R; ++ax) inner *= o.shape(ax);
  if (o.size() > 0) {
    const U* from = o.data();  // scanned in place after a conversion or a gather of the interior
    if constexpr (std::is_same_v<U, T>) {
      if (a.interior().is_contiguous()) from = a.interior().data();  // straight from the input
      else local::copy(o, a.interior());
    } else {
      local::cast(o, a.interior());
    }
    detail::scan_kernel(from, o.data(), outer, len, inner, prod, s);
  }
  a.stream().wait_for(s);
  const int g = l.split()[axis];
  if (g < 0 || l.grid().dims()[g] == 1) return out;

  // The ranks along grid axis g share the other axes' blocks, hence outer and inner.
  const auto& group = l.grid().axis_group(g);
  const index_t m = outer * inner;
  if (m == 0) return out;
  local::Array<U, 1> total({m}, d), parts({m * group.size()}, d), offset({m}, d);
  if (len > 0) local::copy(total.template reshape<3>({outer, 1, inner}),
                           o.template reshape<3>({outer, len, inner}).slice(1, len - 1, len));
  else local::fill(total, prod ? U(1) : U(0));
  group.all_gather(total.data(), parts.data(), static_cast<std::size_t>(m), dtype_v<U>, s);
  const int me = l.grid().coords()[g];
  if (me == 0 || len == 0) return out;
  detail::scan_fold_kernel(parts.data(), me, m, prod, offset.data(), s);
  detail::scan_offset_kernel(o.data(), offset.data(), outer, len, inner, prod, s);
  return out;
}
}  // namespace

template <class T, int R> Array<scan_t<T>, R> cumsum(const Array<T, R>& a, int axis) {
  return scan_along(a, axis, false, "cumsum");
}
template <class T, int R> Array<scan_t<T>, R> cumprod(const Array<T, R>& a, int axis) {
  return scan_along(a, axis, true, "cumprod");
}

#define TESSERA_SCAN_RANK(T, R)                                                  \
  template Array<scan_t<T>, R> cumsum<T, R>(const Array<T, R>&, int);            \
  template Array<scan_t<T>, R> cumprod<T, R>(const Array<T, R>&, int);
#define TESSERA_SCAN(T) TESSERA_FOR_EACH_RANK(TESSERA_SCAN_RANK, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_SCAN)

}  // namespace tessera::distributed
