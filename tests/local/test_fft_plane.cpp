// The one-kernel 2-D FFTs of square planes (local/src/fft/fft_plane.hpp), c2c, r2c and c2r: the ticket
// order, and the blocks emulated on the host task by task in that order (each phase of every
// thread, then the barrier), for every configuration the CUDA kernels instantiate, against a serial
// 2-D DFT.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dft_reference.hpp"
#include "fft/fft_plane.hpp"

namespace {
namespace ax = tessera::local::fft::detail::axis0;
namespace pl = tessera::local::fft::detail::plane;

// Every task once; a plane's columns only after all of its rows; at most lag + 1 planes begun and
// not finished at any ticket (what the kernel keeps in L2).
void check_order(long long batch, long long row_tiles, long long col_tiles) {
  std::set<std::tuple<long long, bool, long long>> seen;
  std::vector<long long> rows(batch), cols(batch);
  const long long total = batch * (row_tiles + col_tiles);
  for (long long t = 0; t < total; ++t) {
    const pl::Task k = pl::plane_task(t, batch, row_tiles, col_tiles);
    ASSERT_TRUE(k.plane >= 0 && k.plane < batch && k.tile >= 0) << "ticket " << t;
    ASSERT_LT(k.tile, k.columns ? col_tiles : row_tiles) << "ticket " << t;
    ASSERT_TRUE(seen.insert({k.plane, k.columns, k.tile}).second) << "ticket " << t << " repeats a task";
    if (k.columns) {
      ASSERT_EQ(rows[k.plane], row_tiles) << "ticket " << t << ": columns of plane " << k.plane << " before its rows";
      ++cols[k.plane];
    } else {
      ++rows[k.plane];
    }
    long long open = 0;
    for (long long p = 0; p < batch; ++p) open += rows[p] > 0 && cols[p] < col_tiles;
    ASSERT_LE(open, pl::plane_lag(batch) + 1) << "ticket " << t;
  }
  EXPECT_EQ(static_cast<long long>(seen.size()), total);
}

// What the kernel does, one task at a time in ticket order (which a real run may overlap only as
// far as the counters allow).
template <class R, int P, int Q, int C, bool H>
void emulate(const pl::Args<R>& a) {
  const long long tiles = a.n1 / C;
  std::vector<ax::Cx<R>> sh(std::max(C * P * Q, pl::row_tile_elements<P, Q, C>()));
  // Threads one after another, in reverse order for odd tickets: a thread that wrote where another
  // reads in the same phase (a race on the GPU) fails one of the two orders.
  const auto each_thread = [](bool reverse, const auto& f) {
    for (int i = 0; i < C * P; ++i) f(reverse ? C * P - 1 - i : i);
  };
  for (long long t = 0; t < a.batch * 2 * tiles; ++t) {
    const pl::Task k = pl::plane_task(t, a.batch, tiles, tiles);
    const bool reverse = t % 2 == 1;
    if (!k.columns) {
      each_thread(reverse, [&](int i) { pl::rows_phase1<R, P, Q, C, H>(i, k.plane, k.tile * C, a, sh.data()); });
      each_thread(reverse, [&](int i) { pl::rows_phase2<R, P, Q, C, H>(i, k.plane, k.tile * C, a, sh.data()); });
    } else {
      const ax::Args<R> col = pl::column_args(a, k.plane);
      each_thread(reverse, [&](int i) { ax::phase1<R, P, Q, C, true, H>(i, k.tile * C, 0, col, sh.data()); });
      each_thread(reverse, [&](int i) { ax::phase2<R, P, Q, C, false, H>(i, k.tile * C, 0, col, sh.data()); });
    }
  }
}

// H: 32-point FFTs in halves.
template <class R, int P, int Q, int C, bool H = false>
void check(long long batch, bool backward, bool in_place) {
  constexpr long long n = P * Q;
  const double scale = 0.25;
  std::vector<ax::Cx<R>> x(batch * n * n), y(batch * n * n, {R(7), R(7)});
  const auto tw = ax::twiddle_table<R>(n);
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : x) v = {static_cast<R>(u(gen)), static_cast<R>(u(gen))};
  if (in_place) y = x;
  emulate<R, P, Q, C, H>(pl::Args<R>{in_place ? y.data() : x.data(), y.data(), tw.data(), tw.data(), n, n, batch,
                                  backward, static_cast<R>(scale)});
  // The reference: a DFT of every row, then of every column, in double.
  std::vector<double> re(batch * n * n), im(batch * n * n), lr(n), li(n);
  for (long long i = 0; i < batch * n * n; ++i) re[i] = x[i].x, im[i] = x[i].y;
  const tessera::testing::ReferenceDft<double> dft(n, backward ? 1 : -1);
  for (long long b = 0; b < batch; ++b)
    for (int axis : {1, 0})
      for (long long line = 0; line < n; ++line) {
        const auto at = [&](long long j) { return b * n * n + (axis == 1 ? line * n + j : j * n + line); };
        for (long long j = 0; j < n; ++j) lr[j] = re[at(j)], li[j] = im[at(j)];
        dft(lr, li);
        for (long long j = 0; j < n; ++j) re[at(j)] = lr[j], im[at(j)] = li[j];
      }
  double num = 0, den = 0;
  for (long long i = 0; i < batch * n * n; ++i) {
    const std::complex<double> want(re[i] * scale, im[i] * scale), got(y[i].x, y[i].y);
    num += std::norm(got - want), den += std::norm(want);
  }
  EXPECT_LE(std::sqrt(num / den), sizeof(R) == 4 ? 3e-6 : 1e-14)
      << "n " << n << " C " << C << " batch " << batch << (backward ? " backward" : " forward")
      << (in_place ? " in place" : "") << (H ? " halves" : "");
}

// One tile's configuration, with and without halves where the kernel has both.
template <class R, int P, int Q, int C>
void check_halves(long long batch, bool backward, bool in_place) {
  check<R, P, Q, C>(batch, backward, in_place);
  if constexpr (ax::halves_fit<R, P, Q, C>()) check<R, P, Q, C, true>(batch, !backward, in_place);
}

template <class R, int P, int Q>
void check_tiles(long long batch) {
  check_halves<R, P, Q, 64 / (2 * sizeof(R))>(batch, false, false);
  check_halves<R, P, Q, 128 / (2 * sizeof(R))>(batch, true, true);
}

// The r2c and c2r kernels' blocks, task by task as emulate's: the c2c column phases, and row tasks
// in three phases; r2c takes a plane's rows first in ticket order, c2r its columns.
template <class R, int P, int Q, int C, bool H, class A>
void emulate_real(const A& a) {
  constexpr bool r2c = std::is_same_v<A, pl::R2cArgs<R>>;
  constexpr int P2 = pl::r2c_p2(P * Q), Q2 = pl::r2c_q2(P * Q), threads = C * P;
  constexpr int row_tile = r2c ? pl::r2c_row_tile_elements<P2, Q2, C>() : pl::c2r_row_tile_elements<P2, Q2, C>();
  const long long row_tiles = a.n1 / C, col_tiles = pl::spectrum_tiles(a.n2, C);
  std::vector<ax::Cx<R>> sh(std::max(C * P * Q, row_tile));
  const auto each_thread = [](bool reverse, const auto& f) {
    for (int i = 0; i < threads; ++i) f(reverse ? threads - 1 - i : i);
  };
  for (long long t = 0; t < a.batch * (row_tiles + col_tiles); ++t) {
    const pl::Task k = r2c ? pl::plane_task(t, a.batch, row_tiles, col_tiles)
                           : pl::plane_task(t, a.batch, col_tiles, row_tiles);
    const bool reverse = t % 2 == 1;
    const long long p = k.plane, row0 = k.tile * C;
    if (k.columns == r2c) {  // r2c: the second stage; c2r: the first
      const ax::Args<R> col = [&] {
        if constexpr (r2c) return pl::r2c_column_args(a, p);
        else return pl::c2r_column_args(a, p);
      }();
      each_thread(reverse, [&](int i) { ax::phase1<R, P, Q, C, true, H>(i, k.tile * C, 0, col, sh.data()); });
      each_thread(reverse, [&](int i) { ax::phase2<R, P, Q, C, false, H>(i, k.tile * C, 0, col, sh.data()); });
    } else if constexpr (r2c) {
      each_thread(reverse, [&](int i) { pl::r2c_rows_phase1<R, P2, Q2, C>(i, p, row0, a, sh.data()); });
      each_thread(reverse, [&](int i) { pl::r2c_rows_phase2<R, P2, Q2, C>(i, a, sh.data()); });
      each_thread(reverse, [&](int i) { pl::r2c_rows_phase3<R, P2, Q2, C>(i, threads, p, row0, a, sh.data()); });
    } else {
      each_thread(reverse, [&](int i) { pl::c2r_rows_phase1<R, P2, Q2, C>(i, threads, p, row0, a, sh.data()); });
      each_thread(reverse, [&](int i) { pl::c2r_rows_phase2<R, P2, Q2, C>(i, a, sh.data()); });
      each_thread(reverse, [&](int i) { pl::c2r_rows_phase3<R, P2, Q2, C>(i, p, row0, a, sh.data()); });
    }
  }
}

// The first n/2 + 1 columns of the 2-D DFT of `batch` n x n planes of reals (rows, then columns),
// in double, in rows of n: (real parts, imaginary parts).
std::pair<std::vector<double>, std::vector<double>> real_spectrum(const std::vector<double>& x, long long batch,
                                                                  long long n) {
  std::vector<double> sr(batch * n * n), si(batch * n * n), re(n), im(n);
  const tessera::testing::ReferenceDft<double> dft(n, -1);
  for (long long b = 0; b < batch; ++b) {
    for (long long r = 0; r < n; ++r) {
      for (long long j = 0; j < n; ++j) re[j] = x[(b * n + r) * n + j], im[j] = 0;
      dft(re, im);
      for (long long j = 0; j < n; ++j) sr[(b * n + r) * n + j] = re[j], si[(b * n + r) * n + j] = im[j];
    }
    for (long long c = 0; c <= n / 2; ++c) {
      for (long long r = 0; r < n; ++r) re[r] = sr[(b * n + r) * n + c], im[r] = si[(b * n + r) * n + c];
      dft(re, im);
      for (long long r = 0; r < n; ++r) sr[(b * n + r) * n + c] = re[r], si[(b * n + r) * n + c] = im[r];
    }
  }
  return {std::move(sr), std::move(si)};
}

// Random reals, rounded to R (what the kernels read).
template <class R>
std::vector<double> random_reals(long long count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(count);
  for (auto& v : x) v = static_cast<double>(static_cast<R>(u(gen)));
  return x;
}

// r2c planes against the reference, out of place (rows of n reals) and in place (rows padded to
// 2 (n/2 + 1) reals, the output over them).
template <class R, int P, int Q, int C, bool H = false>
void check_r2c(long long batch, bool in_place) {
  constexpr long long n = P * Q, m = n / 2 + 1;
  const long long ld = in_place ? 2 * m : n;
  const double scale = 0.5;
  const auto x = random_reals<R>(batch * n * n, 11);
  std::vector<ax::Cx<R>> y(batch * n * m, {R(7), R(7)});
  std::vector<R> in(in_place ? 0 : batch * n * ld);
  R* real = in_place ? reinterpret_cast<R*>(y.data()) : in.data();
  for (long long r = 0; r < batch * n; ++r)
    for (long long j = 0; j < n; ++j) real[r * ld + j] = static_cast<R>(x[r * n + j]);
  const auto tw = ax::twiddle_table<R>(n);
  emulate_real<R, P, Q, C, H>(
      pl::R2cArgs<R>{real, y.data(), tw.data(), tw.data(), n, n, batch, ld, static_cast<R>(scale)});
  const auto [sr, si] = real_spectrum(x, batch, n);
  double num = 0, den = 0;
  for (long long row = 0; row < batch * n; ++row)
    for (long long c = 0; c < m; ++c) {
      const std::complex<double> want(sr[row * n + c] * scale, si[row * n + c] * scale);
      const auto& g = y[row * m + c];
      num += std::norm(std::complex<double>(g.x, g.y) - want), den += std::norm(want);
    }
  EXPECT_LE(std::sqrt(num / den), sizeof(R) == 4 ? 3e-6 : 1e-14)
      << "r2c n " << n << " C " << C << " batch " << batch << (in_place ? " in place" : "") << (H ? " halves" : "");
}

// c2r planes: the spectrum of random reals (the reference's, so Hermitian where a c2r reads it)
// back to n^2 times those reals times the scale, out of place and in place.
template <class R, int P, int Q, int C, bool H = false>
void check_c2r(long long batch, bool in_place) {
  constexpr long long n = P * Q, m = n / 2 + 1;
  const double scale = 0.5;
  const auto x = random_reals<R>(batch * n * n, 13);
  const auto [sr, si] = real_spectrum(x, batch, n);
  std::vector<ax::Cx<R>> spec(batch * n * m);
  for (long long row = 0; row < batch * n; ++row)
    for (long long c = 0; c < m; ++c)
      spec[row * m + c] = {static_cast<R>(sr[row * n + c]), static_cast<R>(si[row * n + c])};
  const long long ld = in_place ? 2 * m : n;
  std::vector<R> out(in_place ? 0 : batch * n * ld, R(7));
  R* real = in_place ? reinterpret_cast<R*>(spec.data()) : out.data();
  const auto tw = ax::twiddle_table<R>(n);
  emulate_real<R, P, Q, C, H>(
      pl::C2rArgs<R>{spec.data(), real, tw.data(), tw.data(), n, n, batch, ld, static_cast<R>(scale)});
  double num = 0, den = 0;
  for (long long row = 0; row < batch * n; ++row)
    for (long long j = 0; j < n; ++j) {
      const double want = x[row * n + j] * n * n * scale, got = real[row * ld + j];
      num += (got - want) * (got - want), den += want * want;
    }
  EXPECT_LE(std::sqrt(num / den), sizeof(R) == 4 ? 3e-6 : 1e-13)
      << "c2r n " << n << " C " << C << " batch " << batch << (in_place ? " in place" : "") << (H ? " halves" : "");
}

template <class R, int P, int Q>
void check_r2c_tiles(long long batch) {
  constexpr int narrow = 64 / (2 * sizeof(R)), wide = 128 / (2 * sizeof(R));
  check_r2c<R, P, Q, narrow>(batch, false);
  check_r2c<R, P, Q, wide>(batch, true);
  check_c2r<R, P, Q, narrow>(batch, true);
  check_c2r<R, P, Q, wide>(batch, false);
  if constexpr (ax::halves_fit<R, P, Q, narrow>()) check_r2c<R, P, Q, narrow, true>(batch, true);
  if constexpr (ax::halves_fit<R, P, Q, wide>()) check_r2c<R, P, Q, wide, true>(batch, false);
  if constexpr (ax::halves_fit<R, P, Q, narrow>()) check_c2r<R, P, Q, narrow, true>(batch, false);
  if constexpr (ax::halves_fit<R, P, Q, wide>()) check_c2r<R, P, Q, wide, true>(batch, true);
}
}  // namespace

TEST(FftPlaneKernel, TicketOrderKeepsEachPlanesColumnsAfterItsRows) {
  for (long long batch : {1, 2, 3, 7})
    for (auto [rows, cols] : {std::pair{1LL, 1LL}, {4LL, 4LL}, {3LL, 5LL}}) check_order(batch, rows, cols);
}

TEST(FftPlaneKernel, EveryKernelConfigurationMatchesTheDft) {
  check_tiles<float, 16, 16>(3);
  check_tiles<double, 16, 16>(3);
  check_tiles<float, 32, 16>(2);
  check_tiles<double, 32, 16>(2);
  check_tiles<float, 32, 32>(1);
  check_tiles<double, 32, 32>(1);
}

// r2c and c2r planes (TESSERA_FFT_PLANE_KERNEL=on): every size, precision and tile, with halves
// where the column tasks have them, in place and out.
TEST(FftPlaneKernel, R2cAndC2rConfigurationsMatchTheDft) {
  check_r2c_tiles<float, 16, 16>(3);
  check_r2c_tiles<double, 16, 16>(2);
  check_r2c_tiles<float, 32, 16>(2);
  check_r2c_tiles<double, 32, 16>(1);
  check_r2c_tiles<float, 32, 32>(1);
  check_r2c_tiles<double, 32, 32>(1);
}
