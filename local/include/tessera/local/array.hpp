// local::Array<T, Rank>: an n-d array on one device. Owning (a Buffer from the device's pool) or a
// non-owning view of someone else's memory (shape + strides + device, no copy). Row-major by
// default; strides are in elements and may be any value (views, transposes, broadcasts).
//
// Handle semantics: copying an Array copies the handle (both share memory), as does
// `a = b` between arrays. Assigning an expression, `a = x * y + z`, evaluates it into a's memory
// (see expr.hpp); `copy(dst, src)` copies elements.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tessera/local/dtype.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::local {

/// Element counts and indices.
using index_t = std::int64_t;
/// Extents (or strides) of each axis.
template <int Rank> using Shape = std::array<index_t, Rank>;

/// "[a,b,c]", for messages.
template <std::size_t N>
std::string shape_str(const std::array<index_t, N>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < N; ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

/// The strides, in elements, of a contiguous row-major array of `shape`.
template <std::size_t Rank>
std::array<index_t, Rank> row_major_strides(const std::array<index_t, Rank>& shape) {
  std::array<index_t, Rank> st{};
  index_t acc = 1;
  for (int d = static_cast<int>(Rank) - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= shape[d];
  }
  return st;
}

/// The number of elements of `shape`.
template <std::size_t Rank>
index_t shape_size(const std::array<index_t, Rank>& shape) {
  for (auto e : shape)
    if (e == 0) return 0;  // without overflowing on the way (e.g. [2^40,2^40,0])
  index_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

/// An n-d array on one device: owning, or a view of memory someone else owns.
template <class T, int Rank>
class Array {
  static_assert(Rank >= 0 && Rank <= 8, "Array rank must be 0..8");
  static_assert(Element<T>, "Array element type must be bool, int32, int64, float, double, complex<float> or complex<double>");

 public:
  using value_type = T;
  static constexpr int rank = Rank;

  /// An empty handle (no memory).
  Array() = default;
  /// Uninitialized, owning, row-major; allocated on the device's default stream.
  Array(const Shape<Rank>& shape, Device d)
      : shape_(shape), strides_((check_shape(shape, "Array"), row_major_strides(shape))), device_(d) {
    const index_t n = shape_size(shape);
    buffer_ = std::make_shared<Buffer>(static_cast<std::size_t>(n) * sizeof(T), d);
    data_ = static_cast<T*>(buffer_->data());
  }
  /// A view of memory the caller owns (no copy). `strides` in elements; row-major if omitted.
  static Array view(T* data, const Shape<Rank>& shape, Device d) {
    check_shape(shape, "Array::view");  // before the strides, which would overflow
    return view(data, shape, row_major_strides(shape), d);
  }
  static Array view(T* data, const Shape<Rank>& shape, const Shape<Rank>& strides, Device d) {
    check_shape(shape, "Array::view");
    Array a;
    a.data_ = data;
    a.shape_ = shape;
    a.strides_ = strides;
    a.device_ = d;
    return a;
  }

  /// Shape, strides (in elements), size, device, first element, ownership.
  const Shape<Rank>& shape() const noexcept { return shape_; }
  index_t shape(int axis) const { return shape_[check_axis(axis, "shape")]; }
  const Shape<Rank>& strides() const noexcept { return strides_; }
  index_t size() const noexcept { return shape_size(shape_); }
  Device device() const noexcept { return device_; }
  T* data() const noexcept { return data_; }
  bool owns_memory() const noexcept { return static_cast<bool>(buffer_); }
  /// True if the elements are dense and row-major (size-1 axes may have any stride).
  bool is_contiguous() const noexcept {
    index_t acc = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      if (shape_[d] != 1 && strides_[d] != acc) return false;
      acc *= shape_[d];
    }
    return true;
  }

  /// A view of elements start, start+step, ... < stop (step > 0) along `axis`.
  Array slice(int axis, index_t start, index_t stop, index_t step = 1) const {
    const int a = check_axis(axis, "slice");
    if (step <= 0 || start < 0 || stop < start || stop > shape_[a])
      throw InvalidArgument("slice(axis " + std::to_string(axis) + ", " + std::to_string(start) + ", " +
                                std::to_string(stop) + ", " + std::to_string(step) + ") out of range for shape " +
                                shape_str(shape_),
                            device_);
    Array v = *this;
    v.data_ = data_ + start * strides_[a];
    v.shape_[a] = (stop - start + step - 1) / step;
    v.strides_[a] = strides_[a] * step;
    return v;
  }
  /// A view whose axis i is axis axes[i] of this array.
  Array permute(const std::array<int, Rank>& axes) const {
    std::array<bool, Rank> seen{};
    Array v = *this;
    for (int i = 0; i < Rank; ++i) {
      const int a = axes[i];
      if (a < 0 || a >= Rank || seen[a])
        throw InvalidArgument("permute: axes are not a permutation of 0.." + std::to_string(Rank - 1), device_);
      seen[a] = true;
      v.shape_[i] = shape_[a];
      v.strides_[i] = strides_[a];
    }
    return v;
  }
  /// A view with the axes reversed.
  Array transpose() const {
    std::array<int, Rank> axes{};
    for (int i = 0; i < Rank; ++i) axes[i] = Rank - 1 - i;
    return permute(axes);
  }
  /// Same elements, other shape; only for contiguous arrays (a view, no copy).
  template <int R2>
  Array<T, R2> reshape(const Shape<R2>& shape) const {
    if (!is_contiguous())
      throw InvalidArgument("reshape of a non-contiguous array " + shape_str(shape_) + " (strides " +
                                shape_str(strides_) + "): copy it first",
                            device_);
    if (shape_size(shape) != size())
      throw ShapeMismatch("reshape: " + shape_str(shape_) + " has " + std::to_string(size()) +
                              " elements, " + shape_str(shape) + " has " + std::to_string(shape_size(shape)),
                          device_);
    Array<T, R2> v = Array<T, R2>::view(data_, shape, device_);
    v.keep_alive(buffer_);
    return v;
  }

  /// A contiguous copy on device d (basic_ops.hpp).
  Array to(Device d) const;
  /// A contiguous copy converted to U (basic_ops.hpp).
  template <class U> Array<U, Rank> astype() const;

  /// Evaluates an expression into this array's memory (expr.hpp defines the operator).
  template <class E>
    requires requires { typename E::is_tessera_expr; }
  Array& operator=(const E& e);
  /// In place, with an expression, an array or a scalar (expr.hpp).
  template <class E>
  Array& operator+=(const E& e);
  template <class E>
  Array& operator-=(const E& e);
  template <class E>
  Array& operator*=(const E& e);
  template <class E>
  Array& operator/=(const E& e);

  /// Ties this view's lifetime to an owner's buffer.
  void keep_alive(std::shared_ptr<Buffer> b) { buffer_ = std::move(b); }
  /// The owning buffer (null for a view without keep_alive).
  const std::shared_ptr<Buffer>& buffer() const noexcept { return buffer_; }

 private:
  static void check_shape(const Shape<Rank>& shape, const char* what) {
    for (int d = 0; d < Rank; ++d)
      if (shape[d] < 0)
        throw InvalidArgument(std::string(what) + ": negative extent " + std::to_string(shape[d]) + " in axis " +
                              std::to_string(d) + " of shape " + shape_str(shape));
    // A byte count past 2^63 would wrap to a small allocation (and views could not exist).
    for (auto e : shape)
      if (e == 0) return;
    index_t n = sizeof(T);
    for (auto e : shape) {
      if (n > std::numeric_limits<index_t>::max() / e)
        throw OutOfMemory(std::string(what) + ": shape " + shape_str(shape) + " of " + std::to_string(sizeof(T)) +
                          "-byte elements needs more than 2^63 bytes");
      n *= e;
    }
  }
  int check_axis(int axis, const char* what) const {
    if (axis < 0 || axis >= Rank)
      throw InvalidArgument(std::string(what) + ": axis " + std::to_string(axis) + " out of range for rank " +
                                std::to_string(Rank),
                            device_);
    return axis;
  }

  T* data_ = nullptr;
  Shape<Rank> shape_{};
  Shape<Rank> strides_{};
  Device device_;
  std::shared_ptr<Buffer> buffer_;
};

}  // namespace tessera::local

#include "tessera/local/basic_ops.hpp"  // defines to() and astype()
