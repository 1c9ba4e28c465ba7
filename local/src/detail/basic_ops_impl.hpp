// The precompiled operations, written once with expr.hpp: compiled by nvcc in CUDA builds
// (src/cuda/*.cu, then host and CUDA arrays both work) and by the C++ compiler otherwise.
#pragma once
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/expr.hpp"
#ifdef __CUDACC__
#include "strided_copy_cuda.cuh"
#include "transpose_cuda.cuh"
#endif

namespace tessera::local::detail {
template <class T> void add6(const Array6<T>& o, const Array6<T>& a, const Array6<T>& b) {
  if constexpr (std::is_same_v<T, bool>) assign(o, a || b); else assign(o, a + b);
}
template <class T> void sub6(const Array6<T>& o, const Array6<T>& a, const Array6<T>& b) {
  if constexpr (std::is_same_v<T, bool>) assign(o, a != b); else assign(o, a - b);
}
template <class T> void mul6(const Array6<T>& o, const Array6<T>& a, const Array6<T>& b) {
  if constexpr (std::is_same_v<T, bool>) assign(o, a && b); else assign(o, a * b);
}
template <class T> void div6(const Array6<T>& o, const Array6<T>& a, const Array6<T>& b) { assign(o, a / b); }
template <class T> void axpy6(const Array6<T>& y, T alpha, const Array6<T>& x) {
  if constexpr (std::is_same_v<T, bool>) assign(y, (x && alpha) || y); else assign(y, alpha * x + y);
}
template <class T> void fill6(const Array6<T>& o, T value) { assign(o, Scalar<T>(value)); }
template <class T> void copy6(const Array6<T>& o, const Array6<T>& in) {
#ifdef __CUDACC__
  if (transpose_copy_cuda(o, in)) return;  // a transposed source: by shared-memory tiles
  if (strided_copy_cuda(o, in)) return;     // other strided copies: by rows
#endif
  assign(o, in);
}
template <class U, class T> void cast6(const Array6<U>& o, const Array6<T>& in) { assign(o, cast<U>(in)); }

// start + i * step, computed in double and converted.
template <class T>
struct IotaExpr {
  using is_tessera_expr = void;
  using value_type = T;
  static constexpr int rank = 1;
  double start, step;
  index_t n;
  Shape<1> shape() const { return {n}; }
  std::optional<Device> device() const { return std::nullopt; }
  bool linear_as(const Shape<1>&) const { return true; }
  IotaExpr bind(const Shape<1>&) const { return *this; }
  template <bool Linear> TESSERA_HD dev_t<T> eval(index_t i, const index_t*) const {
    return convert<dev_t<T>>(start + static_cast<double>(i) * step);
  }
};
template <class T> void iota(const Array<T, 1>& out, double start, double step) {
  assign(out, IotaExpr<T>{start, step, out.size()});
}
}  // namespace tessera::local::detail

#define TESSERA_INSTANTIATE_BASIC_OPS(T)                                                          \
  template void tessera::local::detail::add6<T>(const Array6<T>&, const Array6<T>&, const Array6<T>&);  \
  template void tessera::local::detail::sub6<T>(const Array6<T>&, const Array6<T>&, const Array6<T>&);  \
  template void tessera::local::detail::mul6<T>(const Array6<T>&, const Array6<T>&, const Array6<T>&);  \
  template void tessera::local::detail::axpy6<T>(const Array6<T>&, T, const Array6<T>&);                \
  template void tessera::local::detail::fill6<T>(const Array6<T>&, T);                                  \
  template void tessera::local::detail::copy6<T>(const Array6<T>&, const Array6<T>&);                   \
  template void tessera::local::detail::iota<T>(const tessera::local::Array<T, 1>&, double, double);

#define TESSERA_INSTANTIATE_DIV(T) \
  template void tessera::local::detail::div6<T>(const Array6<T>&, const Array6<T>&, const Array6<T>&);

namespace tessera::local::detail {
// cast6<U, T> for every U of the element list: taking their addresses instantiates them.
template <class T, class... U>
const void* casts_from(std::tuple<U...>*) {
  static constexpr std::tuple<decltype(&cast6<U, T>)...> table{&cast6<U, T>...};
  return &table;
}
}  // namespace tessera::local::detail
#define TESSERA_INSTANTIATE_CASTS_FROM(T) \
  template const void* tessera::local::detail::casts_from<T>(tessera::ElementTypes*);
