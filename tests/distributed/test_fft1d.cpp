// The 1-D distributed FFT (four-step, Bluestein for primes, R2C/C2R through C2C) against a
// serial FFTW transform of the gathered array, on host and GPU, at 1-5 ranks: lengths 30, 31,
// 2^20 and small ones, uneven blocks, transposed and natural output, every norm, round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "../device_test.hpp"
#include "dist_test_util.hpp"
#include "fft_test_util.hpp"
#include "tessera/distributed/elementwise.hpp"
#include "tessera/fft/fft.hpp"

namespace {
namespace ts = tessera;
namespace td = tessera::distributed;
namespace fft = tessera::fft;
using ts::Device;
using ts::local::index_t;
using td::testing::gather_to_host;
using namespace td::testing::fft_util;

const fft::Norm kNorms[] = {fft::Norm::backward, fft::Norm::ortho, fft::Norm::forward, fft::Norm::none};

double norm_factor(fft::Norm norm, bool forward, double n) {
  if (norm == fft::Norm::ortho) return 1 / std::sqrt(n);
  if (norm == fft::Norm::none) return 1;
  return (norm == fft::Norm::forward) == forward ? 1 / n : 1.0;
}
// Float error grows with log n (and Bluestein's longer transform).
template <class T> double tol1d(index_t n) {
  return tol<T>() * (sizeof(typename Real<T>::type) == 4 ? 4 : 10) * std::log2(n + 2);
}

// The serial spectrum in the plan's output order: position i*c + j holds X[i + r*j].
template <class C>
std::vector<C> in_order(const std::vector<C>& x, std::array<index_t, 2> order) {
  const auto [r, c] = order;
  std::vector<C> y(x.size());
  for (index_t i = 0; i < r; ++i)
    for (index_t j = 0; j < c; ++j) y[i * c + j] = x[i + r * j];
  return y;
}

// x of length n in `layout` (balanced blocks by default): forward against FFTW (scaled by the
// norm), in the plan's output order; backward(forward) against x; the input left alone.
template <class In>
void check(Device d, index_t n, fft::Norm norm, bool natural, std::vector<index_t> offsets = {}, int chunks = 0) {
  const auto world = tessera::testing::world();
  const td::ProcessGrid grid(world);
  const auto layout = offsets.empty() ? td::Layout<1>(grid, {n}, {0})
                                      : td::Layout<1>(grid, {n}, {0}, td::Layout<1>::Offsets{offsets}, {});
  const auto x0 = pattern<In>(n, static_cast<int>(n % 7) + 1);
  auto x = make<In, 1>(layout, d, x0);
  const auto plan = fft::get_plan<In, 1>(layout, d, {.same_layout_output = natural, .chunks = chunks});
  auto y = plan->forward(x, norm);
  auto want = serial<In, 1>(x0, {n});
  const double f = norm_factor(norm, true, static_cast<double>(n));
  for (auto& v : want) v *= static_cast<typename Real<In>::type>(f);
  const auto order = plan->output_order();
  bool prime = n > 1;
  for (index_t k = 2; k * k <= n; ++k) prime = prime && n % k != 0;
  if (natural || !is_complex<In> || world.size() == 1 || prime) EXPECT_EQ(order[0], 1);  // Bluestein: natural
  else if (n > 3) EXPECT_GT(order[0], 1) << "four-step factors of " << n;
  EXPECT_EQ(order[0] * order[1], static_cast<index_t>(want.size()));
  EXPECT_EQ(y.layout(), plan->output_layout());
  if (natural && is_complex<In>) EXPECT_TRUE(y.layout().same_blocks(layout)) << y.layout().str() << " vs " << layout.str();
  if (world.size() > 1)  // no factor pair: Bluestein
    EXPECT_EQ(plan->decomposition(), prime || n == 1 ? fft::Decomposition::bluestein : fft::Decomposition::four_step);
  const std::string what = "n=" + std::to_string(n) + " norm " + std::to_string(static_cast<int>(norm)) +
                           (natural ? " natural" : " transposed") + " order " + std::to_string(order[0]) + "x" +
                           std::to_string(order[1]) + " on " + std::to_string(world.size()) + " ranks";
  EXPECT_LE(rel_err(gather_to_host(y), in_order(want, order)), tol1d<In>(n)) << "forward " << what;
  EXPECT_EQ(gather_to_host(x), x0) << "the input must be left as it was";
  auto back = plan->backward(y, norm);
  EXPECT_EQ(back.layout(), plan->input_layout());
  EXPECT_EQ(back.layout(), layout) << "backward returns the caller's layout";
  auto b = gather_to_host(back);
  if (norm == fft::Norm::none)
    for (auto& v : b) v /= static_cast<typename Real<In>::type>(n);
  EXPECT_LE(rel_err(b, x0), tol1d<In>(n)) << "round trip " << what;
}

template <class K> class DistFft1d : public ts::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(DistFft1d, ts::testing::DeviceKinds, ts::testing::DeviceKindNames);

TYPED_TEST(DistFft1d, C2cLengths30And31AllNorms) {
  for (index_t n : {30, 31})
    for (auto norm : kNorms)
      for (bool natural : {false, true}) {
        check<std::complex<double>>(this->device(), n, norm, natural);
        check<std::complex<float>>(this->device(), n, norm, natural);
      }
}
TYPED_TEST(DistFft1d, C2cPowerOfTwoLarge) {
  for (int k = 0; k < 4; ++k)  // every norm, both orders
    check<std::complex<double>>(this->device(), 1 << 20, kNorms[k], k % 2 == 1);
  check<std::complex<float>>(this->device(), 1 << 20, fft::Norm::ortho, false);
}
TYPED_TEST(DistFft1d, C2cSmallAndAwkwardLengths) {
  // primes (Bluestein), a prime times a small factor, squares of primes, lengths below the rank count
  for (index_t n : {1, 2, 3, 4, 7, 13, 49, 62, 97, 121, 210, 1009})
    for (bool natural : {false, true}) check<std::complex<double>>(this->device(), n, fft::Norm::backward, natural);
}
TYPED_TEST(DistFft1d, R2cC2r) {
  for (index_t n : {30, 31, 2, 3, 64, 97})
    for (auto norm : kNorms) check<double>(this->device(), n, norm, false);
  check<float>(this->device(), 31, fft::Norm::forward, true);
  check<double>(this->device(), 1 << 20, fft::Norm::backward, false);
  check<float>(this->device(), 1 << 20, fft::Norm::ortho, true);
}
TYPED_TEST(DistFft1d, UnevenInputBlocks) {
  const int P = tessera::testing::world().size();
  for (index_t n : {30, 31, 1 << 12}) {
    std::vector<index_t> o(P + 1, 0);  // the last rank holds half, the others share the rest unevenly
    for (int r = 1; r < P; ++r) o[r] = (n / 2) * r * r / ((P - 1) * (P - 1));
    o[P] = n;
    for (bool natural : {false, true}) {
      check<std::complex<double>>(this->device(), n, fft::Norm::ortho, natural, o);
      check<double>(this->device(), n, fft::Norm::backward, natural, o);
    }
  }
}
// The numpy-like calls: ifftn(fftn(x), x.layout()) lies on x's blocks, whatever the plan's own
// input blocks (n = 1000 at 3 ranks: {0,340,680,1000} against x's {0,334,667,1000}).
TYPED_TEST(DistFft1d, RoundTripOnTheCallersLayout) {
  const td::ProcessGrid grid(tessera::testing::world());
  using C = std::complex<double>;
  for (index_t n : {30, 1000, 4096, 97}) {
    const auto l = td::Layout<1>(grid, {n}, {0});
    const auto x0 = pattern<C>(n, 3);
    const auto x = make<C, 1>(l, this->device(), x0);
    const auto back = fft::ifftn(fft::fftn(x), x.layout());
    EXPECT_EQ(back.layout(), x.layout()) << "n=" << n;
    EXPECT_NO_THROW((void)(x - back)) << "n=" << n;
    EXPECT_LE(rel_err(gather_to_host(back), x0), tol1d<C>(n)) << "n=" << n;
    // natural order: output_layout() is where forward's output lies, so its wavenumbers combine with it
    const auto plan = fft::get_plan<C, 1>(l, this->device(), {.same_layout_output = true});
    const auto y = plan->forward(x);
    const auto k = fft::fftfreq<double, 1>(plan->output_layout(), 0, this->device());
    EXPECT_TRUE(k.layout().same_blocks(y.layout())) << k.layout().str() << " vs " << y.layout().str();
    const auto b2 = plan->backward(y);
    EXPECT_EQ(b2.layout(), l);
    EXPECT_LE(rel_err(gather_to_host(b2), x0), tol1d<C>(n)) << "natural n=" << n;
  }
}
TYPED_TEST(DistFft1d, ChunkedPipeline) {  // the local FFT of part k+1 while part k travels
  for (int chunks : {2, 3, 7})
    for (bool natural : {false, true}) {
      check<std::complex<double>>(this->device(), 30, fft::Norm::ortho, natural, {}, chunks);
      check<std::complex<float>>(this->device(), 1 << 12, fft::Norm::forward, natural, {}, chunks);
      check<double>(this->device(), 97, fft::Norm::backward, natural, {}, chunks);
    }
}
TYPED_TEST(DistFft1d, PlanLayoutsAndBatches) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  using C = std::complex<double>;
  const index_t n = 30;
  const auto l = td::Layout<1>(td::ProcessGrid(world), {n}, {0});
  const auto plan = fft::get_plan<C, 1>(l, d);
  const auto order = plan->output_order();
  EXPECT_EQ(plan->input_layout(), l);
  std::vector<td::Array<C, 1>> xs;
  for (int f = 0; f < 3; ++f) xs.push_back(make<C, 1>(l, d, pattern<C>(n, f + 2)));
  auto ys = plan->forward(xs);
  ASSERT_EQ(ys.size(), 3u);
  for (int f = 0; f < 3; ++f)
    EXPECT_LE(rel_err(gather_to_host(ys[f]), in_order(serial<C, 1>(pattern<C>(n, f + 2), {n}), order)), 1e-12);
  auto backs = plan->backward(ys);
  for (int f = 0; f < 3; ++f) EXPECT_LE(rel_err(gather_to_host(backs[f]), pattern<C>(n, f + 2)), 1e-12);
  auto x = make<C, 1>(l, d, pattern<C>(n, 9));
  auto y = plan->forward_in_place(x);
  auto b = plan->backward_in_place(y);
  EXPECT_LE(rel_err(gather_to_host(b), pattern<C>(n, 9)), 1e-12);
  // numpy-like calls: fftn's transposed output goes back through ifftn
  auto z = make<C, 1>(l, d, pattern<C>(n, 4));
  EXPECT_LE(rel_err(gather_to_host(fft::ifftn(fft::fftn(z), l)), pattern<C>(n, 4)), 1e-12);
  auto rz = make<double, 1>(l, d, pattern<double>(n, 4));
  EXPECT_LE(rel_err(gather_to_host(fft::irfftn(fft::rfftn(rz), l)), pattern<double>(n, 4)), 1e-12);
}
TYPED_TEST(DistFft1d, SpectralMultiplyIsRefusedOverSeveralRanks) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  const auto l = td::Layout<1>(td::ProcessGrid(world), {32}, {0});
  const auto plan = fft::get_plan<double, 1>(l, d);
  auto x = make<double, 1>(l, d, pattern<double>(32));
  const fft::Spectral lap{fft::Spectral::Kind::laplacian};
  if (world.size() == 1) {
    EXPECT_NO_THROW(plan->forward(x, fft::Norm::backward, lap));
  } else {
    EXPECT_THROW(plan->forward(x, fft::Norm::backward, lap), ts::InvalidArgument);
  }
}

}  // namespace
