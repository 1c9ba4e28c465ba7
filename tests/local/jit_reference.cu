// The nvcc executor's side of test_jit.cpp (see jit_reference.hpp).
#include "jit_reference.hpp"
#include "tessera/local/expr.hpp"

namespace tessera::testing::jit_reference {
namespace {
#include "jit_expressions.inc"
}  // namespace
void triad(const Array<float, 1>& o, const Array<float, 1>& a, const Array<float, 1>& b, float s) { expr_triad(o, a, b, s); }
void sin_exp(const Array<float, 1>& o, const Array<float, 1>& a, const Array<float, 1>& b, const Array<float, 1>& c) {
  expr_sin_exp(o, a, b, c);
}
void sin_exp(const Array<double, 1>& o, const Array<double, 1>& a, const Array<double, 1>& b, const Array<double, 1>& c) {
  expr_sin_exp(o, a, b, c);
}
void ten_operands(const Array<double, 1>& o, const Array<double, 1>& a, const Array<double, 1>& b,
                  const Array<double, 1>& c) {
  expr_ten(o, a, b, c);
}
void complex_triad(const Array<std::complex<float>, 1>& o, const Array<std::complex<float>, 1>& a,
                   const Array<std::complex<float>, 1>& b, std::complex<float> s) {
  expr_complex_triad(o, a, b, s);
}
void strided(const Array<double, 2>& o, const Array<double, 2>& a, const Array<double, 2>& row) { expr_strided(o, a, row); }
void more_math(const Array<float, 1>& o, const Array<float, 1>& a, const Array<float, 1>& b) { expr_more_math(o, a, b); }
void more_math(const Array<double, 1>& o, const Array<double, 1>& a, const Array<double, 1>& b) { expr_more_math(o, a, b); }
void where_cast(const Array<std::int32_t, 1>& o, const Array<double, 1>& a) { expr_where_cast(o, a); }
}  // namespace tessera::testing::jit_reference
