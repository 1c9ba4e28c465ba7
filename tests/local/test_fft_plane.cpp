// The one-kernel 2-D FFT of square planes (local/src/fft/fft_plane.hpp): its ticket order, and its
// blocks emulated on the host task by task in that order (phase 1 of every thread, the barrier,
// phase 2), for every configuration the CUDA kernel instantiates, against a serial 2-D DFT.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <set>
#include <tuple>
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
