// Element types: bool, int32, int64, float, double, complex<float>, complex<double>.
#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tessera {

/// The element type of an array, as a runtime value.
enum class DType : int { boolean, int32, int64, float32, float64, complex64, complex128 };

/// numpy's names for the complex element types.
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

/// The DType of element type T (dtype_v<T>).
template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::int32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::int64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::float64; };
template <> struct dtype_of<complex64> { static constexpr DType value = DType::complex64; };
template <> struct dtype_of<complex128> { static constexpr DType value = DType::complex128; };
template <class T> inline constexpr DType dtype_v = dtype_of<std::remove_cv_t<T>>::value;

/// One of the 7 element types.
template <class T>
concept Element = requires { dtype_of<std::remove_cv_t<T>>::value; };

/// True for std::complex<R>.
template <class T> struct is_complex : std::false_type {};
template <class R> struct is_complex<std::complex<R>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;

/// Bytes per element.
std::size_t dtype_size(DType t);
/// numpy's name: bool, int32, int64, float32, ...
std::string dtype_name(DType t);

}  // namespace tessera
