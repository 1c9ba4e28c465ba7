// local::Array: views, copies between devices, creation and the precompiled operations, each
// checked against a plain serial loop on host data. Compiled by the C++ compiler (no nvcc).
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "device_test.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/reduce.hpp"

namespace tl = tessera::local;
using tessera::Device;

template <class K> class ArrayTest : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(ArrayTest, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(ArrayTest, CreationMatchesNumpy) {
  const Device d = this->device();
  EXPECT_EQ(tl::to_host(tl::arange<std::int64_t>(5, d)), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(tl::to_host(tl::arange<double>(1.0, 2.0, 0.25, d)), (std::vector<double>{1.0, 1.25, 1.5, 1.75}));
  EXPECT_EQ(tl::to_host(tl::linspace<double>(0.0, 1.0, 5, d)), (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0}));
  EXPECT_EQ(tl::to_host(tl::zeros<float, 2>({2, 3}, d)), std::vector<float>(6, 0.f));
  EXPECT_EQ(tl::to_host(tl::ones<std::int32_t, 1>({4}, d)), std::vector<std::int32_t>(4, 1));
  const tessera::complex64 c{1.5f, -2.f};
  EXPECT_EQ(tl::to_host(tl::full<tessera::complex64, 3>({2, 1, 2}, c, d)), std::vector<tessera::complex64>(4, c));
  EXPECT_EQ(tl::to_host(tl::full<bool, 1>({3}, true, d)), std::vector<bool>(3, true));
  auto e = tl::empty<double, 2>({0, 4}, d);
  EXPECT_EQ(e.size(), 0);
  EXPECT_TRUE(tl::to_host(e).empty());
}

TYPED_TEST(ArrayTest, ViewsSliceTransposeReshape) {
  const Device d = this->device();
  std::vector<double> h(4 * 5);
  for (int i = 0; i < 20; ++i) h[i] = i;
  auto a = tl::from_host(h, tl::Shape<2>{4, 5}, d);
  auto s = a.slice(1, 1, 5, 2);  // columns 1, 3
  EXPECT_EQ(s.shape(), (tl::Shape<2>{4, 2}));
  EXPECT_FALSE(s.is_contiguous());
  std::vector<double> want;
  for (int r = 0; r < 4; ++r) for (int c = 1; c < 5; c += 2) want.push_back(h[r * 5 + c]);
  EXPECT_EQ(tl::to_host(s), want);
  auto t = a.transpose();
  EXPECT_EQ(t.shape(), (tl::Shape<2>{5, 4}));
  std::vector<double> wt;
  for (int c = 0; c < 5; ++c) for (int r = 0; r < 4; ++r) wt.push_back(h[r * 5 + c]);
  EXPECT_EQ(tl::to_host(t), wt);
  EXPECT_EQ(tl::to_host(a.template reshape<3>(tl::Shape<3>{2, 2, 5})), h);
  EXPECT_THROW(t.template reshape<1>(tl::Shape<1>{20}), tessera::InvalidArgument);
  EXPECT_THROW(a.template reshape<1>(tl::Shape<1>{21}), tessera::ShapeMismatch);
  EXPECT_THROW(a.slice(0, 2, 9), tessera::InvalidArgument);
  EXPECT_THROW(a.slice(2, 0, 1), tessera::InvalidArgument);
  EXPECT_THROW(a.permute(std::array<int, 2>{0, 0}), tessera::InvalidArgument);
  EXPECT_THROW((tl::Array<float, 2>({-1, 2}, d)), tessera::InvalidArgument);
}

TYPED_TEST(ArrayTest, CopyBetweenDevicesAndStrides) {
  const Device d = this->device();
  std::vector<float> h(6 * 7);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = 0.5f * i;
  auto a = tl::from_host(h, tl::Shape<2>{6, 7}, d);
  auto on_host = a.to(Device::host());
  EXPECT_EQ(tl::to_host(on_host), h);
  auto back = on_host.to(d);
  EXPECT_EQ(back.device(), d);
  EXPECT_EQ(tl::to_host(back), h);
  // Strided destination on another device: a transposed view is filled from a host array.
  auto dst = tl::zeros<float, 2>({7, 6}, d);
  tl::copy(dst.transpose(), on_host);
  EXPECT_EQ(tl::to_host(dst.transpose()), h);
  EXPECT_THROW(tl::copy(dst, a), tessera::ShapeMismatch);
  // A non-owning view of the caller's memory sees the caller's writes (no copy was made).
  std::vector<float> mine(4, 1.f);
  auto v = tl::Array<float, 1>::view(mine.data(), {4}, Device::host());
  mine[2] = 7.f;
  EXPECT_EQ(tl::to_host(v)[2], 7.f);
  EXPECT_FALSE(v.owns_memory());
}

TYPED_TEST(ArrayTest, PrecompiledOpsForAllTypes) {
  const Device d = this->device();
  auto check = [&]<class T>(T x, T y) {
    auto a = tl::full<T, 2>({3, 4}, x, d), b = tl::full<T, 2>({3, 4}, y, d), o = tl::empty<T, 2>({3, 4}, d);
    tl::add(o, a, b);
    EXPECT_EQ(tl::to_host(o)[5], static_cast<T>(x + y));
    tl::mul(o, a, b);
    EXPECT_EQ(tl::to_host(o)[11], static_cast<T>(x * y));
    tl::sub(o, a, b);
    EXPECT_EQ(tl::to_host(o)[0], static_cast<T>(x - y));
    if constexpr (!std::is_same_v<T, bool>) {
      tl::div(o, a, b);
      EXPECT_EQ(tl::to_host(o)[3], static_cast<T>(x / y));
      tl::copy(o, b);
      tl::axpy(o, T(2), a);
      EXPECT_EQ(tl::to_host(o)[7], static_cast<T>(T(2) * x + y));
    }
    EXPECT_EQ(tl::to_host(tl::astype<double>(a))[1], static_cast<double>(x));
  };
  check(std::int32_t{7}, std::int32_t{3});
  check(std::int64_t{-9}, std::int64_t{4});
  check(2.5f, 0.5f);
  check(2.5, -4.0);
  check(true, false);
  auto c = tl::full<tessera::complex128, 1>({5}, {1.0, 2.0}, d);
  auto o = tl::empty<tessera::complex128, 1>({5}, d);
  tl::mul(o, c, c);
  EXPECT_EQ(tl::to_host(o)[4], (tessera::complex128{1.0, 2.0} * tessera::complex128{1.0, 2.0}));
  auto re = tl::astype<double>(c);  // complex -> real keeps the real part
  EXPECT_EQ(tl::to_host(re)[0], 1.0);
  // Broadcasting a size-1 row across a matrix.
  auto row = tl::from_host(std::vector<double>{1, 2, 3}, tl::Shape<2>{1, 3}, d);
  auto m = tl::full<double, 2>({2, 3}, 10.0, d), out = tl::empty<double, 2>({2, 3}, d);
  tl::add(out, m, row);
  EXPECT_EQ(tl::to_host(out), (std::vector<double>{11, 12, 13, 11, 12, 13}));
  auto bad = tl::empty<double, 2>({2, 4}, d);
  EXPECT_THROW(tl::add(out, m, bad), tessera::ShapeMismatch);
}

TYPED_TEST(ArrayTest, MixedDevicesAreRejected) {
  const Device d = this->device();
  if (d.is_host()) GTEST_SKIP() << "needs a second kind of device";
  auto a = tl::ones<float, 1>({8}, d), h = tl::ones<float, 1>({8}, Device::host());
  try {
    tl::add(a, a, h);
    FAIL() << "no exception";
  } catch (const tessera::DeviceMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("host"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(d.str()), std::string::npos) << e.what();
  }
}

TYPED_TEST(ArrayTest, MemoryStatsTrackAllocations) {
  const Device d = this->device();
  const auto before = tessera::memory_stats(d);
  {
    auto a = tl::empty<double, 1>({1000}, d);
    const auto during = tessera::memory_stats(d);
    EXPECT_EQ(during.bytes_in_use, before.bytes_in_use + 8000);
    EXPECT_EQ(during.live_allocations, before.live_allocations + 1);
    EXPECT_GE(during.peak_bytes, during.bytes_in_use);
  }
  EXPECT_EQ(tessera::memory_stats(d).bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(tessera::memory_stats(d).total_allocations, before.total_allocations + 1);
}

TYPED_TEST(ArrayTest, OutOfMemoryNamesDeviceAndBytes) {
  const Device d = this->device();
  if (d.is_host()) GTEST_SKIP() << "host overcommit makes a host OOM unreliable to provoke";
  try {
    tl::empty<double, 1>({tl::index_t(1) << 50}, d);
    FAIL() << "allocated 8 PiB";
  } catch (const tessera::OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("9007199254740992"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(d.str()), std::string::npos) << e.what();
  }
  auto ok = tl::ones<float, 1>({16}, d);  // the device still works
  EXPECT_EQ(tl::sum(ok), 16.f);
}
