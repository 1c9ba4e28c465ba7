// The nvcc executor's results of the expressions test_jit.cpp runs through the runtime kernel
// compiler (jit_reference.cu, CUDA builds only): both must agree bit for bit.
#pragma once
#include <complex>

#include "tessera/local/array.hpp"

namespace tessera::testing::jit_reference {
using local::Array;
void triad(const Array<float, 1>& out, const Array<float, 1>& a, const Array<float, 1>& b, float s);
void sin_exp(const Array<float, 1>& out, const Array<float, 1>& a, const Array<float, 1>& b, const Array<float, 1>& c);
void sin_exp(const Array<double, 1>& out, const Array<double, 1>& a, const Array<double, 1>& b, const Array<double, 1>& c);
void ten_operands(const Array<double, 1>& out, const Array<double, 1>& a, const Array<double, 1>& b,
                  const Array<double, 1>& c);
void complex_triad(const Array<std::complex<float>, 1>& out, const Array<std::complex<float>, 1>& a,
                   const Array<std::complex<float>, 1>& b, std::complex<float> s);
void strided(const Array<double, 2>& out, const Array<double, 2>& a, const Array<double, 2>& row);
void more_math(const Array<float, 1>& out, const Array<float, 1>& a, const Array<float, 1>& b);
void more_math(const Array<double, 1>& out, const Array<double, 1>& a, const Array<double, 1>& b);
void where_cast(const Array<std::int32_t, 1>& out, const Array<double, 1>& a);
}  // namespace tessera::testing::jit_reference
