#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "device_test.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/philox.hpp"
#include "tessera/local/random.hpp"
#include "tessera/local/stream.hpp"

using tessera::Device;
using tessera::Stream;
namespace px = tessera::philox;
namespace rnd = tessera::random;

namespace {

void expect_block(const px::Block& got, const px::Block& want) {
  for (int w = 0; w < 4; ++w) EXPECT_EQ(got.v[w], want.v[w]) << "word " << w;
}

// gen(T* out, n, stream) run into memory on `d`; the values come back on the host.
template <class T, class Gen>
std::vector<T> generate(Device d, std::int64_t n, Gen gen) {
  Stream& s = Stream::default_for(d);
  std::vector<T> out(static_cast<std::size_t>(n));
  if (d.is_host()) {
    gen(out.data(), n, s);
    return out;
  }
  tessera::Buffer buf(out.size() * sizeof(T), s);
  gen(static_cast<T*>(buf.data()), n, s);
  tessera::detail::memcpy_any(out.data(), Device::host(), buf.data(), d, out.size() * sizeof(T), s);
  s.synchronize();
  return out;
}

template <class T>
std::string hex_bytes(const T& v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  std::ostringstream os;
  os << std::hex;
  for (std::size_t i = sizeof(T); i-- > 0;) os << (b[i] >> 4) << (b[i] & 15);
  return os.str();
}

// Index of the first element whose bytes differ, or -1.
template <class T>
std::int64_t first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<std::int64_t>(i);
  return -1;
}

struct Moments {
  double mean = 0, var = 0, kurtosis = 0;
};
template <class T>
Moments moments(const std::vector<T>& x) {
  Moments m;
  const double n = static_cast<double>(x.size());
  for (T v : x) m.mean += static_cast<double>(v) / n;
  double m4 = 0;
  for (T v : x) {
    const double d = static_cast<double>(v) - m.mean;
    m.var += d * d / n;
    m4 += d * d * d * d / n;
  }
  m.kurtosis = m4 / (m.var * m.var);
  return m;
}

constexpr std::uint64_t kSeed = 0x0123456789abcdefull;
constexpr std::uint64_t kOffset = (std::uint64_t{1} << 32) - 1000;  // crosses into hi32(index)

template <class T>
using Gen = void (*)(T*, std::int64_t, std::uint64_t offset, const Stream&);

// Every function and type, with ranges that exercise the edges, as f(name, Gen<T>).
template <class F>
void for_each_generator(F&& f) {
  using I32 = std::numeric_limits<std::int32_t>;
  using I64 = std::numeric_limits<std::int64_t>;
  f("uniform<float>", Gen<float>([](float* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::uniform<float>(o, n, kSeed, off, -2.0f, 3.0f, s);
    }));
  f("uniform<float> rounding up to high",
    Gen<float>([](float* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::uniform<float>(o, n, kSeed, off, 1e8f, 1e8f + 8, s);
    }));
  f("uniform<double>",
    Gen<double>([](double* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::uniform<double>(o, n, kSeed, off, -1e-3, 7.25, s);
    }));
  f("normal<float>", Gen<float>([](float* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::normal<float>(o, n, kSeed, off, 1.5f, 2.5f, s);
    }));
  f("normal<double>",
    Gen<double>([](double* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::normal<double>(o, n, kSeed, off, -0.5, 3.0, s);
    }));
  f("integers<int32_t>",
    Gen<std::int32_t>([](std::int32_t* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::integers<std::int32_t>(o, n, kSeed, off, -1000, 1000000, s);
    }));
  f("integers<int32_t> full range",
    Gen<std::int32_t>([](std::int32_t* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::integers<std::int32_t>(o, n, kSeed, off, I32::min(), I32::max(), s);
    }));
  f("integers<int64_t> full range",
    Gen<std::int64_t>([](std::int64_t* o, std::int64_t n, std::uint64_t off, const Stream& s) {
      rnd::integers<std::int64_t>(o, n, kSeed, off, I64::min(), I64::max(), s);
    }));
}

// Reference for integers: low + floor(x * range / 2^128), x the 128-bit (x3:x2:x1:x0).
std::int64_t reference_integer(const px::Block& b, std::int64_t low, std::uint64_t range) {
  __extension__ typedef unsigned __int128 u128;
  const u128 lo = (u128{b.v[1]} << 32 | b.v[0]) * range;
  const u128 hi = (u128{b.v[3]} << 32 | b.v[2]) * range + (lo >> 64);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) +
                                   static_cast<std::uint64_t>(hi >> 64));
}

}  // namespace

// Random123's tests/kat_vectors, "philox4x32 10": counter, key -> output.
static_assert(px::philox4x32_10({{0, 0, 0, 0}}, 0, 0).v[3] == 0x9b00dbd8u);

TEST(Philox, KnownAnswerVectors) {
  expect_block(px::philox4x32_10({{0, 0, 0, 0}}, 0, 0),
               {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}});
  const std::uint32_t f = 0xffffffffu;
  expect_block(px::philox4x32_10({{f, f, f, f}}, f, f),
               {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}});
  expect_block(px::philox4x32_10({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822,
                                 0x299f31d0),
               {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}});
}

TEST(Philox, CounterIsIndexAndKeyIsSeed) {
  expect_block(px::block_at(0x299f31d0'a4093822ull, 0x85a308d3'243f6a88ull),
               px::philox4x32_10({{0x243f6a88, 0x85a308d3, 0, 0}}, 0xa4093822, 0x299f31d0));
}

// The public functions produce exactly the documented bits -> value mapping.
TEST(Philox, ValuesFollowTheDocumentedMapping) {
  constexpr int n = 2000;
  constexpr std::uint64_t seed = 77, offset = 5;
  const Stream& s = Stream::default_for(Device::host());
  std::vector<float> uf(n), nf(n);
  std::vector<double> ud(n), nd(n);
  std::vector<std::int64_t> iv(n);
  rnd::uniform<float>(uf.data(), n, seed, offset, 0, 1, s);
  rnd::uniform<double>(ud.data(), n, seed, offset, 0, 1, s);
  rnd::normal<float>(nf.data(), n, seed, offset, 0, 1, s);
  rnd::normal<double>(nd.data(), n, seed, offset, 0, 1, s);
  rnd::integers<std::int64_t>(iv.data(), n, seed, offset, -7, std::int64_t{1} << 62, s);
  const long double two_pi = 6.283185307179586476925286766559L;
  for (int i = 0; i < n; ++i) {
    const px::Block b = px::block_at(seed, offset + static_cast<std::uint64_t>(i));
    const std::uint64_t w01 = std::uint64_t{b.v[1]} << 32 | b.v[0];
    const std::uint64_t w23 = std::uint64_t{b.v[3]} << 32 | b.v[2];
    ASSERT_EQ(uf[i], static_cast<float>(b.v[0] >> 8) * 0x1p-24f) << i;
    ASSERT_EQ(ud[i], static_cast<double>(w01 >> 11) * 0x1p-53) << i;
    // Box-Muller in long double with libm; ours may differ by a few ulps of the radius.
    const long double rf = std::sqrt(-2 * std::log(((b.v[0] >> 8) + 1) * 0x1p-24L));
    const long double rd = std::sqrt(-2 * std::log(((w01 >> 11) + 1) * 0x1p-53L));
    const auto zf = static_cast<double>(rf * std::cos(two_pi * (b.v[1] >> 8) * 0x1p-24L));
    const auto zd = static_cast<double>(rd * std::cos(two_pi * (w23 >> 11) * 0x1p-53L));
    ASSERT_NEAR(nf[i], zf, 0x1p-21 * (1 + static_cast<double>(rf))) << i;
    ASSERT_NEAR(nd[i], zd, 0x1p-50 * (1 + static_cast<double>(rd))) << i;
    ASSERT_EQ(iv[i], reference_integer(b, -7, (std::uint64_t{1} << 62) + 7)) << i;
  }
}

// Our ln and cos (not libm's, so that host and device agree) are accurate.
TEST(Philox, OwnLogAndCosAreAccurate) {
  auto ulps = [](auto got, long double want) {
    using T = decltype(got);
    const T w = static_cast<T>(want);
    const T ulp = std::nextafter(std::fabs(w), std::numeric_limits<T>::infinity()) - std::fabs(w);
    return static_cast<double>(std::fabs(got - want) / ulp);
  };
  const long double two_pi = 6.283185307179586476925286766559L;
  double log24 = 0, log53 = 0, cos24 = 0, cos53 = 0;
  for (std::uint64_t t = 1; t <= 200000; ++t) {
    const px::Block b = px::block_at(3, t);
    // j spans all binades, including both ends.
    const std::uint64_t w = std::uint64_t{b.v[1]} << 32 | b.v[0];
    const std::uint32_t j24 = t == 1 ? 1u : t == 2 ? 1u << 24 : ((b.v[0] >> 8) >> t % 24) + 1;
    const std::uint64_t j53 =
        t == 1 ? 1 : t == 2 ? std::uint64_t{1} << 53 : ((w >> 11) >> t % 53) + 1;
    log24 = std::max(log24, ulps(px::detail::log_unit24(j24), std::log(j24 * 0x1p-24L)));
    log53 = std::max(log53, ulps(px::detail::log_unit53(j53), std::log(j53 * 0x1p-53L)));
    // cos: absolute error in ulps of 1 (near its zeros the relative error must grow).
    const std::uint32_t k24 = b.v[3] >> 8;
    const std::uint64_t k53 = (std::uint64_t{b.v[3]} << 32 | b.v[2]) >> 11;
    cos24 = std::max(cos24, static_cast<double>(std::fabs(px::detail::cos_turn24(k24) -
                                                          std::cos(two_pi * k24 * 0x1p-24L)) /
                                                0x1p-24L));
    cos53 = std::max(cos53, static_cast<double>(std::fabs(px::detail::cos_turn53(k53) -
                                                          std::cos(two_pi * k53 * 0x1p-53L)) /
                                                0x1p-53L));
  }
  EXPECT_LE(log24, 2.0);
  EXPECT_LE(log53, 1.0);
  EXPECT_LE(cos24, 2.0);
  EXPECT_LE(cos53, 2.0);
}

template <class K>
class RandomOnDevice : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(RandomOnDevice, tessera::testing::DeviceKinds,
                 tessera::testing::DeviceKindNames);

// [0,100) in one call equals [0,37) and [37,100) in two: values depend on the index only.
TYPED_TEST(RandomOnDevice, OffsetsCompose) {
  const Device d = this->device();
  for_each_generator([&]<class T>(const char* name, Gen<T> gen) {
    const auto whole = generate<T>(d, 100, [&](T* o, std::int64_t n, const Stream& s) {
      gen(o, n, kOffset, s);
    });
    auto head = generate<T>(d, 37, [&](T* o, std::int64_t n, const Stream& s) {
      gen(o, n, kOffset, s);
    });
    const auto tail = generate<T>(d, 63, [&](T* o, std::int64_t n, const Stream& s) {
      gen(o, n, kOffset + 37, s);
    });
    head.insert(head.end(), tail.begin(), tail.end());
    EXPECT_EQ(first_difference(whole, head), -1) << name;
  });
}

// The bitwise promise: a device gives the same bytes as the host (trivially so on host).
TYPED_TEST(RandomOnDevice, MatchesHostBitwise) {
  const Device d = this->device();
  constexpr std::int64_t n = (1 << 18) + 3;  // not a multiple of any block size
  for_each_generator([&]<class T>(const char* name, Gen<T> gen) {
    auto run = [&](T* o, std::int64_t m, const Stream& s) { gen(o, m, kOffset, s); };
    const auto host = generate<T>(Device::host(), n, run);
    const auto here = generate<T>(d, n, run);
    const std::int64_t i = first_difference(here, host);
    EXPECT_EQ(i, -1) << name << " on " << d << ": element " << i << " is "
                     << (i < 0 ? "" : hex_bytes(here[i])) << ", host has "
                     << (i < 0 ? "" : hex_bytes(host[i]));
  });
}

TYPED_TEST(RandomOnDevice, UniformIsInRangeWithUniformMoments) {
  const Device d = this->device();
  constexpr std::int64_t n = 1'000'000;
  auto check = [&]<class T>(T low, T high) {
    const auto x = generate<T>(d, n, [&](T* o, std::int64_t m, const Stream& s) {
      rnd::uniform<T>(o, m, 11, 0, low, high, s);
    });
    for (T v : x) ASSERT_TRUE(v >= low && v < high) << v;
    const Moments m = moments(x);
    const double w = static_cast<double>(high) - static_cast<double>(low);
    EXPECT_NEAR(m.mean, (low + high) / 2.0, 5 * w / std::sqrt(12.0 * n));
    EXPECT_NEAR(m.var, w * w / 12, 5 * w * w * std::sqrt(1.0 / 180 / n));
  };
  check(-2.0f, 3.0f);
  check(-2.0, 3.0);
  check(0.0f, 1.0f);
}

// Where low + (high - low) u would round to high, the value is moved below it.
TYPED_TEST(RandomOnDevice, UniformNeverReturnsHigh) {
  const Device d = this->device();
  const auto f = generate<float>(d, 10000, [](float* o, std::int64_t n, const Stream& s) {
    rnd::uniform<float>(o, n, 5, 0, 1e8f, 1e8f + 8, s);  // floats 8 apart there
  });
  for (float v : f) ASSERT_EQ(v, 1e8f);
  const double base = 0x1p60;  // doubles 256 apart there
  const auto g = generate<double>(d, 10000, [&](double* o, std::int64_t n, const Stream& s) {
    rnd::uniform<double>(o, n, 5, 0, base, base + 256, s);
  });
  for (double v : g) ASSERT_EQ(v, base);
}

TYPED_TEST(RandomOnDevice, NormalHasNormalMoments) {
  const Device d = this->device();
  constexpr std::int64_t n = 1'000'000;
  auto check = [&]<class T>(T mean, T sd) {
    const auto x = generate<T>(d, n, [&](T* o, std::int64_t m, const Stream& s) {
      rnd::normal<T>(o, m, 21, 1000, mean, sd, s);
    });
    const Moments m = moments(x);
    EXPECT_NEAR(m.mean, mean, 5 * sd / std::sqrt(n)) << sizeof(T);
    EXPECT_NEAR(m.var, sd * sd, 5 * sd * sd * std::sqrt(2.0 / n)) << sizeof(T);
    EXPECT_NEAR(m.kurtosis, 3.0, 5 * std::sqrt(24.0 / n)) << sizeof(T);
    std::int64_t in1 = 0, in2 = 0, out3 = 0;
    for (T v : x) {
      const double z = std::fabs((static_cast<double>(v) - mean) / sd);
      in1 += z < 1;
      in2 += z < 2;
      out3 += z > 3;
    }
    // P(|z| < 1), P(|z| < 2), P(|z| > 3) of the standard normal, within 5 binomial sd.
    auto near = [&](std::int64_t count, double p) {
      EXPECT_NEAR(static_cast<double>(count) / n, p, 5 * std::sqrt(p * (1 - p) / n))
          << sizeof(T) << " p=" << p;
    };
    near(in1, 0.682689492137);
    near(in2, 0.954499736104);
    near(out3, 0.002699796063);
  };
  check(0.0f, 1.0f);
  check(0.0, 1.0);
  check(3.0, 2.0);
  check(-1.0f, 0.5f);
}

TYPED_TEST(RandomOnDevice, IntegersCoverSmallRangesUniformly) {
  const Device d = this->device();
  constexpr std::int64_t n = 700'000;
  auto check = [&]<class T>(T low, T high) {
    const auto x = generate<T>(d, n, [&](T* o, std::int64_t m, const Stream& s) {
      rnd::integers<T>(o, m, 31, 0, low, high, s);
    });
    std::vector<std::int64_t> count(static_cast<std::size_t>(high - low));
    for (T v : x) {
      ASSERT_TRUE(v >= low && v < high) << v;
      ++count[static_cast<std::size_t>(v - low)];
    }
    const double p = 1.0 / static_cast<double>(count.size());
    for (std::int64_t c : count)  // every value hit, each about n p times
      EXPECT_NEAR(static_cast<double>(c), n * p, 5 * std::sqrt(n * p * (1 - p)));
  };
  check(std::int32_t{-3}, std::int32_t{4});
  check(std::int64_t{10}, std::int64_t{17});
  check(std::int32_t{0}, std::int32_t{1});
}

TYPED_TEST(RandomOnDevice, IntegersSpanTheFullRange) {
  const Device d = this->device();
  constexpr std::int64_t n = 200'000;
  auto check = [&]<class T>() {
    using L = std::numeric_limits<T>;
    const auto x = generate<T>(d, n, [&](T* o, std::int64_t m, const Stream& s) {
      rnd::integers<T>(o, m, 41, 0, L::min(), L::max(), s);
    });
    double mean = 0;  // of v / 2^(bits-1), uniform on [-1, 1)
    for (T v : x) {
      ASSERT_LT(v, L::max());
      mean += static_cast<double>(v) / -static_cast<double>(L::min()) / n;
    }
    EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(1.0 / 3 / n));
  };
  check.template operator()<std::int32_t>();
  check.template operator()<std::int64_t>();
}

TYPED_TEST(RandomOnDevice, SeedsGiveDifferentStreams) {
  const Device d = this->device();
  constexpr std::int64_t n = 1000;
  std::vector<std::vector<double>> runs;
  for (std::uint64_t seed : {1ull, 2ull, (1ull << 32) | 1, 0ull})  // both seed words matter
    runs.push_back(generate<double>(d, n, [&](double* o, std::int64_t m, const Stream& s) {
      rnd::uniform<double>(o, m, seed, 0, 0, 1, s);
    }));
  for (std::size_t a = 0; a < runs.size(); ++a)
    for (std::size_t b = a + 1; b < runs.size(); ++b) {
      int equal = 0;
      for (std::int64_t i = 0; i < n; ++i) equal += runs[a][i] == runs[b][i];
      EXPECT_EQ(equal, 0) << "seed runs " << a << " and " << b;
    }
}

TYPED_TEST(RandomOnDevice, RejectsBadArgumentsNamingThem) {
  const Device d = this->device();
  const Stream& s = Stream::default_for(d);
  tessera::Buffer buf(64, s);  // never written: the checks come first
  auto* f = static_cast<float*>(buf.data());
  auto* i = static_cast<std::int32_t*>(buf.data());
  auto expect_message = [](auto&& call, const std::string& part) {
    try {
      call();
      ADD_FAILURE() << "no exception; expected one mentioning '" << part << "'";
    } catch (const tessera::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_message([&] { rnd::uniform<float>(f, -5, 1, 0, 0, 1, s); }, "n (-5)");
  expect_message([&] { rnd::uniform<float>(nullptr, 3, 1, 0, 0, 1, s); }, "null");
  expect_message([&] { rnd::uniform<float>(f, 4, 1, 0, 2.5f, 1.25f, s); }, "low (2.5)");
  expect_message([&] { rnd::uniform<float>(f, 4, 1, 0, 2.5f, 1.25f, s); }, "high (1.25)");
  expect_message([&] { rnd::uniform<double>(nullptr, 0, 1, 0, 1, 1, s); }, "low (1)");
  expect_message([&] { rnd::uniform<float>(f, 4, 1, 0, std::nanf(""), 1, s); }, "low (nan)");
  expect_message(
      [&] { rnd::uniform<float>(f, 4, 1, 0, -3e38f, 3e38f, s); }, "high - low must be finite");
  expect_message([&] { rnd::normal<float>(f, 4, 1, 0, 0, -0.5f, s); }, "stddev (-0.5)");
  expect_message([&] { rnd::normal<double>(nullptr, 0, 1, 0, INFINITY, 1, s); }, "mean (inf)");
  expect_message([&] { rnd::integers<std::int32_t>(i, 4, 1, 0, 7, 7, s); }, "low (7)");
  expect_message([&] { rnd::integers<std::int64_t>(nullptr, 0, 1, 0, 9, -9, s); }, "high (-9)");
  expect_message([&] { rnd::integers<std::int32_t>(i, -1, 1, 0, 0, 1, s); }, "n (-1)");
}

TYPED_TEST(RandomOnDevice, EmptyOutputIsANoOp) {
  const Stream& s = Stream::default_for(this->device());
  EXPECT_NO_THROW(rnd::uniform<double>(nullptr, 0, 1, 0, 0, 1, s));
  EXPECT_NO_THROW(rnd::normal<float>(nullptr, 0, 1, 0, 0, 0, s));  // stddev 0 is allowed
  EXPECT_NO_THROW(rnd::integers<std::int64_t>(nullptr, 0, 1, 0, 0, 1, s));
}
