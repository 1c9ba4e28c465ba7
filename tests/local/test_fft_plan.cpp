// Local FFT plans against a DFT in long double, for every layout the distributed
// FFT relies on: 1-3-D, c2c/r2c/c2r, odd sizes, strided batches, padded embeds, in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dft_reference.hpp"
#include "device_test.hpp"
#include "tessera/config.hpp"
#include "tessera/local/dtype.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/fft_plan.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/settings.hpp"

namespace fft = tessera::local::fft;
using fft::Direction;
using fft::Kind;
using fft::PlanDesc;
using fft::Precision;
using tessera::Buffer;
using tessera::Device;
using cld = std::complex<long double>;

namespace {

bool real_side(const PlanDesc& d, bool input) { return d.kind == (input ? Kind::r2c : Kind::c2r); }

// Logical dims of one side: the complex side of r2c/c2r keeps n/2+1 of the last dimension.
std::array<long long, 3> side(const PlanDesc& d, bool input) {
  auto m = d.n;
  if (d.kind != Kind::c2c && !real_side(d, input)) m[d.rank - 1] = m[d.rank - 1] / 2 + 1;
  return m;
}
long long count(const PlanDesc& d, const std::array<long long, 3>& m) {
  long long c = 1;
  for (int a = 0; a < d.rank; ++a) c *= m[a];
  return c;
}

// Offset in elements of logical element `flat` (row-major) of batch b, by the header's formula.
long long offset(const PlanDesc& d, bool input, long long b, long long flat) {
  const auto m = side(d, input);
  const auto& e = input ? d.inembed : d.onembed;
  long long off = 0, scale = 1;
  for (int a = d.rank - 1; a >= 0; --a, scale *= e[a + 1]) off += (flat % m[a]) * scale, flat /= m[a];
  return b * (input ? d.idist : d.odist) + off * (input ? d.istride : d.ostride);
}

// DFT of `batch` contiguous arrays of dims n in long double, one axis at a time.
std::vector<cld> dft(const std::vector<cld>& x, const PlanDesc& d, int sign) {
  const long long N = count(d, d.n);
  std::vector<cld> y = x;
  for (int a = 0; a < d.rank; ++a) {
    const long long n = d.n[a];
    long long in = 1;
    for (int b = a + 1; b < d.rank; ++b) in *= d.n[b];
    std::vector<long double> re(n), im(n);
    const tessera::testing::ReferenceDft<long double> along(n, sign);
    for (long long base = 0; base < d.batch * N; base += n * in)
      for (long long i = 0; i < in; ++i) {
        for (long long j = 0; j < n; ++j) re[j] = y[base + j * in + i].real(), im[j] = y[base + j * in + i].imag();
        along(re, im);
        for (long long k = 0; k < n; ++k) y[base + k * in + i] = {re[k], im[k]};
      }
  }
  return y;
}

// The non-redundant half (last index < n/2+1) of full spectra.
std::vector<cld> half(const std::vector<cld>& full, const PlanDesc& d) {
  const long long n = d.n[d.rank - 1], h = n / 2 + 1;
  std::vector<cld> y;
  for (std::size_t i = 0; i < full.size(); ++i)
    if (static_cast<long long>(i) % n < h) y.push_back(full[i]);
  return y;
}

double rel_err(const std::vector<cld>& y, const std::vector<cld>& want) {
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) num += std::norm(y[i] - want[i]), den += std::norm(want[i]);
  return static_cast<double>(std::sqrt(num / den));
}

template <class T>
void upload(void* dst, Device dev, const std::vector<T>& v) {
  tessera::detail::memcpy_any(dst, dev, v.data(), Device::host(), v.size() * sizeof(T),
                              tessera::Stream::default_for(dev));
}
template <class T>
std::vector<T> download(const void* src, Device dev, std::size_t n) {
  std::vector<T> v(n);
  tessera::detail::memcpy_any(v.data(), Device::host(), src, dev, n * sizeof(T),
                              tessera::Stream::default_for(dev));
  return v;
}

// Runs the cached plan of `desc` on logical input x (batch x side dims) and returns the logical
// output. Gaps in the input are NaN, so reading them shows; an out-of-place input must survive.
template <class R>
std::vector<cld> run(const PlanDesc& desc, Direction dir, const std::vector<cld>& x, bool own_work,
                     const fft::StoreMultiply* mult = nullptr) {
  const auto plan = fft::get_plan(desc);
  const PlanDesc& d = plan->desc();
  const Device dev = d.device;
  const long long ci = real_side(d, true) ? 1 : 2, co = real_side(d, false) ? 1 : 2;
  const long long mi = count(d, side(d, true)), mo = count(d, side(d, false));
  std::vector<R> in(fft::input_elements(d) * ci, std::numeric_limits<R>::quiet_NaN());
  for (long long b = 0; b < d.batch; ++b)
    for (long long j = 0; j < mi; ++j) {
      const long long o = ci * offset(d, true, b, j);
      in[o] = static_cast<R>(x[b * mi + j].real());
      if (ci == 2) in[o + 1] = static_cast<R>(x[b * mi + j].imag());
    }
  const std::size_t ib = in.size() * sizeof(R), ob = fft::output_elements(d) * co * sizeof(R);
  Buffer bin(d.in_place ? std::max(ib, ob) : ib, dev), bout(d.in_place ? 0 : ob, dev);
  Buffer work(own_work ? plan->work_bytes() : 0, dev);
  upload(bin.data(), dev, in);
  void* out = d.in_place ? bin.data() : bout.data();
  const auto& stream = tessera::Stream::default_for(dev);
  if (mult) plan->execute(bin.data(), out, dir, stream, *mult, own_work ? work.data() : nullptr);
  else plan->execute(bin.data(), out, dir, stream, own_work ? work.data() : nullptr);
  const auto res = download<R>(out, dev, ob / sizeof(R));
  if (!d.in_place && d.preserve_input) {
    const auto after = download<R>(bin.data(), dev, in.size());
    EXPECT_EQ(std::memcmp(after.data(), in.data(), ib), 0) << "input modified: " << fft::to_string(d);
  }
  std::vector<cld> y(d.batch * mo);
  for (long long b = 0; b < d.batch; ++b)
    for (long long j = 0; j < mo; ++j) {
      const long long o = co * offset(d, false, b, j);
      y[b * mo + j] = cld(res[o], co == 2 ? res[o + 1] : 0);
    }
  return y;
}

// Checks one transform against the direct DFT; c2r gets the exact half spectrum of real data.
// A nonzero `scale` makes it a plan with that fixed store scale (PlanDesc::store_scale).
void check(const PlanDesc& desc, Direction dir, bool own_work = false, double scale = 0) {
  PlanDesc d = fft::normalize(desc);
  fft::StoreMultiply m;
  if (scale != 0) d.store_multiply = true, d.store_scale = m.scale = scale;
  const long long N = count(d, d.n);
  std::mt19937 gen(42);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<cld> x(d.batch * N);
  for (auto& v : x) v = cld(u(gen), d.kind == Kind::c2c ? u(gen) : 0.0);
  std::vector<cld> in = x, want;
  if (d.kind == Kind::c2c) want = dft(x, d, static_cast<int>(dir));
  if (d.kind == Kind::r2c) want = half(dft(x, d, -1), d);
  if (d.kind == Kind::c2r) {
    in = half(dft(x, d, -1), d);
    for (auto& v : x) v *= static_cast<long double>(N);
    want = x;
  }
  if (scale != 0)
    for (auto& v : want) v *= static_cast<long double>(scale);
  const auto* mult = scale != 0 ? &m : nullptr;
  const bool sp = d.precision == Precision::single;
  const double err = sp ? rel_err(run<float>(d, dir, in, own_work, mult), want)
                        : rel_err(run<double>(d, dir, in, own_work, mult), want);
  EXPECT_LE(err, sp ? 1e-5 : 1e-12) << fft::to_string(d) << (dir == Direction::forward ? " forward" : " backward");
}

void check_both(PlanDesc d, Direction dir) {
  for (auto p : {Precision::single, Precision::double_}) {
    d.precision = p;
    check(d, dir);
  }
}

}  // namespace

template <class K>
class FftPlan : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(FftPlan, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(FftPlan, ComplexToComplex1D2D3D) {
  const Device dev = this->device();
  for (auto n : {std::initializer_list<long long>{12}, {6, 5}, {4, 3, 5}})
    for (auto dir : {Direction::forward, Direction::backward})
      check_both(fft::make_desc(dev, Kind::c2c, Precision::double_, n, 2), dir);
}

TYPED_TEST(FftPlan, RealToComplexAndBackOddLastDim) {
  const Device dev = this->device();
  for (auto n : {std::initializer_list<long long>{9}, {4, 7}, {6, 5, 7}}) {
    check_both(fft::make_desc(dev, Kind::r2c, Precision::double_, n), Direction::forward);
    check_both(fft::make_desc(dev, Kind::c2r, Precision::double_, n, 2), Direction::backward);
  }
  // A caller's work area; and c2r allowed to clobber its input (then it needs no copy).
  check(fft::make_desc(dev, Kind::c2r, Precision::double_, {6, 5, 7}), Direction::backward, true);
  auto d = fft::make_desc(dev, Kind::c2r, Precision::single, {6, 5, 7});
  d.preserve_input = false;
  check(d, Direction::backward);
  if (dev.is_host()) {
    EXPECT_EQ(fft::get_plan(d)->work_bytes(), 0u) << "no copy, no work area";
  }
}

TYPED_TEST(FftPlan, BatchedStridedLayouts) {
  const Device dev = this->device();
  // 4 transforms of length 9 stored as the columns of a row-major 9x4 matrix.
  auto d = fft::make_desc(dev, Kind::c2c, Precision::double_, {9}, 4);
  d.istride = d.ostride = 4;
  d.idist = d.odist = 1;
  check_both(d, Direction::forward);
  check_both(d, Direction::backward);
  d.kind = Kind::r2c;  // columns in, packed rows out
  d.ostride = d.odist = 0;
  check_both(d, Direction::forward);
  d.kind = Kind::c2r;  // complex columns in (stride 4 over 5 rows), packed real rows out
  check_both(d, Direction::backward);
  // 2-D batches with padded rows, gaps between batches and a strided, padded output.
  auto e = fft::make_desc(dev, Kind::c2c, Precision::double_, {4, 5}, 3);
  e.inembed = {4, 8, 0};
  e.idist = 4 * 8 + 3;
  e.onembed = {6, 5, 0};
  e.ostride = 2;
  check_both(e, Direction::forward);
  EXPECT_EQ(fft::output_elements(e), 2 * 2 * 30 + 2 * 19 + 1);
  e.kind = Kind::r2c;
  e.onembed = {6, 3, 0};
  check_both(e, Direction::forward);
}

namespace {
// A spectral StoreMultiply over a block of `dims` axes (the fields not given left 0).
fft::StoreMultiply spectral_multiply(fft::StoreMultiply::Spectral kind, double scale, int dims,
                                     std::array<long long, 4> block, std::array<long long, 4> n,
                                     std::array<double, 4> k) {
  fft::StoreMultiply m;
  m.spectral = kind;
  m.scale = scale;
  m.dims = dims;
  m.block = block, m.n = n, m.k = k;
  return m;
}

// numpy.fft.fftfreq's index of i among n points (times n).
double fftfreq(long long i, long long n) { return static_cast<double>(2 * i < n ? i : i - n); }
}  // namespace

// A store-multiplying plan: each output element times the factor of its position, against the
// same transform without; strided, padded, in-place and real outputs, scale and spectral factors.
TYPED_TEST(FftPlan, StoreMultiplyScalesEveryOutputElement) {
  const Device dev = this->device();
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  auto compare = [&](PlanDesc d, Direction dir, const fft::StoreMultiply& m, auto factor) {
    d = fft::normalize(d);
    const long long mi = count(d, side(d, true)) * d.batch;
    std::vector<cld> x(mi);
    for (auto& v : x) v = cld(u(gen), d.kind == Kind::r2c ? 0.0 : u(gen));
    PlanDesc dm = d;
    dm.store_multiply = true;
    dm.store_spectral = m.spectral != fft::StoreMultiply::Spectral::none;
    const bool sp = d.precision == Precision::single;
    const auto plain = sp ? run<float>(d, dir, x, false) : run<double>(d, dir, x, false);
    const auto got = sp ? run<float>(dm, dir, x, false, &m) : run<double>(dm, dir, x, false, &m);
    const long long mo = count(d, side(d, false));
    std::vector<cld> want(plain.size());
    for (long long b = 0; b < d.batch; ++b)
      for (long long j = 0; j < mo; ++j)
        want[b * mo + j] = plain[b * mo + j] * static_cast<long double>(factor(offset(d, false, b, j)));
    EXPECT_LE(rel_err(got, want), sp ? 1e-6 : 1e-14) << fft::to_string(dm);
    if (dm.store_spectral) return;
    dm.store_scale = m.scale;  // the scale fixed by the plan (on GPUs: not loaded per store)
    const auto fixed = sp ? run<float>(dm, dir, x, false, &m) : run<double>(dm, dir, x, false, &m);
    EXPECT_LE(rel_err(fixed, want), sp ? 1e-6 : 1e-14) << fft::to_string(dm);
  };
  fft::StoreMultiply half;
  half.scale = 0.5;
  auto c = fft::make_desc(dev, Kind::c2c, Precision::double_, {9}, 4);
  c.istride = c.ostride = 4;
  c.idist = c.odist = 1;
  compare(c, Direction::backward, half, [](long long) { return 0.5; });
  compare(fft::make_desc(dev, Kind::c2r, Precision::single, {6, 7}, 2), Direction::backward, half,
          [](long long) { return 0.5; });
  compare(fft::make_desc(dev, Kind::c2c, Precision::single, {5, 4}, 1, true), Direction::forward, half,
          [](long long) { return 0.5; });
  // -|k|^2 on a 2-D r2c output [6][4] (n = 6x7) that is block rows 2..7 of a global 10x7 spectrum.
  auto lap = spectral_multiply(fft::StoreMultiply::Spectral::laplacian, 2, 2, {6, 4}, {10, 7}, {1.5, 0.5});
  lap.lo = {2, 0, 0, 0};
  lap.half = {false, true, false, false};
  compare(fft::make_desc(dev, Kind::r2c, Precision::double_, {6, 7}), Direction::forward, lap, [](long long o) {
    long long i = 2 + o / 4, j = o % 4;
    if (i >= 5) i -= 10;
    return -2 * ((1.5 * i) * (1.5 * i) + (0.5 * j) * (0.5 * j));
  });
  // -1/|k|^2 with 0 at k = 0, an offset into the block, and a leading axis without frequency.
  auto inv = spectral_multiply(fft::StoreMultiply::Spectral::inverse_laplacian, 1, 2, {3, 8}, {0, 8}, {0, 1});
  inv.offset = 8;
  compare(fft::make_desc(dev, Kind::c2c, Precision::double_, {8}, 2), Direction::forward, inv, [](long long o) {
    long long j = (8 + o) % 8;
    if (j >= 4) j -= 8;
    return j == 0 ? 0.0 : -1.0 / (j * j);
  });
  // A Poisson solve's forward: 3-D r2c batches [256][3][6] -> [256][3][4] times -s/|k|^2. On GPUs
  // the split plan's axis pass (its last store) multiplies: both precisions, in place and out.
  auto poisson = spectral_multiply(fft::StoreMultiply::Spectral::inverse_laplacian, 1.0 / (256 * 3 * 6), 4,
                                   {2, 256, 3, 4}, {0, 256, 3, 6}, {0, 1, 2, 0.5});
  poisson.half = {false, false, false, true};
  const auto poisson_factor = [&](long long o) {
    const double k0 = fftfreq(o / 12 % 256, 256), k1 = 2 * fftfreq(o / 4 % 3, 3), k2 = 0.5 * static_cast<double>(o % 4);
    const double k = k0 * k0 + k1 * k1 + k2 * k2;
    return k > 0 ? -poisson.scale / k : 0.0;
  };
  for (auto p : {Precision::single, Precision::double_})
    compare(fft::make_desc(dev, Kind::r2c, p, {256, 3, 6}, 2, p == Precision::single), Direction::forward, poisson,
            poisson_factor);
  // The slab FFT's last stage: 1-D down 20 adjacent columns (rows 20 apart), the pass alone on GPUs.
  const auto columns =
      spectral_multiply(fft::StoreMultiply::Spectral::inverse_laplacian, 0.25, 2, {256, 20}, {256, 0}, {1, 0});
  auto down = fft::make_desc(dev, Kind::c2c, Precision::single, {256}, 20);
  down.istride = down.ostride = 20;
  down.idist = down.odist = 1;
  for (auto dir : {Direction::forward, Direction::backward})
    compare(down, dir, columns, [](long long o) {
      const double k = fftfreq(o / 20, 256);
      return k == 0 ? 0.0 : -0.25 / (k * k);
    });
  // The same columns read as a [128][40] block (its rows no axis of the pass's): on GPUs the
  // factors then take a pass of their own.
  const auto folded =
      spectral_multiply(fft::StoreMultiply::Spectral::laplacian, 0.5, 2, {128, 40}, {128, 40}, {1, 0.5});
  compare(down, Direction::forward, folded, [](long long o) {
    const double ki = fftfreq(o / 40, 128), kj = fftfreq(o % 40, 40);
    return -0.5 * (ki * ki + 0.25 * kj * kj);
  });
  fft::StoreMultiply bad;
  bad.spectral = fft::StoreMultiply::Spectral::laplacian;  // dims 0: no positions to take k from
  auto plan = fft::get_plan([&] {
    auto d = fft::make_desc(dev, Kind::c2c, Precision::double_, {8});
    d.store_multiply = true;
    return d;
  }());
  Buffer a(8 * 16, dev), b(8 * 16, dev);
  EXPECT_THROW(plan->execute(a.data(), b.data(), Direction::forward, tessera::Stream::default_for(dev), bad),
               tessera::InvalidArgument);
  // A spectral factor on a plan made for scales only (store_spectral false) is refused too.
  fft::StoreMultiply lap1 = bad;
  lap1.dims = 1, lap1.block = {8, 0, 0, 0}, lap1.n = {8, 0, 0, 0}, lap1.k = {1, 0, 0, 0};
  EXPECT_THROW(plan->execute(a.data(), b.data(), Direction::forward, tessera::Stream::default_for(dev), lap1),
               tessera::InvalidArgument);
  auto plain = fft::get_plan(fft::make_desc(dev, Kind::c2c, Precision::double_, {8}));
  EXPECT_THROW(plain->execute(a.data(), b.data(), Direction::forward, tessera::Stream::default_for(dev), half),
               tessera::InvalidArgument);
  // A fixed scale: another scale at execution is refused, as is a fixed scale with spectral factors.
  auto fixed = fft::make_desc(dev, Kind::c2c, Precision::double_, {8});
  fixed.store_multiply = true;
  fixed.store_scale = 0.25;
  EXPECT_THROW(fft::get_plan(fixed)->execute(a.data(), b.data(), Direction::forward,
                                             tessera::Stream::default_for(dev), half),
               tessera::InvalidArgument);
  fixed.store_spectral = true;
  EXPECT_THROW(fft::get_plan(fixed), tessera::InvalidArgument);
}

// 3-D plans whose outermost length has Tessera's axis pass (256, 512, 1024) run split on GPUs
// (the pass, then a batched 2-D cuFFT) as TESSERA_FFT_AXIS_KERNEL says; every mode and tile, with
// and without TESSERA_FFT_HALVES, gives the DFT: c2c both ways, r2c and c2r (preserving,
// clobbering, in place), scaled and not, tails of columns.
TYPED_TEST(FftPlan, SplitAxisPlansMatchTheDft) {
  using Mode = tessera::Settings::FftAxisKernel;
  const Device dev = this->device();
  const tessera::Settings saved = tessera::settings();
  for (auto [mode, tile, halves] :
       {std::tuple{Mode::all, 64, false}, std::tuple{Mode::all, 128, false}, std::tuple{Mode::scaled, 128, false},
        std::tuple{Mode::off, 128, false}, std::tuple{Mode::all, 64, true}, std::tuple{Mode::all, 128, true}}) {
    tessera::Settings s = saved;
    s.fft_axis_kernel = mode;
    s.fft_axis_tile = tile;
    s.fft_halves = halves;
    if (dev.is_host() && (mode != Mode::all || halves)) continue;  // FFTW either way
    tessera::set_settings(s);
    fft::clear_plan_cache();  // plans pick their form when made
    for (auto dir : {Direction::forward, Direction::backward}) {
      check_both(fft::make_desc(dev, Kind::c2c, Precision::double_, {256, 2, 3}, 2), dir);
      check(fft::make_desc(dev, Kind::c2c, Precision::single, {512, 3, 1}, 1, true), dir, false, 0.25);
    }
    check(fft::make_desc(dev, Kind::c2c, Precision::double_, {256, 5, 3}), Direction::backward, true, 1.0 / 3840);
    check(fft::make_desc(dev, Kind::c2c, Precision::single, {1024, 1, 2}), Direction::backward, false, 0.5);
    for (auto p : {Precision::single, Precision::double_}) {
      check(fft::make_desc(dev, Kind::r2c, p, {256, 2, 4}, 2), Direction::forward);
      check(fft::make_desc(dev, Kind::r2c, p, {512, 3, 5}, 1, true), Direction::forward, false, 0.25);
      check(fft::make_desc(dev, Kind::r2c, p, {256, 1, 7}), Direction::forward, true, 1.0 / 1792);
      check(fft::make_desc(dev, Kind::c2r, p, {256, 2, 4}, 2), Direction::backward, false, 0.5);
      check(fft::make_desc(dev, Kind::c2r, p, {256, 3, 5}, 1, true), Direction::backward, false, 2.0);
      auto clobber = fft::make_desc(dev, Kind::c2r, p, {512, 1, 6});
      clobber.preserve_input = false;
      check(clobber, Direction::backward, true, 0.125);
      check(clobber, Direction::backward);
    }
    // 1-D down adjacent columns of rows `stride` apart (the slab FFT's axis-0 stage): all of them
    // or a chunk, in place and out, scaled and not.
    for (long long cols : {20LL, 13LL}) {
      for (auto [n, p] : {std::pair{256LL, Precision::double_}, std::pair{1024LL, Precision::single}}) {
        auto c = fft::make_desc(dev, Kind::c2c, p, {n}, cols, cols == 13);
        c.istride = c.ostride = 20;
        c.idist = c.odist = 1;
        check(c, Direction::forward);
        check(c, Direction::backward, false, 1.0 / n);
      }
    }
  }
  tessera::set_settings(saved);
  fft::clear_plan_cache();
}

// f(planes, tile, halves) under each setting of the plane kernel and the tile, the plane kernel's
// tiles with and without halves (TESSERA_FFT_HALVES).
template <class F>
void with_plane_settings(F&& f) {
  using Mode = tessera::Settings::FftPlaneKernel;
  const tessera::Settings saved = tessera::settings();
  for (auto [planes, tile, halves] : {std::tuple{true, 64, false}, std::tuple{true, 128, false},
                                      std::tuple{false, 128, false}, std::tuple{true, 64, true},
                                      std::tuple{true, 128, true}}) {
    tessera::Settings s = saved;
    s.fft_plane_kernel = planes ? Mode::on : Mode::off;
    s.fft_axis_tile = tile;
    s.fft_halves = halves;
    tessera::set_settings(s);
    fft::clear_plan_cache();  // plans pick their form when made
    f(planes, tile, halves);
  }
  tessera::set_settings(saved);
  fft::clear_plan_cache();
}

namespace {
// A spectral round trip (Plan::execute_round_trip) of the r2c plan `f` and the c2r plan `b` (3-D,
// packed spectrum) with -1/(N |k|^2) on box lengths {2 pi, pi, 4 pi} and the backward's stores times
// `scale`: against the DFT of the input, times those factors on the whole spectrum, and the DFT
// back, in long double. Gaps of the input and output layouts are NaN.
template <class R>
void check_round_trip(PlanDesc f, PlanDesc b, double scale = 1.0) {
  f.store_multiply = f.store_spectral = true;
  if (scale != 1.0) b.store_multiply = true;
  const auto fwd = fft::get_plan(f), bwd = fft::get_plan(b);
  f = fwd->desc(), b = bwd->desc();
  const Device dev = f.device;
  const long long N = count(f, f.n), h = f.n[2] / 2 + 1;
  const std::array<double, 3> k{1, 2, 0.5};
  fft::StoreMultiply m;
  m.spectral = fft::StoreMultiply::Spectral::inverse_laplacian;
  m.scale = 1.0 / static_cast<double>(N);
  m.dims = 4;
  m.block = {f.batch, f.n[0], f.n[1], h}, m.n = {0, f.n[0], f.n[1], f.n[2]}, m.k = {0, k[0], k[1], k[2]};
  m.half = {false, false, false, true};
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<cld> x(f.batch * N);
  for (auto& v : x) v = cld(u(gen), 0.0);
  std::vector<cld> spectrum = dft(x, f, -1);
  for (long long i = 0; i < f.batch * N; ++i) {
    long double k2 = 0;
    for (long long a = 2, rest = i; a >= 0; rest /= f.n[a], --a) {
      const long double w = k[a] * fftfreq(rest % f.n[a], f.n[a]);
      k2 += w * w;
    }
    spectrum[i] *= k2 > 0 ? -m.scale / k2 : 0.0L;
  }
  std::vector<cld> want = dft(spectrum, f, 1);
  for (auto& v : want) v = cld(v.real() * scale, 0);
  std::vector<R> in(fft::input_elements(f), std::numeric_limits<R>::quiet_NaN());
  for (long long bt = 0; bt < f.batch; ++bt)
    for (long long j = 0; j < N; ++j) in[offset(f, true, bt, j)] = static_cast<R>(x[bt * N + j].real());
  const std::size_t sb = std::max(fft::output_bytes(f), b.in_place ? fft::output_bytes(b) : 0);
  Buffer bin(fft::input_bytes(f), dev), spec(sb, dev), bout(b.in_place ? 0 : fft::output_bytes(b), dev);
  upload(bin.data(), dev, in);
  upload(spec.data(), dev, std::vector<R>(sb / sizeof(R), std::numeric_limits<R>::quiet_NaN()));
  void* out = b.in_place ? spec.data() : bout.data();
  fwd->execute_round_trip(*bwd, bin.data(), spec.data(), out, tessera::Stream::default_for(dev), m, scale);
  const auto res = download<R>(out, dev, fft::output_elements(b));
  std::vector<cld> got(f.batch * N);
  for (long long bt = 0; bt < f.batch; ++bt)
    for (long long j = 0; j < N; ++j) got[bt * N + j] = cld(res[offset(b, false, bt, j)], 0);
  EXPECT_LE(rel_err(got, want), sizeof(R) == 4 ? 2e-6 : 1e-13) << fft::to_string(f) << " then " << fft::to_string(b);
}

// The pairs of check_round_trip for one shape: the backward out of place (keeping the spectrum or
// not, scaled or not) and in place in the spectrum.
template <class R>
void check_round_trips(Device dev, std::initializer_list<long long> n, long long batch) {
  const Precision p = fft::precision_of<R>();
  const auto f = fft::make_desc(dev, Kind::r2c, p, n, batch);
  check_round_trip<R>(f, fft::make_desc(dev, Kind::c2r, p, n, batch));
  auto clobber = fft::make_desc(dev, Kind::c2r, p, n, batch);
  clobber.preserve_input = false;
  check_round_trip<R>(f, clobber, 0.5);
  check_round_trip<R>(f, fft::make_desc(dev, Kind::c2r, p, n, batch, true), 2.0);
}
}  // namespace

// A Poisson solve's round trip: on GPUs, split plans whose spectrum's rows are an axis of the
// multiply's block take the forward's axis pass, the factors and the backward's axis pass in one
// kernel (both tiles, with and without halves), others run the two plans; FFTW runs both. Pairs
// that do not match are refused.
TYPED_TEST(FftPlan, SpectralRoundTripsMatchTheDft) {
  const Device dev = this->device();
  with_plane_settings([&](bool planes, int tile, bool halves) {
    if (dev.is_host() && (!planes || tile != 128 || halves)) return;  // FFTW either way
    check_round_trips<double>(dev, {256, 3, 6}, 2);
    check_round_trips<float>(dev, {512, 2, 5}, 1);
    check_round_trips<float>(dev, {1024, 1, 4}, 1);
    check_round_trips<double>(dev, {6, 5, 4}, 1);  // no axis pass: the two plans
  });
  const auto r2c = fft::make_desc(dev, Kind::r2c, Precision::double_, {256, 3, 6});
  auto spectral = r2c;
  spectral.store_multiply = spectral.store_spectral = true;
  const auto fwd = fft::get_plan(spectral);
  fft::StoreMultiply m;
  m.spectral = fft::StoreMultiply::Spectral::laplacian;
  m.dims = 3, m.block = {256, 3, 4}, m.n = {256, 3, 6}, m.k = {1, 1, 1};
  Buffer a(fft::input_bytes(r2c), dev), s(fft::output_bytes(r2c), dev), o(fft::input_bytes(r2c), dev);
  const auto& stream = tessera::Stream::default_for(dev);
  const auto refused = [&](const PlanDesc& b, double scale = 1.0) {
    EXPECT_THROW(fwd->execute_round_trip(*fft::get_plan(b), a.data(), s.data(), o.data(), stream, m, scale),
                 tessera::InvalidArgument)
        << fft::to_string(b);
  };
  refused(fft::make_desc(dev, Kind::c2c, Precision::double_, {256, 3, 6}));     // not a c2r
  refused(fft::make_desc(dev, Kind::c2r, Precision::single, {256, 3, 6}));      // another precision
  refused(fft::make_desc(dev, Kind::c2r, Precision::double_, {256, 3, 6}, 2));  // another batch
  refused(fft::make_desc(dev, Kind::c2r, Precision::double_, {256, 3, 6}), 0.5);  // a scale, no store_multiply
  EXPECT_THROW(fft::get_plan(r2c)->execute_round_trip(*fft::get_plan(fft::make_desc(dev, Kind::c2r, Precision::double_,
                                                                                    {256, 3, 6})),
                                                      a.data(), s.data(), o.data(), stream, m),
               tessera::InvalidArgument);  // a forward plan without store_multiply
}

// c2c, r2c and c2r plans over square planes of 256, 512 or 1024 (packed 2-D plans, the 2-D pass of
// split 3-D plans) run on GPUs on Tessera's one-kernel 2-D FFT (TESSERA_FFT_PLANE_KERNEL) or a
// batched 2-D cuFFT: both give the DFT in both precisions, both directions, in place and out,
// scaled and not, with either tile. (The host runs FFTW either way: GPU only.)
TYPED_TEST(FftPlan, PlaneKernelPlansMatchTheDft) {
  const Device dev = this->device();
  if (dev.is_host()) GTEST_SKIP() << "FFTW plans have no plane kernel";
  with_plane_settings([&](bool, int, bool) {
    for (auto dir : {Direction::forward, Direction::backward}) {
      check_both(fft::make_desc(dev, Kind::c2c, Precision::double_, {256, 256}, 3), dir);
      check(fft::make_desc(dev, Kind::c2c, Precision::single, {512, 512}, 2, true), dir, true, 0.25);
    }
    // r2c and c2r planes (the plane kernel only with TESSERA_FFT_PLANE_KERNEL=on, and for c2r only
    // where the plan may overwrite its input), in place and out, scaled.
    check_both(fft::make_desc(dev, Kind::r2c, Precision::double_, {256, 256}, 3), Direction::forward);
    check(fft::make_desc(dev, Kind::r2c, Precision::single, {512, 512}, 2, true), Direction::forward, true, 0.25);
    check(fft::make_desc(dev, Kind::r2c, Precision::double_, {512, 512}), Direction::forward, false, 2.0);
    auto clobber = fft::make_desc(dev, Kind::c2r, Precision::double_, {256, 256}, 3);
    clobber.preserve_input = false;
    check_both(clobber, Direction::backward);
    check(fft::make_desc(dev, Kind::c2r, Precision::single, {512, 512}, 2, true), Direction::backward, true, 0.25);
    check(fft::make_desc(dev, Kind::c2r, Precision::double_, {512, 512}), Direction::backward);  // kept: cuFFT
  });
}

TYPED_TEST(FftPlan, PlaneKernelLargePlanesAndSplitPlansMatchTheDft) {
  const Device dev = this->device();
  if (dev.is_host()) GTEST_SKIP() << "FFTW plans have no plane kernel";
  with_plane_settings([&](bool planes, int tile, bool halves) {
    check(fft::make_desc(dev, Kind::c2c, Precision::double_, {1024, 1024}, 1, true), Direction::forward);
    check(fft::make_desc(dev, Kind::c2c, Precision::single, {1024, 1024}, 2), Direction::backward, false, 0.5);
    check(fft::make_desc(dev, Kind::r2c, Precision::single, {1024, 1024}, 1, true), Direction::forward);
    // Split 3-D: the axis pass (with the scale), then the planes (without them: SplitAxisPlansMatchTheDft).
    // Its reference is most of this test's time: one tile (planes of 256 have no halves).
    if (!planes || tile != 128 || halves) return;
    check(fft::make_desc(dev, Kind::c2c, Precision::double_, {256, 256, 256}), Direction::forward, true);
    check(fft::make_desc(dev, Kind::c2c, Precision::single, {256, 256, 256}, 1, true), Direction::backward, false,
          1.0 / 256);
    check(fft::make_desc(dev, Kind::r2c, Precision::double_, {256, 256, 256}, 1, true), Direction::forward, false,
          0.5);
    check(fft::make_desc(dev, Kind::c2r, Precision::single, {256, 256, 256}), Direction::backward, false, 1.0 / 256);
    // A spectral round trip whose 2-D passes are the plane kernel's.
    check_round_trip<float>(fft::make_desc(dev, Kind::r2c, Precision::single, {256, 256, 256}),
                            fft::make_desc(dev, Kind::c2r, Precision::single, {256, 256, 256}), 0.5);
  });
}

TYPED_TEST(FftPlan, InPlaceRealTransformsRoundTrip) {
  const Device dev = this->device();
  const auto fwd = fft::get_plan(fft::make_desc(dev, Kind::r2c, Precision::double_, {6, 5, 7}, 2, true));
  const auto bwd = fft::get_plan(fft::make_desc(dev, Kind::c2r, Precision::double_, {6, 5, 7}, 2, true));
  // Real rows are padded to 2*(7/2+1) = 8 so that the 4 complex results fit over them.
  EXPECT_EQ(fwd->desc().inembed, (std::array<long long, 3>{6, 5, 8}));
  EXPECT_EQ(fwd->desc().onembed, (std::array<long long, 3>{6, 5, 4}));
  EXPECT_EQ(fwd->desc().idist, 240);
  EXPECT_EQ(fwd->desc().odist, 120);
  EXPECT_EQ(bwd->desc().onembed, fwd->desc().inembed);
  const std::size_t bytes = std::max(fft::input_bytes(fwd->desc()), fft::output_bytes(fwd->desc()));
  std::vector<double> x(bytes / sizeof(double), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 8 < 7 ? std::sin(0.37 * i) : 0.0;
  Buffer buf(bytes, dev);
  upload(buf.data(), dev, x);
  fwd->execute(buf.data(), buf.data(), Direction::forward);
  bwd->execute(buf.data(), buf.data(), Direction::backward);
  const auto y = download<double>(buf.data(), dev, x.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (i % 8 < 7) worst = std::max(worst, std::abs(y[i] / 210 - x[i]));
  EXPECT_LE(worst, 1e-13);
  // Both in-place kinds against the direct DFT, in both precisions.
  check_both(fft::make_desc(dev, Kind::r2c, Precision::double_, {6, 5, 7}, 2, true), Direction::forward);
  check_both(fft::make_desc(dev, Kind::c2r, Precision::double_, {5, 6}, 3, true), Direction::backward);
  check_both(fft::make_desc(dev, Kind::c2c, Precision::double_, {4, 3, 5}, 2, true), Direction::forward);
}

TYPED_TEST(FftPlan, CacheSharesOnePlanPerDescriptor) {
  const Device dev = this->device();
  fft::clear_plan_cache();
  const auto d = fft::make_desc(dev, Kind::c2c, Precision::double_, {6, 5});
  const auto p = fft::get_plan(d);
  EXPECT_EQ(fft::get_plan(d).get(), p.get());
  auto spelled = d;  // the defaults written out: the same plan
  spelled.inembed = spelled.onembed = {6, 5, 0};
  spelled.istride = spelled.ostride = 1;
  spelled.idist = spelled.odist = 30;
  EXPECT_EQ(fft::get_plan(spelled).get(), p.get());
  EXPECT_EQ(fft::normalize(spelled), p->desc());
  EXPECT_EQ(std::hash<PlanDesc>{}(fft::normalize(d)), std::hash<PlanDesc>{}(p->desc()));
  EXPECT_EQ(fft::plan_cache_size(), 1u);
  auto batched = d, single = d, real = d, in_place = d, strided = d;
  batched.batch = 2;
  single.precision = Precision::single;
  real.kind = Kind::r2c;
  in_place.in_place = true;
  strided.istride = 2;
  for (const auto& other : {batched, single, real, in_place, strided})
    EXPECT_NE(fft::get_plan(other).get(), p.get()) << fft::to_string(other);
  EXPECT_EQ(fft::plan_cache_size(), 6u);
  fft::clear_plan_cache();
  EXPECT_EQ(fft::plan_cache_size(), 0u);
  EXPECT_NE(fft::get_plan(d).get(), p.get());  // a fresh plan; the old one stays usable
  Buffer in(30 * sizeof(tessera::complex128), dev), out(30 * sizeof(tessera::complex128), dev);
  EXPECT_NO_THROW(p->execute(in.data(), out.data(), Direction::forward));
}

TYPED_TEST(FftPlan, RejectsBadDescriptorsAndCalls) {
  const Device dev = this->device();
  const auto expect_invalid = [](auto&& call, const std::string& text) {
    try {
      call();
      ADD_FAILURE() << "no exception; expected '" << text << "'";
    } catch (const tessera::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  const auto plan = [&](std::initializer_list<long long> n, auto&& edit) {
    auto d = fft::make_desc(dev, Kind::c2c, Precision::double_, n);
    edit(d);
    return [d] { fft::get_plan(d); };
  };
  expect_invalid(plan({4, 0}, [](PlanDesc&) {}), "fft plan: n[1]=0 must be > 0");
  expect_invalid(plan({4, 4}, [](PlanDesc& d) { d.rank = 4; }), "rank=4 must be 1, 2 or 3");
  expect_invalid([&] { fft::make_desc(dev, Kind::c2c, Precision::double_, {2, 2, 2, 2}); }, "rank=4");
  expect_invalid(plan({8}, [](PlanDesc& d) { d.batch = 0; }), "batch=0 must be > 0");
  expect_invalid(plan({8}, [](PlanDesc& d) { d.istride = -1; }), "istride=-1");
  expect_invalid(plan({4, 5}, [](PlanDesc& d) { d.inembed = {4, 3, 0}; }),
                 "inembed[1]=3 is smaller than the data's extent 5");
  expect_invalid(plan({6}, [](PlanDesc& d) { d.kind = Kind::r2c, d.in_place = true, d.inembed = {6, 0, 0}; }),
                 "must be padded to 2*(n/2+1)=8");

  Buffer a(1024, dev), b(1024, dev);
  const auto r2c = fft::get_plan(fft::make_desc(dev, Kind::r2c, Precision::double_, {8}));
  const auto c2r = fft::get_plan(fft::make_desc(dev, Kind::c2r, Precision::double_, {8}));
  expect_invalid([&] { r2c->execute(a.data(), b.data(), Direction::backward); }, "r2c runs only forward, not backward");
  expect_invalid([&] { c2r->execute(a.data(), b.data(), Direction::forward); }, "c2r runs only backward");
  expect_invalid([&] { r2c->execute(a.data(), a.data(), Direction::forward); }, "out-of-place but in == out");
  expect_invalid([&] { r2c->execute(nullptr, b.data(), Direction::forward); }, "null input pointer");
}

TEST(FftPlanDevices, CudaPlansNeedTheCudaBackendAndADevice) {
  const auto on = [](Device dev) { return fft::make_desc(dev, Kind::c2c, Precision::double_, {8}); };
  const Device missing = Device::cuda(tessera::cuda_device_count() + 5);
  if (!TESSERA_HAVE_CUDA) {
    EXPECT_THROW(fft::get_plan(on(Device::cuda(0))), tessera::BackendUnavailable);
    EXPECT_THROW(fft::get_plan(on(missing)), tessera::BackendUnavailable);
  } else {
    EXPECT_THROW(fft::get_plan(on(missing)), tessera::InvalidArgument);
  }
}
