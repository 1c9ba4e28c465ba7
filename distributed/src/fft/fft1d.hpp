// Internal: the 1-D distributed FFT over several ranks (fft.cpp's engine delegates to it).
//
// C2C, four-step (n = n1*n2, n1, n2 >= 2): x is the row-major n1 x n2 matrix A[j1][j2] =
// x[n2*j1 + j2] split by rows; an exchange splits it by columns, FFTs of length n1 run down the
// columns, the twiddles w_n^(j2*k1) (times the normalization) multiply, an exchange splits it by
// rows again and FFTs of length n2 run along the rows: C[k1][k2] = X[k1 + n1*k2]. That is the
// transposed output: global position k1*n2 + k2 holds X[k1 + n1*k2]. For natural order the last
// FFT stores its rows transposed (cuFFT/FFTW output strides) and one more exchange gives
// X[k2*n1 + k1] in blocks of whole n1-rows. n1, n2 are the factor pair whose largest block over
// the ranks is smallest (then the squarest); blocks are uneven where P does not divide them.
// Prime n: Bluestein's chirp-z, a circular convolution of length M >= 2n-1 (7-smooth, composite)
// done by a four-step plan of length M over the same ranks; natural order both ways.
// R2C: the real input promoted to complex, a natural-order C2C, and the first n/2+1 values moved
// to balanced blocks. C2R: those values into a zeroed length-n array, doubled where the conjugate
// half would add the same (0 < k < n/2), a C2C backward, the real part.
#pragma once
#include <array>
#include <memory>
#include <string>

#include "tessera/fft/fft.hpp"

namespace tessera::fft::detail {

template <class Real> struct C2c1d;  // fft1d.cpp

template <class In>
class Line {
 public:
  using Real = typename RealOf<In>::type;
  using Out = std::complex<Real>;
  /// For `in`'s group and global length; `natural`: forward's output in natural order.
  Line(const Layout<1>& in, Device d, bool natural, int chunks);
  ~Line();
  /// forward() takes blocks of input_layout() and returns blocks of output_layout().
  const Layout<1>& input_layout() const { return in_; }
  const Layout<1>& output_layout() const { return out_; }
  /// Unnormalized transforms times `scale` (applied in a pass that happens anyway).
  local::Array<Out, 1> forward(const local::Array<In, 1>& x, double scale) const;
  local::Array<In, 1> backward(const local::Array<Out, 1>& y, double scale) const;
  /// Plan::output_order(): {n1, n2} for a transposed four-step output, else {1, length}.
  std::array<index_t, 2> output_order() const;
  /// "four-step n1 x n2" or "Bluestein M" (for messages).
  std::string method() const;
  /// True where n has no factor pair (Bluestein's chirp-z over a four-step plan of length M).
  bool bluestein() const;

 private:
  std::unique_ptr<C2c1d<Real>> core_;
  Layout<1> in_, out_;
};

}  // namespace tessera::fft::detail
