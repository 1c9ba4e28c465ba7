// Reductions against serial loops, whole-array and along axes, on host and GPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <utility>
#include <vector>

#include "device_test.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/reduce.hpp"

namespace tl = tessera::local;
using tessera::Device;

template <class K> class ReduceTest : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(ReduceTest, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

namespace {
std::vector<double> sample(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * i) * 10 + (i % 7);
  return v;
}
}  // namespace

TYPED_TEST(ReduceTest, WholeArrayMatchesSerialLoops) {
  const Device d = this->device();
  for (std::size_t n : {1ul, 17ul, 1000ul, 100003ul}) {
    const auto h = sample(n);
    auto a = tl::from_host(h, tl::Shape<1>{static_cast<tl::index_t>(n)}, d);
    double s = 0, ss = 0, mn = h[0], mx = h[0];
    std::int64_t imn = 0, imx = 0;
    for (std::size_t i = 0; i < n; ++i) {
      s += h[i];
      ss += h[i] * h[i];
      if (h[i] < mn) mn = h[i], imn = i;
      if (h[i] > mx) mx = h[i], imx = i;
    }
    EXPECT_NEAR(tl::sum(a), s, 1e-9 * (1 + std::abs(s)) * std::sqrt(double(n))) << n;
    EXPECT_NEAR(tl::mean(a), s / n, 1e-9 * (1 + std::abs(s)));
    EXPECT_NEAR(tl::norm2(a), std::sqrt(ss), 1e-9 * std::sqrt(ss));
    EXPECT_EQ(tl::min(a), mn);
    EXPECT_EQ(tl::max(a), mx);
    EXPECT_EQ(tl::argmin(a), imn);
    EXPECT_EQ(tl::argmax(a), imx);
    EXPECT_NEAR(tl::dot(a, a), ss, 1e-9 * ss);
    auto f = tl::astype<float>(a);
    EXPECT_NEAR(tl::sum(f), s, 1e-4 * (std::abs(s) + n));
    auto ints = tl::astype<std::int32_t>(a);
    std::int64_t si = 0;
    for (double x : h) si += static_cast<std::int32_t>(x);
    EXPECT_EQ(tl::sum(ints), si);
  }
}

TYPED_TEST(ReduceTest, LogicalProductsAndComplex) {
  const Device d = this->device();
  auto b = tl::from_host(std::vector<bool>{false, true, false}, tl::Shape<1>{3}, d);
  EXPECT_TRUE(tl::any(b));
  EXPECT_FALSE(tl::all(b));
  EXPECT_EQ(tl::sum(b), 1);  // bool sums count, in int64
  EXPECT_FALSE(tl::any(tl::zeros<float, 2>({4, 4}, d)));
  EXPECT_TRUE(tl::all(tl::ones<std::int64_t, 1>({9}, d)));
  EXPECT_EQ(tl::prod(tl::full<std::int64_t, 1>({10}, 3, d)), 59049);
  auto c = tl::full<tessera::complex64, 1>({4}, {1.f, -1.f}, d);
  EXPECT_EQ(tl::sum(c), (tessera::complex64{4.f, -4.f}));
  EXPECT_FLOAT_EQ(tl::norm2(c), std::sqrt(8.f));
  EXPECT_THROW(tl::min(tl::empty<float, 1>({0}, d)), tessera::InvalidArgument);
  EXPECT_EQ(tl::sum(tl::empty<float, 1>({0}, d)), 0.f);
}

TYPED_TEST(ReduceTest, AlongEachAxisAndOfViews) {
  const Device d = this->device();
  const tl::Shape<3> shape{3, 4, 5};
  const auto h = sample(60);
  auto a = tl::from_host(h, shape, d);
  for (int axis = 0; axis < 3; ++axis) {
    auto s = tl::sum(a, axis);
    auto k = tl::max(a, axis, tl::keepdims);
    auto am = tl::argmin(a, axis);
    EXPECT_EQ(k.shape()[axis], 1);
    const auto hs = tl::to_host(s), hk = tl::to_host(k);
    const auto ham = tl::to_host(am);
    std::size_t o = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 5; ++l) {
          const int idx[3] = {i, j, l};
          if (idx[axis] != 0) continue;
          double acc = 0, mx = -1e300, mn = 1e300;
          std::int64_t arg = 0;
          for (int t = 0; t < shape[axis]; ++t) {
            int q[3] = {i, j, l};
            q[axis] = t;
            const double v = h[(q[0] * 4 + q[1]) * 5 + q[2]];
            acc += v;
            mx = std::max(mx, v);
            if (v < mn) mn = v, arg = t;
          }
          EXPECT_NEAR(hs[o], acc, 1e-12 * (1 + std::abs(acc)));
          EXPECT_EQ(hk[o], mx);
          EXPECT_EQ(ham[o], arg);
          ++o;
        }
  }
  // A strided view: every other column of the transpose.
  auto v = a.permute({2, 0, 1}).slice(0, 0, 5, 2);
  double want = 0;
  for (int l = 0; l < 5; l += 2)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) want += h[(i * 4 + j) * 5 + l];
  EXPECT_NEAR(tl::sum(v), want, 1e-12 * std::abs(want) + 1e-12);
  EXPECT_THROW(tl::sum(a, 3), tessera::InvalidArgument);
}

// Shapes that take every axis kernel on GPUs: a warp per output (contiguous axis of 70), the axis
// cut into segments (300 long, 490 outputs), one thread per output (axis of 7); values with many
// ties, so argmin/argmax must return the first occurrence, as numpy does.
TYPED_TEST(ReduceTest, AlongAxesOfLargerArraysWithTies) {
  const Device d = this->device();
  const int n0 = 7, n1 = 300, n2 = 70;
  std::vector<double> h(static_cast<std::size_t>(n0) * n1 * n2);
  for (int i = 0; i < n0; ++i)
    for (int j = 0; j < n1; ++j)
      for (int k = 0; k < n2; ++k) h[(static_cast<std::size_t>(i) * n1 + j) * n2 + k] = (i * 31 + j * 17 + k * 7) % 13;
  auto a = tl::from_host(h, tl::Shape<3>{n0, n1, n2}, d);
  const int n[3] = {n0, n1, n2};
  auto check = [&](const tl::Array<double, 3>& x, const int* ext, auto at, const char* what) {
    for (int axis = 0; axis < 3; ++axis) {
      const auto hs = tl::to_host(tl::sum(x, axis));
      const auto hmin = tl::to_host(tl::argmin(x, axis)), hmax = tl::to_host(tl::argmax(x, axis));
      std::size_t o = 0, bad = 0;
      for (int i = 0; i < (axis == 0 ? 1 : ext[0]); ++i)
        for (int j = 0; j < (axis == 1 ? 1 : ext[1]); ++j)
          for (int k = 0; k < (axis == 2 ? 1 : ext[2]); ++k, ++o) {
            double acc = 0, mn = 1e300, mx = -1e300;
            std::int64_t amin = 0, amax = 0;
            for (int t = 0; t < ext[axis]; ++t) {
              int q[3] = {i, j, k};
              q[axis] = t;
              const double v = at(q);
              acc += v;
              if (v < mn) mn = v, amin = t;
              if (v > mx) mx = v, amax = t;
            }
            bad += hs[o] != acc || hmin[o] != amin || hmax[o] != amax;
          }
      EXPECT_EQ(bad, 0u) << what << ", axis " << axis;
    }
  };
  check(a, n, [&](const int* q) { return h[(static_cast<std::size_t>(q[0]) * n1 + q[1]) * n2 + q[2]]; }, "contiguous");
  // The transpose (2, 1, 0): no axis contiguous except the last, which is the original axis 0.
  const int m[3] = {n2, n1, n0};
  check(a.permute({2, 1, 0}), m,
        [&](const int* q) { return h[(static_cast<std::size_t>(q[2]) * n1 + q[1]) * n2 + q[0]]; }, "transposed");
}

// The 16-byte-load axis kernels (GPU) and their fallbacks, in float (4 per load), float64 (2) and
// complex64 (2): rows whose length V divides or not (a scalar tail), rows long enough for four
// loads per lane and rows of 128 KiB and more (a block per row: f64, c64), outputs whose
// unit-stride extent V divides or not, and a view one element in (not 16-byte aligned), against
// serial sums (small integers, so every order of summation is exact).
template <class T>
void check_axis_sums(Device d) {
  for (const auto& ext : {std::array<int, 3>{3, 130, 72}, std::array<int, 3>{3, 130, 70}, std::array<int, 3>{2, 40, 1032},
                         std::array<int, 3>{2, 3, 16400}}) {
    const int n0 = ext[0], n1 = ext[1], n2 = ext[2];
    std::vector<T> h(static_cast<std::size_t>(n0) * n1 * n2);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<T>(static_cast<double>((i * 7) % 11) - 5);
    const auto a = tl::from_host(h, tl::Shape<3>{n0, n1, n2}, d);
    // The whole array, the view from column 1 (misaligned), the view without the last column
    // (aligned rows with a scalar tail).
    for (const auto& [first, m2] : {std::pair{0, n2}, std::pair{1, n2 - 1}, std::pair{0, n2 - 1}}) {
      const auto v = a.slice(2, first, first + m2);
      for (int axis = 0; axis < 3; ++axis) {
        const auto hs = tl::to_host(tl::sum(v, axis));
        std::size_t o = 0, bad = 0;
        for (int i = 0; i < (axis == 0 ? 1 : n0); ++i)
          for (int j = 0; j < (axis == 1 ? 1 : n1); ++j)
            for (int k = 0; k < (axis == 2 ? 1 : m2); ++k, ++o) {
              T acc = T(0);
              const int len = axis == 0 ? n0 : axis == 1 ? n1 : m2;
              for (int t = 0; t < len; ++t) {
                int q[3] = {i, j, k};
                q[axis] = t;
                acc += h[(static_cast<std::size_t>(q[0]) * n1 + q[1]) * n2 + q[2] + first];
              }
              bad += !(hs[o] == acc);
            }
        EXPECT_EQ(bad, 0u) << n0 << "x" << n1 << "x" << n2 << ", " << m2 << " columns from " << first << ", axis " << axis;
      }
    }
  }
}

TYPED_TEST(ReduceTest, VectorisedAxisSumsAndTheirFallbacks) {
  check_axis_sums<float>(this->device());
  check_axis_sums<double>(this->device());
  check_axis_sums<tessera::complex64>(this->device());
}

TYPED_TEST(ReduceTest, DeviceResultStaysOnDevice) {
  const Device d = this->device();
  auto a = tl::full<float, 1>({1 << 16}, 0.5f, d);
  auto r = tl::sum(a, tl::on_device);
  EXPECT_EQ(r.device(), d);
  EXPECT_EQ(r.size(), 1);
  EXPECT_EQ(tl::to_host(r)[0], 32768.f);
}

// Grids of many blocks (more partials than a block has threads), a scalar tail, calls of
// different sizes one after another and a nested context: the GPU's one-launch reduction combines
// the partials in its last block and leaves its counter ready for the next call.
TYPED_TEST(ReduceTest, ManyBlocksRepeatedCallsAndContexts) {
  const Device d = this->device();
  const tl::index_t n = (3 << 20) + 5;
  std::vector<double> h(static_cast<std::size_t>(n));
  double expect = 0;
  for (std::size_t i = 0; i < h.size(); ++i) expect += h[i] = static_cast<double>((i * 7) % 13);
  h[1234567] = 99;  // the first maximum
  expect += 99 - static_cast<double>((1234567 * 7) % 13);
  const auto big = tl::from_host(h, tl::Shape<1>{n}, d);
  const auto small = tl::full<double, 1>({100}, 0.5, d);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(tl::sum(big), expect);
    EXPECT_EQ(tl::sum(small), 50.0);
    EXPECT_EQ(tl::to_host(tl::sum(big, tl::on_device))[0], expect);
    EXPECT_EQ(tl::max(big), 99.0);
    EXPECT_EQ(tl::argmax(big), 1234567);
  }
  {
    tessera::Context inner;
    EXPECT_EQ(tl::sum(big), expect);
    EXPECT_EQ(tl::sum(small), 50.0);
  }
  EXPECT_EQ(tl::sum(big), expect);
}
