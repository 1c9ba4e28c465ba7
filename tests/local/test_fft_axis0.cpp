// The outermost-axis FFT pass of split cuFFT plans (local/src/fft/fft_axis0.hpp) with its
// thread blocks emulated on the host (phase 1 of every thread, the barrier, phase 2; threads in
// order and in reverse order), for every
// configuration the CUDA kernel instantiates, scaled or with the spectral factors of a Poisson
// solve, against a serial DFT along the axis.
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

// Threads [0, n) of one phase one after another, in reverse order for odd blocks: a thread that
// wrote where another reads in the same phase (a race on the GPU) fails one of the two orders.
template <class F>
void each_thread(int n, bool reverse, const F& f) {
  for (int i = 0; i < n; ++i) f(reverse ? n - 1 - i : i);
}

// Every block of the pass (round_trip: the round trip's phases after phase 1, else phase 2).
template <class R, int P, int Q, int C, bool S, bool H, bool round_trip = false>
void emulate(const ax::Args<R>& a, long long batch) {
  std::vector<ax::Cx<R>> sh(C * P * Q);
  for (long long b = 0; b < batch; ++b)
    for (long long col0 = 0; col0 < a.cols; col0 += C) {
      const bool reverse = (b + col0 / C) % 2 == 1;
      each_thread(C * P, reverse, [&](int t) { ax::phase1<R, P, Q, C, false, H>(t, col0, b, a, sh.data()); });
      if constexpr (round_trip) {
        each_thread(C * P, reverse, [&](int t) { ax::phase2_round_trip<R, P, Q, C, H>(t, col0, b, a, sh.data()); });
        each_thread(C * P, reverse, [&](int t) { ax::phase3_round_trip<R, P, Q, C, H>(t, col0, b, a, sh.data()); });
      } else {
        each_thread(C * P, reverse, [&](int t) { ax::phase2<R, P, Q, C, S, H>(t, col0, b, a, sh.data()); });
      }
    }
}

// The spectral pass's factors, as a split r2c plan's Poisson solve gives them: the output is a
// block of `batch` x n rows x ld columns, the rows' frequencies fftfreq(n) (wavenumber 1), the
// columns' rfftfreq (wavenumber 0.5), the batch none; -scale / |k|^2 (0 at k = 0).
tessera::local::fft::detail::StoreParams inverse_laplacian(long long batch, long long n, long long ld, double scale) {
  tessera::local::fft::detail::StoreParams p{};
  p.scale = scale;
  p.kind = 1;
  p.dims = 3;
  p.block[0] = batch, p.block[1] = n, p.block[2] = ld;
  p.n[1] = n, p.n[2] = 2 * (ld - 1);
  p.half[2] = 1;
  p.k[1] = 1.0, p.k[2] = 0.5;
  tessera::local::fft::detail::set_fast_division(p);
  return p;
}

// What inverse_laplacian multiplies row k, column c by, computed here on its own.
double inverse_laplacian_factor(long long k, long long c, long long n, double scale) {
  const double kr = static_cast<double>(2 * k < n ? k : k - n), kc = 0.5 * static_cast<double>(c);
  const double k2 = kr * kr + kc * kc;
  return k2 > 0 ? -scale / k2 : 0.0;
}

// A test's columns: `batch` arrays of n random rows, `ld` apart, of which the pass transforms the
// first 19 columns from x to y. Out of place they are some of 24 (the distributed FFT's column
// blocks), and y's others hold 7, which they must keep; in place y starts as x (the pass reads
// every element of a block before it writes any).
template <class R>
struct Columns {
  static constexpr long long cols = 19, batch = 2;
  long long n, ld, dist;
  bool in_place;
  std::vector<ax::Cx<R>> x, y, tw;

  Columns(long long length, bool in_place_, unsigned seed)
      : n(length), ld(in_place_ ? cols : cols + 5), dist(n * ld), in_place(in_place_), x(batch * dist),
        y(batch * dist), tw(ax::twiddle_table<R>(n)) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& v : x) v = {static_cast<R>(u(gen)), static_cast<R>(u(gen))};
    if (in_place) y = x;
    else for (auto& v : y) v = {R(7), R(7)};
  }
  ax::Args<R> args(double scale, bool backward, const tessera::local::fft::detail::StoreParams& mult) {
    return {in_place ? y.data() : x.data(), y.data(), tw.data(), cols, ld, dist, static_cast<R>(scale), backward,
            mult};
  }
  // The first element of y outside the columns that lost its 7, or -1.
  long long changed_outside() const {
    for (long long i = 0; i < batch * dist; ++i)
      if (i % ld >= cols && !(y[i].x == R(7) && y[i].y == R(7))) return i;
    return -1;
  }
  // The relative error of y's columns against x's turned by `expected(c, re, im)`, which makes the
  // expected output of column c from its input in place.
  template <class F>
  double error(const F& expected) const {
    double num = 0, den = 0;
    std::vector<double> re(n), im(n);
    for (long long b = 0; b < batch; ++b)
      for (long long c = 0; c < cols; ++c) {
        for (long long j = 0; j < n; ++j) re[j] = x[b * dist + j * ld + c].x, im[j] = x[b * dist + j * ld + c].y;
        expected(c, re, im);
        for (long long j = 0; j < n; ++j) {
          const auto& g = y[b * dist + j * ld + c];
          num += std::norm(std::complex<double>(g.x - re[j], g.y - im[j])), den += re[j] * re[j] + im[j] * im[j];
        }
      }
    return std::sqrt(num / den);
  }
};

// S: the spectral pass (the rows are axis 1 of the factors' block); H: 32-point FFTs in halves.
template <class R, int P, int Q, int C, bool S = false, bool H = false>
void check(bool backward, bool in_place) {
  constexpr long long n = P * Q;
  const double scale = 0.5;
  Columns<R> t(n, in_place, 3);
  auto args = t.args(scale, backward, inverse_laplacian(t.batch, n, t.ld, scale));
  if (S) {
    args.row_axis = ax::spectral_row_axis(args.mult, n, t.ld, t.cols, t.batch, t.dist);
    ASSERT_EQ(args.row_axis, 1);
  }
  emulate<R, P, Q, C, S, H>(args, t.batch);
  ASSERT_EQ(t.changed_outside(), -1) << "an element outside the columns";
  const tessera::testing::ReferenceDft<double> dft(n, backward ? 1 : -1);
  const double err = t.error([&](long long c, std::vector<double>& re, std::vector<double>& im) {
    dft(re, im);
    for (long long k = 0; k < n; ++k) {
      const double f = S ? inverse_laplacian_factor(k, c, n, scale) : scale;
      re[k] *= f, im[k] *= f;
    }
  });
  EXPECT_LE(err, sizeof(R) == 4 ? 2e-6 : 1e-14)
      << "n " << n << " C " << C << (backward ? " backward" : " forward") << (in_place ? " in place" : "")
      << (S ? " spectral" : "") << (H ? " halves" : "");
}

// One tile's configuration, with and without halves where the kernel has both.
template <class R, int P, int Q, int C, bool S>
void check_halves(bool backward, bool in_place) {
  check<R, P, Q, C, S>(backward, in_place);
  if constexpr (ax::halves_fit<R, P, Q, C>()) check<R, P, Q, C, S, true>(backward, in_place);
}

template <class R, int P, int Q>
void check_tiles() {
  for (bool backward : {false, true}) {
    check_halves<R, P, Q, 64 / (2 * sizeof(R)), false>(backward, false);
    check_halves<R, P, Q, 128 / (2 * sizeof(R)), false>(backward, backward);
    check_halves<R, P, Q, 64 / (2 * sizeof(R)), true>(backward, backward);
    check_halves<R, P, Q, 128 / (2 * sizeof(R)), true>(backward, !backward);
  }
}

// The round trip against the DFT forward, inverse_laplacian's factors and the DFT backward, times
// the backward's scale, in place and out (the other columns of the rows kept).
template <class R, int P, int Q, int C, bool H = false>
void check_round_trip(bool in_place) {
  constexpr long long n = P * Q;
  const double scale = 0.25, factor_scale = 1.0 / n;
  Columns<R> t(n, in_place, 5);
  auto args = t.args(scale, false, inverse_laplacian(t.batch, n, t.ld, factor_scale));
  args.row_axis = ax::spectral_row_axis(args.mult, n, t.ld, t.cols, t.batch, t.dist);
  ASSERT_EQ(args.row_axis, 1);
  emulate<R, P, Q, C, true, H, true>(args, t.batch);
  ASSERT_EQ(t.changed_outside(), -1) << "an element outside the columns";
  const tessera::testing::ReferenceDft<double> forward(n, -1), backward(n, 1);
  const double err = t.error([&](long long c, std::vector<double>& re, std::vector<double>& im) {
    forward(re, im);
    for (long long k = 0; k < n; ++k) {
      const double f = inverse_laplacian_factor(k, c, n, factor_scale);
      re[k] *= f, im[k] *= f;
    }
    backward(re, im);
    for (long long j = 0; j < n; ++j) re[j] *= scale, im[j] *= scale;
  });
  EXPECT_LE(err, sizeof(R) == 4 ? 2e-6 : 1e-14)
      << "round trip n " << n << " C " << C << (in_place ? " in place" : "") << (H ? " halves" : "");
}

template <class R, int P, int Q>
void check_round_trip_tiles() {
  constexpr int narrow = 64 / (2 * sizeof(R)), wide = 128 / (2 * sizeof(R));
  check_round_trip<R, P, Q, narrow>(true);
  check_round_trip<R, P, Q, wide>(false);
  if constexpr (ax::halves_fit<R, P, Q, narrow>()) check_round_trip<R, P, Q, narrow, true>(false);
  if constexpr (ax::halves_fit<R, P, Q, wide>()) check_round_trip<R, P, Q, wide, true>(true);
}

// The rows are an axis of the factors' block only where every column of every transform starts
// at that axis's index 0.
TEST(FftAxis0Pass, SpectralRowAxis) {
  const auto p = inverse_laplacian(2, 256, 24, 1.0);
  EXPECT_EQ(ax::spectral_row_axis(p, 256, 24, 19, 2, 256 * 24), 1);
  EXPECT_EQ(ax::spectral_row_axis(p, 256, 24, 25, 2, 256 * 24), -1);   // columns beyond a row
  EXPECT_EQ(ax::spectral_row_axis(p, 256, 24, 19, 2, 256 * 24 + 1), -1);  // transforms off the block
  EXPECT_EQ(ax::spectral_row_axis(p, 512, 24, 19, 1, 0), -1);        // no axis of 512
  auto shifted = p;
  shifted.offset = 7;
  EXPECT_EQ(ax::spectral_row_axis(shifted, 256, 24, 19, 1, 0), -1);
  shifted.offset = 256 * 24;
  EXPECT_EQ(ax::spectral_row_axis(shifted, 256, 24, 19, 1, 0), 1);
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

TEST(FftAxis0Pass, RoundTripsMatchTheDftBothWays) {
  check_round_trip_tiles<float, 16, 16>();
  check_round_trip_tiles<float, 32, 16>();
  check_round_trip_tiles<float, 32, 32>();
  check_round_trip_tiles<double, 16, 16>();
  check_round_trip_tiles<double, 32, 16>();
  check_round_trip_tiles<double, 32, 32>();
}
