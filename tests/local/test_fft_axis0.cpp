// The outermost-axis FFT pass of split cuFFT plans (local/src/fft/fft_axis0.hpp) with its
// thread blocks emulated on the host (phase 1 of every thread, the barrier, phase 2), for every
// configuration the CUDA kernel instantiates, against a serial DFT along the axis.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "fft/fft_axis0.hpp"
#include "dft_reference.hpp"

namespace {
namespace ax = tessera::local::fft::detail::axis0;

template <class R, int P, int Q, int C>
void emulate(const ax::Args<R>& a, long long batch) {
  std::vector<ax::Cx<R>> sh(C * P * Q);
  for (long long b = 0; b < batch; ++b)
    for (long long col0 = 0; col0 < a.cols; col0 += C) {
      for (int t = 0; t < C * P; ++t) ax::phase1<R, P, Q, C>(t, col0, b, a, sh.data());
      for (int t = 0; t < C * P; ++t) ax::phase2<R, P, Q, C>(t, col0, b, a, sh.data());
    }
}

template <class R, int P, int Q, int C>
void check(bool backward, bool in_place) {
  // Out of place, the 19 columns are some of 24 (rows `ld` apart: the distributed FFT's column
  // blocks); the others must stay as they were.
  constexpr long long n = P * Q, cols = 19, batch = 2;
  const long long ld = in_place ? cols : cols + 5, dist = n * ld;
  const double scale = 0.5;
  std::vector<ax::Cx<R>> tw(n), x(batch * dist), y(batch * dist);
  for (long long m = 0; m < n; ++m) {
    const long double phi = -2 * std::numbers::pi_v<long double> * m / n;
    tw[m] = {static_cast<R>(std::cos(phi)), static_cast<R>(std::sin(phi))};
  }
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : x) v = {static_cast<R>(u(gen)), static_cast<R>(u(gen))};
  if (in_place) y = x;  // the pass reads every element of a block before it writes any
  else for (auto& v : y) v = {R(7), R(7)};
  emulate<R, P, Q, C>({in_place ? y.data() : x.data(), y.data(), tw.data(), cols, ld, dist, static_cast<R>(scale),
                       backward}, batch);
  for (long long i = 0; i < batch * dist; ++i)
    if (i % ld >= cols) ASSERT_TRUE(y[i].x == R(7) && y[i].y == R(7)) << "element " << i << " outside the columns";
  double num = 0, den = 0;
  std::vector<double> re(n), im(n);
  const tessera::testing::ReferenceDft<double> dft(n, backward ? 1 : -1);
  for (long long b = 0; b < batch; ++b)
    for (long long c = 0; c < cols; ++c) {
      for (long long j = 0; j < n; ++j) re[j] = x[b * dist + j * ld + c].x, im[j] = x[b * dist + j * ld + c].y;
      dft(re, im);
      for (long long k = 0; k < n; ++k) {
        const std::complex<double> want(re[k] * scale, im[k] * scale);
        const auto& g = y[b * dist + k * ld + c];
        num += std::norm(std::complex<double>(g.x, g.y) - want), den += std::norm(want);
      }
    }
  EXPECT_LE(std::sqrt(num / den), sizeof(R) == 4 ? 2e-6 : 1e-14)
      << "n " << n << " C " << C << (backward ? " backward" : " forward") << (in_place ? " in place" : "");
}

template <class R, int P, int Q>
void check_tiles() {
  for (bool backward : {false, true}) {
    check<R, P, Q, 64 / (2 * sizeof(R))>(backward, false);
    check<R, P, Q, 128 / (2 * sizeof(R))>(backward, backward);
  }
}

}  // namespace

TEST(FftAxis0Pass, EveryKernelConfigurationMatchesTheDft) {
  EXPECT_EQ(ax::factor_p(1024) * ax::factor_q(1024), 1024);
  EXPECT_EQ(ax::factor_p(512) * ax::factor_q(512), 512);
  EXPECT_EQ(ax::factor_p(256) * ax::factor_q(256), 256);
  EXPECT_EQ(ax::factor_p(128), 0);
  for (int m = 0; m < 32; ++m) {  // the register FFT's constants
    const auto r = ax::root32<double>(m);
    const long double phi = 2 * std::numbers::pi_v<long double> * m / 32;
    EXPECT_NEAR(r.x, static_cast<double>(std::cos(phi)), 2e-16) << m;
    EXPECT_NEAR(r.y, static_cast<double>(-std::sin(phi)), 2e-16) << m;
  }
  check_tiles<float, 16, 16>();
  check_tiles<float, 32, 16>();
  check_tiles<float, 32, 32>();
  check_tiles<double, 16, 16>();
  check_tiles<double, 32, 16>();
  check_tiles<double, 32, 32>();
}
