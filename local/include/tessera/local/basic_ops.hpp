// Precompiled operations for all 7 element types, callable from plain C++ (no nvcc needed):
// add, sub, mul, div, axpy, fill, copy, cast; creation (empty, zeros, ones, full, arange,
// linspace, from_host, to_host), to(device) and astype. Arrays up to rank 6; size-1 dimensions
// broadcast as in expressions. Device work is ordered on the device's default stream.
#pragma once
#include <cmath>
#include <memory>
#include <vector>

#include "tessera/local/array.hpp"

namespace tessera::local {

namespace detail {
constexpr int kMaxRank = 6;
template <class T> using Array6 = Array<T, kMaxRank>;

// Pads with leading size-1 (stride 0) dimensions, so one compiled kernel serves every rank.
template <class T, int R>
Array6<T> widen(const Array<T, R>& a) {
  static_assert(R <= kMaxRank, "precompiled operations support arrays up to rank 6");
  Shape<kMaxRank> s, st;
  s.fill(1);
  st.fill(0);
  for (int d = 0; d < R; ++d) {
    s[kMaxRank - R + d] = a.shape()[d];
    st[kMaxRank - R + d] = a.strides()[d];
  }
  return Array6<T>::view(a.data(), s, st, a.device());
}

template <class T> void add6(const Array6<T>& out, const Array6<T>& a, const Array6<T>& b);
template <class T> void sub6(const Array6<T>& out, const Array6<T>& a, const Array6<T>& b);
template <class T> void mul6(const Array6<T>& out, const Array6<T>& a, const Array6<T>& b);
template <class T> void div6(const Array6<T>& out, const Array6<T>& a, const Array6<T>& b);
template <class T> void axpy6(const Array6<T>& y, T alpha, const Array6<T>& x);
template <class T> void fill6(const Array6<T>& out, T value);
template <class T> void copy6(const Array6<T>& out, const Array6<T>& in);  // same device
template <class U, class T> void cast6(const Array6<U>& out, const Array6<T>& in);
template <class T> void iota(const Array<T, 1>& out, double start, double step);
}  // namespace detail

/// out = a + b, a - b, a * b, a / b (integer division truncates; bool: add is or, mul is and,
/// sub is xor; div is not defined for bool).
template <class T, int R> void add(const Array<T, R>& out, const Array<T, R>& a, const Array<T, R>& b) {
  detail::add6(detail::widen(out), detail::widen(a), detail::widen(b));
}
template <class T, int R> void sub(const Array<T, R>& out, const Array<T, R>& a, const Array<T, R>& b) {
  detail::sub6(detail::widen(out), detail::widen(a), detail::widen(b));
}
template <class T, int R> void mul(const Array<T, R>& out, const Array<T, R>& a, const Array<T, R>& b) {
  detail::mul6(detail::widen(out), detail::widen(a), detail::widen(b));
}
template <class T, int R> void div(const Array<T, R>& out, const Array<T, R>& a, const Array<T, R>& b) {
  static_assert(!std::is_same_v<T, bool>, "div is not defined for bool arrays");
  detail::div6(detail::widen(out), detail::widen(a), detail::widen(b));
}
/// y = alpha * x + y.
template <class T, int R> void axpy(const Array<T, R>& y, T alpha, const Array<T, R>& x) {
  detail::axpy6(detail::widen(y), alpha, detail::widen(x));
}
/// Sets every element of `out` to `value`.
template <class T, int R> void fill(const Array<T, R>& out, T value) { detail::fill6(detail::widen(out), value); }
/// out = in converted to U, element by element (same device).
template <class U, class T, int R> void cast(const Array<U, R>& out, const Array<T, R>& in) {
  detail::cast6(detail::widen(out), detail::widen(in));
}

/// Copies elements between any two devices (host<->GPU, GPU<->GPU peer); shapes must match.
/// Contiguous arrays move by one memcpy; strided layouts by a copy kernel; returns when host
/// memory involved is ready.
template <class T, int R>
void copy(const Array<T, R>& dst, const Array<T, R>& src) {
  if (dst.shape() != src.shape())
    throw ShapeMismatch("shape mismatch in copy: " + shape_str(dst.shape()) + " vs " + shape_str(src.shape()),
                        dst.device());
  const auto bytes = static_cast<std::size_t>(src.size()) * sizeof(T);
  if (dst.device() == src.device()) {
    // Contiguous on one GPU: one cudaMemcpyAsync, at the device's copy roofline.
    if (dst.device().is_cuda() && dst.is_contiguous() && src.is_contiguous())
      return tessera::detail::memcpy_any(dst.data(), dst.device(), src.data(), src.device(), bytes,
                                         Stream::default_for(dst.device()));
    return detail::copy6(detail::widen(dst), detail::widen(src));
  }
  if (dst.is_contiguous() && src.is_contiguous()) {
    const Device on = src.device().is_cuda() ? src.device() : dst.device();
    return tessera::detail::memcpy_any(dst.data(), dst.device(), src.data(), src.device(), bytes,
                                       Stream::default_for(on));
  }
  // Gather into a contiguous array on the source device, move it, scatter on the destination.
  Array<T, R> packed(src.shape(), src.device());
  detail::copy6(detail::widen(packed), detail::widen(src));
  Array<T, R> moved(src.shape(), dst.device());
  copy(moved, packed);
  detail::copy6(detail::widen(dst), detail::widen(moved));
}

/// New arrays on d: uninitialized, filled with `value`, zeros, ones.
/// Shape arguments deduce their rank as std::size_t (std::array's own parameter type).
template <class T, std::size_t R> Array<T, int(R)> empty(const Shape<int(R)>& shape, Device d) {
  return Array<T, int(R)>(shape, d);
}
template <class T, std::size_t R> Array<T, int(R)> full(const Shape<int(R)>& shape, T value, Device d) {
  Array<T, int(R)> a(shape, d);
  fill(a, value);
  return a;
}
template <class T, std::size_t R> Array<T, int(R)> zeros(const Shape<int(R)>& shape, Device d) {
  return full<T, R>(shape, T(0), d);
}
template <class T, std::size_t R> Array<T, int(R)> ones(const Shape<int(R)>& shape, Device d) {
  return full<T, R>(shape, T(1), d);
}
/// [start, start + step, ...) below stop, as numpy.arange; arange(n) is 0 .. n-1.
template <class T> Array<T, 1> arange(double start, double stop, double step, Device d) {
  if (step == 0) throw InvalidArgument("arange: step must not be 0", d);
  const double count = std::ceil((stop - start) / step);
  Array<T, 1> a({count > 0 ? static_cast<index_t>(count) : 0}, d);
  detail::iota(a, start, step);
  return a;
}
template <class T> Array<T, 1> arange(index_t n, Device d) { return arange<T>(0.0, static_cast<double>(n), 1.0, d); }
/// num points from start to stop (stop included when endpoint), as numpy.linspace.
template <class T> Array<T, 1> linspace(double start, double stop, index_t num, Device d, bool endpoint = true) {
  if (num < 0) throw InvalidArgument("linspace: num must be >= 0, got " + std::to_string(num), d);
  Array<T, 1> a({num}, d);
  const double div = endpoint ? static_cast<double>(num - 1) : static_cast<double>(num);
  detail::iota(a, start, div > 0 ? (stop - start) / div : 0.0);
  return a;
}
/// Copies `host` (row-major, shape's size elements) into a new array on d.
template <class T, std::size_t N, int R = int(N)>
Array<T, R> from_host(const T* host, const std::array<index_t, N>& shape, Device d) {
  Array<T, R> a(shape, d);
  copy(a, Array<T, R>::view(const_cast<T*>(host), shape, Device::host()));
  return a;
}
template <class T, std::size_t N, int R = int(N)>
Array<T, R> from_host(const std::vector<T>& host, const std::array<index_t, N>& shape, Device d) {
  if (static_cast<index_t>(host.size()) != shape_size(shape))
    throw ShapeMismatch("from_host: " + std::to_string(host.size()) + " values for shape " + shape_str(shape), d);
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: unpack first
    std::unique_ptr<bool[]> tmp(new bool[host.size()]);
    for (std::size_t i = 0; i < host.size(); ++i) tmp[i] = host[i];
    return from_host(tmp.get(), shape, d);
  } else {
    return from_host(host.data(), shape, d);
  }
}
/// The elements in row-major order, on the host.
template <class T, int R> std::vector<T> to_host(const Array<T, R>& a) {
  const auto n = static_cast<std::size_t>(a.size());
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: copy through a plain buffer
    std::unique_ptr<bool[]> tmp(new bool[n == 0 ? 1 : n]);
    if (n) copy(Array<bool, R>::view(tmp.get(), a.shape(), Device::host()), a);
    return std::vector<bool>(tmp.get(), tmp.get() + n);
  } else {
    std::vector<T> out(n);
    if (n) copy(Array<T, R>::view(out.data(), a.shape(), Device::host()), a);
    return out;
  }
}
/// A contiguous copy on device d.
template <class T, int R> Array<T, R> to(const Array<T, R>& a, Device d) {
  Array<T, R> out(a.shape(), d);
  copy(out, a);
  return out;
}
/// A contiguous copy converted to U (complex -> real keeps the real part).
template <class U, class T, int R> Array<U, R> astype(const Array<T, R>& a) {
  Array<U, R> out(a.shape(), a.device());
  cast(out, a);
  return out;
}

template <class T, int Rank> Array<T, Rank> Array<T, Rank>::to(Device d) const { return local::to(*this, d); }
template <class T, int Rank>
template <class U>
Array<U, Rank> Array<T, Rank>::astype() const {
  return local::astype<U>(*this);
}

}  // namespace tessera::local
