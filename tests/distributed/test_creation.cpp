// Creation of distributed arrays: fills (halos included), arange and from_function keyed by the
// global index, and random numbers bitwise identical to tessera::random on the gathered array.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

#include "device_test.hpp"
#include "dist_test_util.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/local/philox.hpp"
#include "tessera/local/random.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using tessera::distributed::testing::gather_to_host;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;


// The varied 17x13x5 layouts, and one of axes shorter than the grid (empty blocks).
std::vector<Layout<3>> layouts3() {
  const auto world = tessera::testing::world();
  auto ls = tessera::distributed::testing::varied_layouts_17x13x5(world);
  ls.push_back(Layout<3>::block(ProcessGrid::balanced(world, 3), {1, 3, 2}));
  return ls;
}

template <class K> class Creation : public DeviceTest<K> {};
TYPED_TEST_SUITE(Creation, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(Creation, FullZerosOnesFillTheWholeShard) {
  const Device d = this->device();
  for (const auto& l : layouts3()) {
    const auto z = zeros<double>(l, d);
    const auto o = ones<std::int32_t>(l, d);
    const auto f = full<std::complex<float>>(l, {1.5f, -2.0f}, d);
    const auto e = empty<float>(l, d);
    EXPECT_EQ(z.local().shape(), l.padded_shape());
    EXPECT_EQ(e.local().shape(), l.padded_shape());
    for (double v : local::to_host(z.local())) ASSERT_EQ(v, 0.0) << l.str();
    for (auto v : local::to_host(o.local())) ASSERT_EQ(v, 1) << l.str();
    for (auto v : local::to_host(f.local())) ASSERT_EQ(v, std::complex<float>(1.5f, -2.0f)) << l.str();
  }
}

TYPED_TEST(Creation, ArangeHoldsTheGlobalFlatIndex) {
  const Device d = this->device();
  for (const auto& l : layouts3()) {
    const auto a = gather_to_host(arange<std::int64_t>(l, d));
    const auto b = gather_to_host(arange<float>(l, d));
    const auto c = gather_to_host(arange<std::complex<double>>(l, d));
    for (index_t i = 0; i < l.global_size(); ++i) {
      ASSERT_EQ(a[i], i) << l.str();
      ASSERT_EQ(b[i], float(i)) << l.str();
      ASSERT_EQ(c[i], std::complex<double>(double(i), 0.0)) << l.str();
    }
  }
  // 1 x N, and a 2 x 3 array on more ranks than either axis has elements.
  const auto world = tessera::testing::world();
  const ProcessGrid g1(world);
  const auto row = gather_to_host(arange<std::int32_t>(Layout<2>(g1, {1, 29}, {-1, 0}), d));
  for (index_t i = 0; i < 29; ++i) EXPECT_EQ(row[i], i);
  const auto tiny = gather_to_host(arange<double>(Layout<2>::block(ProcessGrid::balanced(world, 2), {2, 3}), d));
  for (index_t i = 0; i < 6; ++i) EXPECT_EQ(tiny[i], double(i));
}

// A functor rather than a lambda, so that this file would also compile as CUDA (extended lambdas
// may not be defined inside a gtest body, which is a private member function).
struct Digits {
  TESSERA_HD double operator()(const Index<3>& i) const { return 100.0 * i[0] + 10.0 * i[1] + i[2]; }
};

TYPED_TEST(Creation, FromFunctionGetsTheGlobalIndex) {
  const Device d = this->device();
  for (const auto& l : layouts3()) {
#ifndef __CUDACC__
    if (d.is_cuda()) {
      EXPECT_THROW(from_function<double>(l, d, Digits{}), BackendUnavailable);
      continue;
    }
#endif
    const auto got = gather_to_host(from_function<double>(l, d, Digits{}));
    const auto& n = l.global_shape();
    for (index_t i = 0; i < n[0]; ++i)
      for (index_t j = 0; j < n[1]; ++j)
        for (index_t k = 0; k < n[2]; ++k)
          ASSERT_EQ(got[(i * n[1] + j) * n[2] + k], Digits{}({i, j, k})) << l.str();
  }
}

template <class T>
void expect_bitwise(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(T)), 0) << what << " at " << i << ": " << got[i] << " vs " << want[i];
}

template <class T>
void check_random_reals(Device d) {
  const auto& host = Stream::default_for(Device::host());
  for (const auto& l : layouts3()) {
    for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{0x9E3779B97F4A7C15ull}}) {
      std::vector<T> want(l.global_size());
      random::uniform<T>(want.data(), l.global_size(), seed, 0, T(-2), T(3), host);
      expect_bitwise(gather_to_host(random_uniform<T>(l, d, seed, T(-2), T(3))), want, "uniform " + l.str());
      random::normal<T>(want.data(), l.global_size(), seed, 0, T(1), T(0.5), host);
      expect_bitwise(gather_to_host(random_normal<T>(l, d, seed, T(1), T(0.5))), want, "normal " + l.str());
    }
  }
}

TYPED_TEST(Creation, RandomIsBitwiseTheLocalStreamOfTheGatheredArray) {
  const Device d = this->device();
  check_random_reals<float>(d);
  check_random_reals<double>(d);
  const auto& host = Stream::default_for(Device::host());
  for (const auto& l : layouts3()) {
    std::vector<std::int64_t> want(l.global_size());
    random::integers<std::int64_t>(want.data(), l.global_size(), 7, 0, -1000, 1000, host);
    expect_bitwise(gather_to_host(random_integers<std::int64_t>(l, d, 7, -1000, 1000)), want, "integers " + l.str());
  }
  // Defaults: uniform [0, 1), standard normal.
  const auto l = layouts3()[1];
  std::vector<double> want(l.global_size());
  random::uniform<double>(want.data(), l.global_size(), 3, 0, 0.0, 1.0, host);
  expect_bitwise(gather_to_host(random_uniform<double>(l, d, 3)), want, "default uniform");
  random::normal<double>(want.data(), l.global_size(), 3, 0, 0.0, 1.0, host);
  expect_bitwise(gather_to_host(random_normal<double>(l, d, 3)), want, "default normal");
}

TYPED_TEST(Creation, RandomLeavesHalosAndRejectsBadArguments) {
  const Device d = this->device();
  const auto l = layouts3()[1];  // halo 1 on every axis
  auto a = random_uniform<float>(l, d, 11, 5.0f, 6.0f);
  for (float v : gather_to_host(a)) ASSERT_TRUE(v >= 5.0f && v < 6.0f) << v;
  EXPECT_THROW(random_uniform<float>(l, d, 1, 1.0f, 1.0f), InvalidArgument);
  EXPECT_THROW(random_normal<double>(l, d, 1, 0.0, -1.0), InvalidArgument);
  EXPECT_THROW(random_integers<std::int32_t>(l, d, 1, 3, 2), InvalidArgument);
}

}  // namespace
