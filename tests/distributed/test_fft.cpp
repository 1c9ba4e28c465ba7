// Distributed FFT against a serial FFTW transform of the same global array (host plans of the
// local layer), on host and GPU, slab and pencil, even and uneven sizes, 1-4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "../device_test.hpp"
#include "dist_test_util.hpp"
#include "fft_test_util.hpp"
#include "tessera/fft/fft.hpp"
#include "tessera/distributed/elementwise.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/local/fft_plan.hpp"
#include "fft/stages.hpp"  // private (distributed/src): the stage planner, tested without communicators

namespace {
namespace ts = tessera;
namespace td = tessera::distributed;
namespace fft = tessera::fft;
namespace lf = tessera::local::fft;
using ts::Device;
using ts::local::index_t;
using td::testing::gather_to_host;
using namespace td::testing::fft_util;


// forward against the serial transform, then backward back to the input (on its own layout).
template <class In, int R>
void check_on(const td::Layout<R>& in_layout, Device d, fft::Options opt = {}) {
  const auto n = in_layout.global_shape();
  const auto x0 = pattern<In>(ts::local::shape_size(n));
  auto x = make<In, R>(in_layout, d, x0);
  const auto plan = fft::get_plan<In, R>(in_layout, d, opt);
  EXPECT_EQ(plan->input_layout(), in_layout);
  auto y = plan->forward(x);
  EXPECT_EQ(y.layout(), plan->output_layout());
  if (opt.same_layout_output && is_complex<In>)
    EXPECT_TRUE(y.layout().same_blocks(in_layout)) << y.layout().str() << " vs " << in_layout.str();
  for (int a = 0; a < R; ++a) {  // wavenumbers of output_layout() lie on the output's blocks
    const auto k = fft::fftfreq<double, R>(plan->output_layout(), a, d, 1.0, is_complex<In> || a < R - 1 ? 0 : n[a]);
    EXPECT_TRUE(k.layout().same_blocks(y.layout())) << k.layout().str() << " vs " << y.layout().str();
  }
  const auto want = serial<In, R>(x0, n);
  EXPECT_LE(rel_err(gather_to_host(y), want), tol<In>()) << "forward " << in_layout.str();
  EXPECT_EQ(gather_to_host(x), x0) << "the input must be left as it was";
  auto back = plan->backward(y);
  EXPECT_EQ(back.layout(), in_layout) << "backward returns the caller's layout";
  EXPECT_NO_THROW((void)(x - back));
  EXPECT_LE(rel_err(gather_to_host(back), x0), tol<In>()) << "round trip " << in_layout.str();
}
template <class In, int R>
void check(Device d, const ts::distributed::Index<R>& n, fft::Options opt = {}, int grid_dims = 1) {
  const auto world = tessera::testing::world();
  td::ProcessGrid grid = grid_dims == 1 ? td::ProcessGrid(world) : td::ProcessGrid::balanced(world, grid_dims);
  check_on<In, R>(td::Layout<R>::block(grid, n), d, opt);
}
// Blocks along each split axis of `l` that grow with the coordinate (the last block holds about
// half the axis): uneven wherever there is more than one part.
template <int R> td::Layout<R> uneven(const td::Layout<R>& l) {
  typename td::Layout<R>::Offsets off;
  for (int a = 0; a < R; ++a) {
    const index_t len = l.global_shape()[a];
    const int p = l.split()[a] < 0 ? 1 : l.grid().dims()[l.split()[a]];
    off[a].assign(p + 1, 0);
    for (int c = 1; c < p; ++c) off[a][c] = (len / 2) * c * c / ((p - 1) * (p - 1));
    off[a][p] = len;
  }
  return td::Layout<R>(l.grid(), l.global_shape(), l.split(), off, {});
}

template <class K> class DistFft : public ts::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(DistFft, ts::testing::DeviceKinds, ts::testing::DeviceKindNames);

TYPED_TEST(DistFft, C2cSlab3d) {
  check<std::complex<double>, 3>(this->device(), {16, 12, 10});
  check<std::complex<float>, 3>(this->device(), {30, 17, 12});
}
TYPED_TEST(DistFft, C2cChunkedPipeline) {
  check<std::complex<double>, 3>(this->device(), {13, 11, 6}, {.chunks = 3});
  check<std::complex<double>, 2>(this->device(), {9, 20}, {.chunks = 5});
}
TYPED_TEST(DistFft, C2cPencil3d) {
  check<std::complex<double>, 3>(this->device(), {12, 10, 8}, {.decomposition = fft::Decomposition::pencil});
  check<std::complex<float>, 3>(this->device(), {7, 9, 5}, {.decomposition = fft::Decomposition::pencil, .chunks = 2}, 2);
}
// Outermost lengths of the GPU axis pass (256, 512): on several ranks the axis-0 stage of slabs
// and pencils is a 1-D plan down its columns, run by the pass (whole, or a pipeline chunk of the
// columns in the backward, with the backward's scale).
TYPED_TEST(DistFft, AxisPassLengths) {
  check<std::complex<double>, 3>(this->device(), {256, 6, 5}, {.chunks = 3});
  check<std::complex<float>, 3>(this->device(), {512, 4, 3});
  check<std::complex<double>, 2>(this->device(), {256, 9});
  check<std::complex<float>, 3>(this->device(), {256, 4, 6}, {.decomposition = fft::Decomposition::pencil}, 2);
}
TYPED_TEST(DistFft, AutomaticPencilWhenRanksExceedFirstAxis) {
  const int P = tessera::testing::world().size();
  const auto n = td::Index<3>{2, 12, 10};
  check<std::complex<double>, 3>(this->device(), n);
  const auto plan = fft::get_plan<std::complex<double>, 3>(td::Layout<3>::block(td::ProcessGrid(tessera::testing::world()), n),
                                                          this->device());
  EXPECT_EQ(plan->decomposition(), P > 2 ? fft::Decomposition::pencil : fft::Decomposition::slab);
}
TYPED_TEST(DistFft, R2cOddLastAxis) {
  check<double, 3>(this->device(), {10, 9, 7});
  check<float, 3>(this->device(), {8, 6, 11}, {.decomposition = fft::Decomposition::pencil});
  check<double, 2>(this->device(), {15, 9}, {.chunks = 2});
  check<double, 3>(this->device(), {3, 5, 4}, {}, 3);  // input on a 3-D grid: redistributed first
}
TYPED_TEST(DistFft, SameLayoutOutputAndOneRankAxes) {
  check<std::complex<double>, 3>(this->device(), {6, 5, 4}, {.same_layout_output = true});
  check<std::complex<double>, 2>(this->device(), {1, 8});  // axes shorter than the grid: empty blocks
}
// same_layout_output returns the caller's blocks, uneven ones too, and output_layout() says so;
// backward returns the caller's layout (issue #41).
TYPED_TEST(DistFft, SameLayoutOutputOnUnevenBlocks) {
  const auto world = tessera::testing::world();
  const td::ProcessGrid g1(world), g2 = td::ProcessGrid::balanced(world, 2);
  for (bool same : {true, false}) {
    SCOPED_TRACE(same ? "same_layout_output" : "transposed output");
    const fft::Options slab{.decomposition = fft::Decomposition::slab, .same_layout_output = same};
    const fft::Options pencil{.decomposition = fft::Decomposition::pencil, .same_layout_output = same};
    check_on<std::complex<double>, 3>(uneven(td::Layout<3>::block(g1, {13, 6, 5})), this->device(), slab);
    check_on<double, 3>(uneven(td::Layout<3>::block(g1, {11, 7, 6})), this->device(), slab);
    check_on<std::complex<float>, 3>(uneven(td::Layout<3>::block(g2, {9, 10, 4})), this->device(), pencil);
    check_on<float, 3>(uneven(td::Layout<3>(g2, {7, 5, 9}, {0, -1, 1})), this->device(), pencil);  // R2C axis split
    check_on<std::complex<double>, 2>(uneven(td::Layout<2>::block(g1, {12, 7})), this->device(), slab);
  }
}
TYPED_TEST(DistFft, OneDimensional) {  // several ranks: test_fft1d.cpp
  check<std::complex<double>, 1>(this->device(), {24}, {.same_layout_output = true});
  check<float, 1>(this->device(), {15});
}

TYPED_TEST(DistFft, NormsMatchNumpy) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  using C = std::complex<double>;
  const td::Index<3> n{6, 8, 5};
  const double N = 240;
  const auto l = td::Layout<3>::block(td::ProcessGrid(world), n);
  const auto x0 = pattern<C>(N);
  auto x = make<C, 3>(l, d, x0);
  const auto want = serial<C, 3>(x0, n);
  auto scaled = [&](double f) {
    auto v = want;
    for (auto& e : v) e *= f;
    return v;
  };
  EXPECT_LE(rel_err(gather_to_host(fft::fftn(x, fft::Norm::ortho)), scaled(1 / std::sqrt(N))), 1e-12);
  EXPECT_LE(rel_err(gather_to_host(fft::fftn(x, fft::Norm::forward)), scaled(1 / N)), 1e-12);
  for (auto norm : {fft::Norm::backward, fft::Norm::ortho, fft::Norm::forward}) {
    auto back = fft::ifftn(fft::fftn(x, norm), l, norm);
    EXPECT_LE(rel_err(gather_to_host(back), x0), 1e-12) << static_cast<int>(norm);
  }
  auto raw = fft::ifftn(fft::fftn(x, fft::Norm::none), l, fft::Norm::none);
  const auto r = gather_to_host(raw);
  for (std::size_t i = 0; i < r.size(); i += 37) EXPECT_NEAR(std::abs(r[i] - N * x0[i]), 0, 1e-9);
  auto rx = make<double, 3>(l, d, pattern<double>(N));
  auto ry = fft::rfftn(rx);
  auto rb = fft::irfftn(ry, l);
  EXPECT_LE(rel_err(gather_to_host(rb), pattern<double>(N)), 1e-12);
}

// The spectral factor on the forward's stores, against the serial transform times the factor
// computed here: R2C (rfftfreq last axis) and C2C, slabs and pencils, boxes that are not 2*pi.
template <class In, int R>
void check_spectral(Device d, const td::Index<R>& n, fft::Spectral sp, fft::Norm norm, fft::Options opt = {},
                    int grid_dims = 1) {
  const auto world = tessera::testing::world();
  td::ProcessGrid grid = grid_dims == 1 ? td::ProcessGrid(world) : td::ProcessGrid::balanced(world, grid_dims);
  const auto l = td::Layout<R>::block(grid, n);
  const auto x0 = pattern<In>(ts::local::shape_size(n));
  const auto plan = fft::get_plan<In, R>(l, d, opt);
  auto y = plan->forward(make<In, R>(l, d, x0), norm, sp);
  auto want = serial<In, R>(x0, n);
  td::Index<R> m = n;
  if constexpr (!is_complex<In>) m[R - 1] = n[R - 1] / 2 + 1;
  const double N = static_cast<double>(ts::local::shape_size(n));
  const double f = norm == fft::Norm::forward ? 1 / N : norm == fft::Norm::ortho ? 1 / std::sqrt(N) : 1.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double k2 = 0;
    index_t rest = static_cast<index_t>(i);
    for (int a = R - 1; a >= 0; --a) {
      index_t k = rest % m[a];
      rest /= m[a];
      if ((is_complex<In> || a < R - 1) && k > (n[a] - 1) / 2) k -= n[a];  // numpy fftfreq
      const double w = 2 * std::numbers::pi * k / sp.lengths[a];
      k2 += w * w;
    }
    const double g = sp.kind == fft::Spectral::Kind::inverse_laplacian ? (k2 > 0 ? -1 / k2 : 0.0)
                     : sp.kind == fft::Spectral::Kind::laplacian       ? -k2
                                                                       : 1.0;
    want[i] *= static_cast<typename Real<In>::type>(f * g);
  }
  EXPECT_LE(rel_err(gather_to_host(y), want), tol<In>()) << l.str();
}

TYPED_TEST(DistFft, SpectralMultiplyOnStores) {
  const auto d = this->device();
  using K = fft::Spectral::Kind;
  const fft::Spectral inv{K::inverse_laplacian, {1.0, 2.5, 7.0}}, lap{K::laplacian, {3.0, 1.0, 2.0}};
  check_spectral<double, 3>(d, {9, 8, 7}, inv, fft::Norm::backward);
  check_spectral<double, 3>(d, {9, 8, 7}, inv, fft::Norm::ortho, {}, 2);  // pencils where ranks allow
  check_spectral<std::complex<float>, 2>(d, {6, 10}, lap, fft::Norm::forward);
  check_spectral<std::complex<double>, 3>(d, {5, 6, 4}, lap, fft::Norm::none, {.chunks = 3});
  check_spectral<float, 2>(d, {7, 9}, {}, fft::Norm::forward);  // normalization alone
  // Poisson: backward(forward(f) * -1/|k|^2) inverts the Laplacian of a trigonometric u.
  const auto world = tessera::testing::world();
  const td::Index<3> n{8, 12, 10};
  const auto l = td::Layout<3>::block(td::ProcessGrid(world), n);
  std::vector<double> u(960), f(960);
  for (index_t i = 0; i < 8; ++i)
    for (index_t j = 0; j < 12; ++j)
      for (index_t k = 0; k < 10; ++k) {
        const double x = 2 * std::numbers::pi * i / 8, y = 2 * std::numbers::pi * j / 12, z = 2 * std::numbers::pi * k / 10;
        u[(i * 12 + j) * 10 + k] = std::sin(x) * std::cos(2 * y) * std::sin(3 * z);
        f[(i * 12 + j) * 10 + k] = -14 * u[(i * 12 + j) * 10 + k];
      }
  const auto plan = fft::get_plan<double, 3>(l, d);
  auto got = plan->backward(plan->forward(make<double, 3>(l, d, f), fft::Norm::backward, {K::inverse_laplacian}));
  EXPECT_LE(rel_err(gather_to_host(got), u), 1e-12);
  auto F = plan->forward(make<double, 3>(l, d, f), fft::Norm::backward, {K::inverse_laplacian});
  got = plan->backward_in_place(F);  // C2R over the spectrum's own memory (apps/poisson)
  EXPECT_LE(rel_err(gather_to_host(got), u), 1e-12);
}

// Plan::apply's Poisson solve of u = sin x cos 2y sin 3z + cos(4x - 2y + z) / 2 (zero mean) on
// the 2 pi box, against u and against the two calls it stands for: slabs or pencils; on one rank a
// first axis of 256 takes a GPU's one-kernel round trip (the forward's last pass, the factors, the
// backward's first pass), others the two transforms.
template <class T>
void check_apply(Device d, const td::Index<3>& n, int grid_dims) {
  const auto world = tessera::testing::world();
  const td::ProcessGrid grid = grid_dims == 1 ? td::ProcessGrid(world) : td::ProcessGrid::balanced(world, grid_dims);
  const auto l = td::Layout<3>::block(grid, n);
  std::vector<T> u, f;
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k) {
        const double x = 2 * std::numbers::pi * i / n[0], y = 2 * std::numbers::pi * j / n[1],
                     z = 2 * std::numbers::pi * k / n[2];
        const double a = std::sin(x) * std::cos(2 * y) * std::sin(3 * z), b = std::cos(4 * x - 2 * y + z) / 2;
        u.push_back(static_cast<T>(a + b)), f.push_back(static_cast<T>(-14 * a - 21 * b));
      }
  const auto plan = fft::get_plan<T, 3>(l, d);
  const fft::Spectral inv{fft::Spectral::Kind::inverse_laplacian};
  const auto x = make<T, 3>(l, d, f);
  const auto got = gather_to_host(plan->apply(x, inv));
  EXPECT_LE(rel_err(got, u), 10 * tol<T>()) << l.str();
  EXPECT_LE(rel_err(got, gather_to_host(plan->backward(plan->forward(x, fft::Norm::backward, inv)))), tol<T>())
      << l.str();
  EXPECT_EQ(gather_to_host(x), f) << "the input must be left as it was";
}

TYPED_TEST(DistFft, ApplySolvesThePoissonEquation) {
  const auto d = this->device();
  check_apply<double>(d, {256, 6, 8}, 1);
  check_apply<float>(d, {256, 6, 8}, 1);
  check_apply<double>(d, {512, 5, 7}, 2);  // pencils where ranks allow
  check_apply<float>(d, {10, 12, 8}, 1);
  check_apply<std::complex<double>>(d, {9, 6, 8}, 1);
}

// `fields` patterned fields through one batched forward (against the serial transform) and back.
template <class In>
void check_fields(const fft::Plan<In, 3>& plan, const td::Layout<3>& l, Device d, int fields) {
  const index_t N = ts::local::shape_size(l.global_shape());
  std::vector<td::Array<In, 3>> xs;
  for (int f = 0; f < fields; ++f) xs.push_back(make<In, 3>(l, d, pattern<In>(N, f + 1)));
  auto ys = plan.forward(xs);
  ASSERT_EQ(ys.size(), static_cast<std::size_t>(fields));
  for (int f = 0; f < fields; ++f)
    EXPECT_LE(rel_err(gather_to_host(ys[f]), serial<In, 3>(pattern<In>(N, f + 1), l.global_shape())), 1e-12)
        << "field " << f;
  auto backs = plan.backward(ys);
  for (int f = 0; f < fields; ++f)
    EXPECT_LE(rel_err(gather_to_host(backs[f]), pattern<In>(N, f + 1)), 1e-12) << "field " << f;
}

TYPED_TEST(DistFft, BatchedAndInPlace) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  using C = std::complex<double>;
  const td::Index<3> n{9, 7, 6};
  const auto l = td::Layout<3>::block(td::ProcessGrid(world), n);
  for (int chunks : {1, 2, 4}) {
    const auto plan = fft::get_plan<C, 3>(l, d, {.chunks = chunks});
    check_fields<C>(*plan, l, d, 3);
    auto x = make<C, 3>(l, d, pattern<C>(378, 5));
    auto y = plan->forward_in_place(x);
    EXPECT_LE(rel_err(gather_to_host(y), serial<C, 3>(pattern<C>(378, 5), n)), 1e-12);
    auto b = plan->backward_in_place(y);
    EXPECT_LE(rel_err(gather_to_host(b), pattern<C>(378, 5)), 1e-12);
  }
}

// forward_into/backward_into write the caller's arrays: slab and (at 4 ranks) pencil stages, one
// and several chunks, C2C and R2C, a destination with halos (the result copied there), and a
// destination of other blocks refused.
template <class In>
void check_into(const td::Layout<3>& l, Device d, fft::Options opt) {
  using Out = typename fft::Plan<In, 3>::Out;
  const auto n = l.global_shape();
  const auto x0 = pattern<In>(ts::local::shape_size(n), 3);
  const auto x = make<In, 3>(l, d, x0);
  const auto plan = fft::get_plan<In, 3>(l, d, opt);
  td::Array<Out, 3> y(plan->output_layout(), d);
  plan->forward_into(x, y, fft::Norm::ortho);
  const auto want = serial<In, 3>(x0, n);
  const double scale = 1 / std::sqrt(double(ts::local::shape_size(n)));
  std::vector<Out> scaled(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) scaled[i] = want[i] * static_cast<typename Out::value_type>(scale);
  EXPECT_LE(rel_err(gather_to_host(y), scaled), tol<In>()) << "forward_into " << plan->describe();
  td::Array<In, 3> back(l, d);
  plan->backward_into(y, back, fft::Norm::ortho);
  EXPECT_LE(rel_err(gather_to_host(back), x0), tol<In>()) << "backward_into " << plan->describe();
  td::Array<In, 3> with_halos(l.with_halo({1, 1, 1}), d);  // not packed: the result is copied in
  plan->backward_into(y, with_halos, fft::Norm::ortho);
  EXPECT_LE(rel_err(gather_to_host(with_halos), x0), tol<In>()) << "backward_into an array with halos";
  if (l.grid().size() > 1 && !plan->output_layout().same_blocks(l)) {
    td::Array<Out, 3> wrong(td::Layout<3>(l.grid(), plan->output_layout().global_shape(), {-1, -1, 0}), d);
    EXPECT_THROW(plan->forward_into(x, wrong), td::LayoutMismatch);
  }
}
TYPED_TEST(DistFft, IntoCallersArrays) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  const td::Index<3> n{10, 6, 8};
  const auto slab = td::Layout<3>::block(td::ProcessGrid(world), n);
  for (int chunks : {1, 3}) {
    check_into<std::complex<double>>(slab, d, {.chunks = chunks});
    check_into<double>(slab, d, {.chunks = chunks});
  }
  check_into<std::complex<float>>(uneven(slab), d, {});
  if (world.size() == 4) {
    const auto pencil = td::Layout<3>::block(td::ProcessGrid::balanced(world, 2), n);
    check_into<std::complex<double>>(pencil, d, {.decomposition = fft::Decomposition::pencil});
    check_into<double>(pencil, d, {.decomposition = fft::Decomposition::pencil});
  }
}

// Real fields: the backward's c2r pass rides on its last exchange (per field, or per chunk of
// planes for one field).
TYPED_TEST(DistFft, BatchedRealRoundTrip) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  const td::Index<3> n{11, 6, 9};
  const auto l = td::Layout<3>::block(td::ProcessGrid(world), n);
  for (int chunks : {1, 3}) {
    const auto plan = fft::get_plan<double, 3>(l, d, {.chunks = chunks});
    check_fields<double>(*plan, l, d, 2);
    auto b = plan->backward(plan->forward(make<double, 3>(l, d, pattern<double>(594, 2))));
    EXPECT_LE(rel_err(gather_to_host(b), pattern<double>(594, 2)), 1e-12) << "chunks " << chunks;
  }
}

TYPED_TEST(DistFft, InputWithHalosAndOtherSplits) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  using C = std::complex<float>;
  const td::Index<3> n{8, 6, 10};
  const auto l = td::Layout<3>(td::ProcessGrid(world), n, {-1, -1, 0}, {1, 1, 1});  // split on the last axis, halos
  const auto x0 = pattern<C>(480);
  auto x = make<C, 3>(l, d, x0);
  auto y = fft::fftn(x);
  EXPECT_LE(rel_err(gather_to_host(y), serial<C, 3>(x0, n)), 1e-5);
  // backward accepts any layout of the output's shape (redistributed first)
  auto y2 = td::redistribute(y, td::Layout<3>(y.layout().grid(), y.global_shape(), {0, -1, -1}));
  auto b = fft::ifftn(y2, l);
  EXPECT_LE(rel_err(gather_to_host(b), x0), 1e-5);
}

// The DFT of a row-major array along one axis, directly (the serial reference of fft_along).
std::vector<std::complex<double>> dft_along(const std::vector<std::complex<double>>& x, const std::vector<index_t>& shape,
                                            int axis, double sign) {
  index_t inner = 1, outer = 1;
  for (std::size_t a = axis + 1; a < shape.size(); ++a) inner *= shape[a];
  for (int a = 0; a < axis; ++a) outer *= shape[a];
  const index_t n = shape[axis];
  std::vector<std::complex<double>> y(x.size());
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i)
      for (index_t k = 0; k < n; ++k) {
        std::complex<double> acc = 0;
        for (index_t j = 0; j < n; ++j)
          acc += x[(o * n + j) * inner + i] * std::polar(1.0, sign * 2 * std::numbers::pi * double(j * k) / double(n));
        y[(o * n + k) * inner + i] = acc;
      }
  return y;
}

template <class T>
std::vector<std::complex<double>> widen(const std::vector<T>& v) {
  return std::vector<std::complex<double>>(v.begin(), v.end());
}

TYPED_TEST(DistFft, TransformsAlongSomeAxes) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  using C = std::complex<double>;
  const td::Index<4> n{4, 5, 6, 7};
  const std::vector<index_t> shape(n.begin(), n.end());
  // Split along axis 3 (with halos) or axis 1: the transformed axes are whole on every rank.
  for (const auto& l : {td::Layout<4>(td::ProcessGrid(world), n, {-1, -1, -1, 0}, {0, 1, 0, 1}),
                        td::Layout<4>(td::ProcessGrid(world), n, {-1, 0, -1, -1})}) {
    const auto x0 = pattern<C>(ts::local::shape_size(n));
    auto x = make<C, 4>(l, d, x0);
    const std::vector<int> axes = l.split()[1] == 0 ? std::vector<int>{0, 2, 3} : std::vector<int>{2, 0, -3};
    auto want = widen(x0);
    for (int a : axes) want = dft_along(want, shape, a < 0 ? a + 4 : a, -1);
    auto y = fft::fft_along(x, axes, true, fft::Norm::ortho);
    EXPECT_TRUE(y.layout().same_blocks(l)) << y.layout().str();
    double points = 1;
    for (int a : axes) points *= double(n[a < 0 ? a + 4 : a]);
    for (auto& v : want) v /= std::sqrt(points);
    EXPECT_LE(rel_err(widen(gather_to_host(y)), want), 1e-12) << l.str();
    auto back = fft::fft_along(y, axes, false, fft::Norm::ortho);
    EXPECT_LE(rel_err(gather_to_host(back), x0), 1e-12);
    EXPECT_EQ(gather_to_host(x), x0) << "the input must be left as it was";
  }
  // R2C along axis 2 (odd-sized blocks behind it: 7 reals per row), C2C along 0; its inverse.
  const auto l = td::Layout<4>(td::ProcessGrid(world), n, {-1, 0, -1, -1});
  using R = float;
  const auto r0 = pattern<R>(ts::local::shape_size(n), 3);
  auto r = make<R, 4>(l, d, r0);
  auto spec = fft::rfft_along(r, {0, 2});
  EXPECT_EQ(spec.global_shape(), (td::Index<4>{4, 5, 4, 7}));
  auto full = dft_along(dft_along(widen(r0), shape, 2, -1), shape, 0, -1);
  std::vector<C> half;
  for (index_t i = 0; i < ts::local::shape_size(n); ++i)
    if ((i / 7) % 6 < 4) half.push_back(full[i]);
  EXPECT_LE(rel_err(widen(gather_to_host(spec)), half), 1e-5);
  auto back = fft::irfft_along(spec, {0, 2}, 6);
  EXPECT_LE(rel_err(widen(gather_to_host(back)), widen(r0)), 1e-5);
  EXPECT_THROW(fft::irfft_along(spec, {0, 2}, 9), ts::InvalidArgument);
  EXPECT_THROW(fft::fft_along(spec, {0, 0}, true), ts::InvalidArgument);
  EXPECT_THROW(fft::fft_along(spec, {4}, true), ts::InvalidArgument);
  if (world.size() > 1) EXPECT_THROW(fft::fft_along(spec, {1}, true), ts::InvalidArgument);  // split over the ranks
}

TYPED_TEST(DistFft, FftFreq) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  const auto l = td::Layout<2>::block(td::ProcessGrid(world), {7, 5});
  auto k0 = fft::fftfreq<double, 2>(l, 0, d, 0.5);
  const auto g = gather_to_host(k0);
  const double want[7] = {0, 1, 2, 3, -3, -2, -1};  // numpy.fft.fftfreq(7, 0.5) * 3.5
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_DOUBLE_EQ(g[i * 5 + j], want[i] / 3.5);
  auto k1 = fft::fftfreq<double, 2>(l, 1, d, 1.0, 8);  // rfftfreq(8): 0, 1/8, .., 4/8
  const auto h = gather_to_host(k1);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_DOUBLE_EQ(h[i * 5 + j], j / 8.0);
  EXPECT_THROW((fft::fftfreq<double, 2>(l, 2, d)), ts::InvalidArgument);
}

TYPED_TEST(DistFft, BadArguments) {
  const auto d = this->device();
  const auto world = tessera::testing::world();
  const auto l2 = td::Layout<2>::block(td::ProcessGrid(world), {8, 8});
  EXPECT_THROW((fft::Plan<std::complex<double>, 2>(l2, d, {.decomposition = fft::Decomposition::pencil})),
               ts::InvalidArgument);
  const auto plan = fft::get_plan<std::complex<double>, 2>(l2, d);
  auto wrong = td::Array<std::complex<double>, 2>(td::Layout<2>::block(td::ProcessGrid(world), {8, 6}), d);
  EXPECT_THROW(plan->forward(wrong), ts::ShapeMismatch);
  if (d.is_cuda()) {
    auto host = td::Array<std::complex<double>, 2>(l2, Device::host());
    EXPECT_THROW(plan->forward(host), ts::DeviceMismatch);
  }
}

}  // namespace

// The stage planner alone: shapes and counts in, stages out; no communicator, no layout.
TEST(FftStages, SlabsPencilsAndOneRank) {
  using fft::Decomposition;
  using fft::detail::make_stages;
  using fft::detail::StageShape;
  const Device host = Device::host();
  // One rank: one stage over every axis, nothing split.
  auto p = make_stages({8, 6, 4}, 1, Decomposition::automatic, host);
  ASSERT_EQ(p.stages.size(), 1u);
  EXPECT_EQ(p.stages[0], (StageShape{0, 2, {-1, -1, -1}, 0}));
  // Slabs: the inner axes on slabs along axis 0, then axis 0 on slabs along axis 1.
  p = make_stages({8, 6, 4}, 4, Decomposition::automatic, host);
  EXPECT_EQ(p.decomposition, Decomposition::slab);
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_EQ(p.stages[0], (StageShape{1, 2, {0, -1, -1}, 1}));
  EXPECT_EQ(p.stages[1], (StageShape{0, 0, {-1, 0, -1}, 1}));
  EXPECT_EQ(fft::detail::str(p), "slab: axes 1..2 on [0 -1 -1] of 1 grid axes; axes 0..0 on [-1 0 -1] of 1 grid axes");
  // More ranks than planes along axis 0: automatic takes pencils (three 1-D stages on a 2-D grid).
  p = make_stages({4, 8, 8}, 8, Decomposition::automatic, host);
  EXPECT_EQ(p.decomposition, Decomposition::pencil);
  ASSERT_EQ(p.stages.size(), 3u);
  EXPECT_EQ(p.stages[0], (StageShape{2, 2, {0, 1, -1}, 2}));
  EXPECT_EQ(p.stages[1], (StageShape{1, 1, {0, -1, 1}, 2}));
  EXPECT_EQ(p.stages[2], (StageShape{0, 0, {-1, 0, 1}, 2}));
  // Every axis is transformed exactly once, whatever the plan.
  for (int ranks : {1, 2, 3, 16})
    for (Decomposition d : {Decomposition::automatic, Decomposition::slab, Decomposition::pencil}) {
      const auto q = make_stages({5, 7, 9}, ranks, d, host);
      std::vector<int> times(3, 0);
      for (const auto& st : q.stages)
        for (int a = st.first_axis; a <= st.last_axis; ++a) {
          ++times[a];
          EXPECT_EQ(st.split[a], -1) << "axis " << a << " is transformed while split";
        }
      EXPECT_EQ(times, (std::vector<int>{1, 1, 1})) << fft::detail::str(q);
    }
  // 2-D slabs; a 1-D array over several ranks is fft1d's (no stages), over one a local transform.
  p = make_stages({6, 4}, 2, Decomposition::slab, host);
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_EQ(p.stages[1], (StageShape{0, 0, {-1, 0}, 1}));
  EXPECT_TRUE(make_stages({64}, 4, Decomposition::automatic, host).stages.empty());
  EXPECT_EQ(make_stages({64}, 1, Decomposition::four_step, host).stages.size(), 1u);
  // What no array of that rank can have.
  EXPECT_THROW(make_stages({8, 8}, 4, Decomposition::pencil, host), ts::InvalidArgument);
  EXPECT_THROW(make_stages({8, 8}, 4, Decomposition::bluestein, host), ts::InvalidArgument);
  EXPECT_THROW(make_stages({8, 0}, 1, Decomposition::slab, host), ts::InvalidArgument);
}
