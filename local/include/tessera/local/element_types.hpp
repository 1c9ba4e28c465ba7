// The element types, listed once. Every explicit instantiation in the library expands one of
// these lists (X-macros), so adding a type is a change here; subsets say which operations exist:
//   TESSERA_FOR_EACH_ELEMENT(X)  all seven: bool, int32, int64, float, double, complex64, complex128
//   TESSERA_FOR_EACH_ORDERED(X)  those with < (all but the complex types): min/max/argmin/argmax
//   TESSERA_FOR_EACH_NUMERIC(X)  all but bool: arange, division
//   TESSERA_FOR_EACH_INTEGER(X)  int32, int64: random integers
//   TESSERA_FOR_EACH_REAL(X)     float, double: random reals, R2C/C2R FFTs, fftfreq
//   TESSERA_FOR_EACH_FFT(X)      float, double, complex64, complex128: FFT plans
// TESSERA_FOR_EACH_RANK(X, T) expands X(T, R) for the array ranks that are precompiled (1-4).
// tessera::ElementTypes is the same list as a type list (typed tests).
#pragma once
#include <cstdint>
#include <tuple>

#include "tessera/local/dtype.hpp"

#define TESSERA_FOR_EACH_INTEGER(X) X(std::int32_t) X(std::int64_t)
#define TESSERA_FOR_EACH_REAL(X) X(float) X(double)
#define TESSERA_FOR_EACH_COMPLEX(X) X(::tessera::complex64) X(::tessera::complex128)
#define TESSERA_FOR_EACH_ORDERED(X) X(bool) TESSERA_FOR_EACH_INTEGER(X) TESSERA_FOR_EACH_REAL(X)
#define TESSERA_FOR_EACH_NUMERIC(X) TESSERA_FOR_EACH_INTEGER(X) TESSERA_FOR_EACH_REAL(X) TESSERA_FOR_EACH_COMPLEX(X)
#define TESSERA_FOR_EACH_ELEMENT(X) X(bool) TESSERA_FOR_EACH_NUMERIC(X)
#define TESSERA_FOR_EACH_FFT(X) TESSERA_FOR_EACH_REAL(X) TESSERA_FOR_EACH_COMPLEX(X)
#define TESSERA_FOR_EACH_RANK(X, T) X(T, 1) X(T, 2) X(T, 3) X(T, 4)
#define TESSERA_FOR_EACH_FFT_RANK(X, T) X(T, 1) X(T, 2) X(T, 3)

namespace tessera {
using ElementTypes = std::tuple<bool, std::int32_t, std::int64_t, float, double, complex64, complex128>;
}  // namespace tessera
