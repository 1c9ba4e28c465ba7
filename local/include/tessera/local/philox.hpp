// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) and the
// conversions from its 128 output bits to uniform, normal and integer values. Header-only, for
// host C++ and CUDA device code alike, so that both backends produce the same bits.
//
// Mapping, for a 64-bit seed and element index idx (= offset + i):
//   counter = {lo32(idx), hi32(idx), 0, 0}, key = {lo32(seed), hi32(seed)}, 10 rounds -> x0..x3.
//   (x1:x0) is the 64-bit word with x1 as its high half.
//   uniform float : u = (x0 >> 8) 2^-24 in [0,1);  value = low + (high - low) u, and a value
//                   that rounds up to `high` becomes the largest one below it.
//   uniform double: u = ((x1:x0) >> 11) 2^-53 in [0,1); the same.
//   normal        : Box-Muller, cosine branch: z = sqrt(-2 ln u1) cos(2 pi u2), value = mean + sd z
//                   float : u1 = ((x0 >> 8) + 1) 2^-24 in (0,1], u2 = (x1 >> 8) 2^-24
//                   double: u1 = (((x1:x0) >> 11) + 1) 2^-53,   u2 = ((x3:x2) >> 11) 2^-53
//                   (u1 > 0 avoids ln 0; tails end at 5.77 sd for float, 8.57 sd for double).
//   integers      : low + floor((x3:x2:x1:x0) (high - low) / 2^128), a 128-bit multiply-high.
//                   Its bias is below (high - low) / 2^128 <= 2^-64 per value; 64 bits would be
//                   visibly biased for int64 ranges near 2^63.
//
// Bitwise reproducibility: only integer operations and IEEE +, -, *, /, sqrt, each rounded to
// nearest on its own. On the device these are __fadd_rn & co., which nvcc never fuses into FMAs;
// on the host every product passes through an empty asm so that the compiler cannot contract it
// either (GCC does contract a*b+c under -mfma even with -std=c++20). ln and cos are written here
// (fdlibm's log kernel; Taylor series in the turn fraction after an exact integer range reduction)
// because glibc and libdevice disagree in the last bit. Host code using this must not be built with
// -ffast-math, and float arithmetic must not use excess precision (x86-64 SSE, AArch64: fine).
#pragma once
#include <cstdint>

#include "tessera/local/hd.hpp"

namespace tessera::philox {

/// 128 bits: a counter going in, the random output coming out.
struct Block {
  std::uint32_t v[4];
};

inline constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
inline constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key increments

/// Philox4x32-10 of counter `c` under key (k0, k1).
TESSERA_HD constexpr Block philox4x32_10(Block c, std::uint32_t k0, std::uint32_t k1) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC unroll 10
#endif
  for (int round = 0; round < 10; ++round) {  // Random123's philox4x32round, then bumpkey
#if defined(__CUDA_ARCH__)
    const std::uint32_t hi0 = __umulhi(kM0, c.v[0]), hi1 = __umulhi(kM1, c.v[2]);
#else
    const auto hi0 = static_cast<std::uint32_t>(std::uint64_t{kM0} * c.v[0] >> 32);
    const auto hi1 = static_cast<std::uint32_t>(std::uint64_t{kM1} * c.v[2] >> 32);
#endif
    c = Block{{hi1 ^ c.v[1] ^ k0, kM1 * c.v[2], hi0 ^ c.v[3] ^ k1, kM0 * c.v[0]}};
    k0 += kW0;  // the key schedule (the last bump is unused)
    k1 += kW1;
  }
  return c;
}

/// The 128 bits for element `index` of the stream `seed`.
TESSERA_HD constexpr Block block_at(std::uint64_t seed, std::uint64_t index) {
  return philox4x32_10(
      Block{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), 0u, 0u}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

namespace detail {

#if defined(__x86_64__)
#define TESSERA_PHILOX_OPAQUE(v) __asm__("" : "+x"(v))
#elif defined(__aarch64__)
#define TESSERA_PHILOX_OPAQUE(v) __asm__("" : "+w"(v))
#else
#define TESSERA_PHILOX_OPAQUE(v) __asm__("" : "+m"(v))
#endif

// Separately rounded IEEE operations: identical on host and device.
TESSERA_HD inline float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
TESSERA_HD inline double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
TESSERA_HD inline float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
TESSERA_HD inline double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
TESSERA_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  float p = a * b;
  TESSERA_PHILOX_OPAQUE(p);  // a product the compiler cannot see cannot be fused into an FMA
  return p;
#endif
}
TESSERA_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  double p = a * b;
  TESSERA_PHILOX_OPAQUE(p);
  return p;
#endif
}
TESSERA_HD inline float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
TESSERA_HD inline double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
TESSERA_HD inline float sqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return __builtin_sqrtf(a);  // correctly rounded (IEEE 754), like __fsqrt_rn
#endif
}
TESSERA_HD inline double sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return __builtin_sqrt(a);
#endif
}
TESSERA_HD inline int msb(std::uint64_t x) {  // index of the highest set bit; x != 0
#if defined(__CUDA_ARCH__)
  return 63 - __clzll(static_cast<long long>(x));
#else
  return 63 - __builtin_clzll(x);
#endif
}
TESSERA_HD inline std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  __extension__ typedef unsigned __int128 u128;  // GCC and Clang; __extension__: no -Wpedantic
  return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
#endif
}

// ln(j 2^-24) for j in [1, 2^24]: u = m 2^e with m in [sqrt(1/2), sqrt(2)) taken exactly from the
// integer, then musl/FreeBSD logf's kernel (error < 1 ulp).
TESSERA_HD inline float log_unit24(std::uint32_t j) {
  if (j == (1u << 24)) return 0.0f;
  const int top = msb(j);
  const std::uint32_t mant = j << (23 - top);  // in [2^23, 2^24)
  const bool halve = mant >= 0xB504F3u;        // sqrt(2) 2^23
  const float m = mul(static_cast<float>(mant), halve ? 0x1p-24f : 0x1p-23f);
  const float k = static_cast<float>(top - 24 + (halve ? 1 : 0));
  const float f = sub(m, 1.0f);
  const float s = div(f, add(2.0f, f));
  const float z = mul(s, s), w = mul(z, z);
  const float t1 = mul(w, add(0x1.99c26p-2f, mul(w, 0x1.f13c4cp-3f)));
  const float t2 = mul(z, add(0x1.555554p-1f, mul(w, 0x1.23d3dcp-2f)));
  const float hfsq = mul(mul(0.5f, f), f);
  const float r = add(sub(add(mul(s, add(hfsq, add(t2, t1))), mul(k, 0x1.2fefa2p-17f)), hfsq), f);
  return add(r, mul(k, 0x1.62e3p-1f));  // k ln2_hi is exact
}

// ln(j 2^-53) for j in [1, 2^53]: as above with musl/FreeBSD log's kernel.
TESSERA_HD inline double log_unit53(std::uint64_t j) {
  if (j == (std::uint64_t{1} << 53)) return 0.0;
  const int top = msb(j);
  const std::uint64_t mant = j << (52 - top);         // in [2^52, 2^53)
  const bool halve = mant >= 0x16A09E00000000ull;     // ~sqrt(2) 2^52, musl's threshold
  const double m = mul(static_cast<double>(mant), halve ? 0x1p-53 : 0x1p-52);
  const double k = static_cast<double>(top - 53 + (halve ? 1 : 0));
  const double f = sub(m, 1.0);
  const double s = div(f, add(2.0, f));
  const double z = mul(s, s), w = mul(z, z);
  const double t1 = mul(w, add(0x1.999999997fa04p-2,
                               mul(w, add(0x1.c71c51d8e78afp-3, mul(w, 0x1.39a09d078c69fp-3)))));
  const double t2 =
      mul(z, add(0x1.5555555555593p-1,
                 mul(w, add(0x1.2492494229359p-2,
                            mul(w, add(0x1.7466496cb03dep-3, mul(w, 0x1.2f112df3e5244p-3)))))));
  const double hfsq = mul(mul(0.5, f), f);
  const double r =
      add(sub(add(mul(s, add(hfsq, add(t2, t1))), mul(k, 0x1.a39ef35793c76p-33)), hfsq), f);
  return add(r, mul(k, 0x1.62e42feep-1));
}

// cos(2 pi k 2^-24) for k in [0, 2^24): the nearest quarter turn q is split off exactly in
// integers, leaving |r| <= 1/8 turn for Taylor series in r (truncation error < 0.05 ulp).
TESSERA_HD inline float cos_turn24(std::uint32_t k) {
  const std::uint32_t q = (k + (1u << 21)) >> 22;
  const float r = mul(static_cast<float>(static_cast<std::int32_t>(k - (q << 22))), 0x1p-24f);
  const float r2 = mul(r, r);
  float v;
  if (q & 1) {  // sin(2 pi r); coefficients (2 pi)^(2n+1) / (2n+1)!
    float p = 0x1.507834p+5f;
    p = sub(0x1.32d2ccp+6f, mul(r2, p));
    p = sub(0x1.466bc6p+6f, mul(r2, p));
    p = sub(0x1.4abbcep+5f, mul(r2, p));
    p = sub(0x1.921fb6p+2f, mul(r2, p));
    v = mul(r, p);
  } else {  // cos(2 pi r); coefficients (2 pi)^(2n) / (2n)!
    float p = 0x1.a6d1f2p+4f;
    p = sub(0x1.e1f506p+5f, mul(r2, p));
    p = sub(0x1.55d3c8p+6f, mul(r2, p));
    p = sub(0x1.03c1f0p+6f, mul(r2, p));
    p = sub(0x1.3bd3ccp+4f, mul(r2, p));
    v = sub(1.0f, mul(r2, p));
  }
  // cos(q pi/2 + x) = cos x, -sin x, -cos x, sin x for q mod 4 = 0..3.
  return ((q + 1) & 2) ? -v : v;
}

// cos(2 pi k 2^-53) for k in [0, 2^53), as above in double.
TESSERA_HD inline double cos_turn53(std::uint64_t k) {
  const std::uint64_t q = (k + (std::uint64_t{1} << 50)) >> 51;
  const double r = mul(static_cast<double>(static_cast<std::int64_t>(k - (q << 51))), 0x1p-53);
  const double r2 = mul(r, r);
  double v;
  if (q & 1) {
    constexpr double c[] = {0x1.aaec32af93359p-4, 0x1.6fadb9f155744p-1, 0x1.e8f434d018d63p+1,
                            0x1.e3074fde8871fp+3, 0x1.50783487ee782p+5, 0x1.32d2cce62bd86p+6,
                            0x1.466bc6775aae2p+6, 0x1.4abbce625be53p+5, 0x1.921fb54442d18p+2};
    double p = c[0];
    for (int i = 1; i < 9; ++i) p = sub(c[i], mul(r2, p));
    v = mul(r, p);
  } else {
    constexpr double c[] = {0x1.20c62c2f2d7f5p-2, 0x1.b6e24f44b128fp+0, 0x1.f9d38a3763cc3p+2,
                            0x1.a6d1f2a204a8cp+4, 0x1.e1f506891babbp+5, 0x1.55d3c7e3cbffap+6,
                            0x1.03c1f081b5ac4p+6, 0x1.3bd3cc9be45dep+4};
    double p = c[0];
    for (int i = 1; i < 8; ++i) p = sub(c[i], mul(r2, p));
    v = sub(1.0, mul(r2, p));
  }
  return ((q + 1) & 2) ? -v : v;
}

TESSERA_HD inline std::uint64_t word64(std::uint32_t hi, std::uint32_t lo) {
  return (std::uint64_t{hi} << 32) | lo;
}

}  // namespace detail

/// low + (high - low) u; `range` = high - low and `top` = the largest value below high come from
/// the caller, computed once (ranges that overflow are the caller's to reject).
TESSERA_HD inline float uniform(const Block& b, float low, float range, float top) {
  const float u = detail::mul(static_cast<float>(b.v[0] >> 8), 0x1p-24f);
  const float x = detail::add(low, detail::mul(range, u));
  return x <= top ? x : top;
}
TESSERA_HD inline double uniform(const Block& b, double low, double range, double top) {
  const double u =
      detail::mul(static_cast<double>(detail::word64(b.v[1], b.v[0]) >> 11), 0x1p-53);
  const double x = detail::add(low, detail::mul(range, u));
  return x <= top ? x : top;
}

/// mean + stddev z, z standard normal (Box-Muller, cosine branch).
TESSERA_HD inline float normal(const Block& b, float mean, float stddev) {
  const float radius = detail::sqrt(detail::mul(-2.0f, detail::log_unit24((b.v[0] >> 8) + 1)));
  const float z = detail::mul(radius, detail::cos_turn24(b.v[1] >> 8));
  return detail::add(mean, detail::mul(stddev, z));
}
TESSERA_HD inline double normal(const Block& b, double mean, double stddev) {
  const double radius = detail::sqrt(
      detail::mul(-2.0, detail::log_unit53((detail::word64(b.v[1], b.v[0]) >> 11) + 1)));
  const double z = detail::mul(radius, detail::cos_turn53(detail::word64(b.v[3], b.v[2]) >> 11));
  return detail::add(mean, detail::mul(stddev, z));
}

/// floor(x range / 2^128) for the 128-bit x = (x3:x2:x1:x0): a value in [0, range).
TESSERA_HD inline std::uint64_t below(const Block& b, std::uint64_t range) {
  const std::uint64_t hi = detail::word64(b.v[3], b.v[2]), lo = detail::word64(b.v[1], b.v[0]);
  const std::uint64_t mid = hi * range;                   // bits 64..127 of hi*range*2^64
  const std::uint64_t sum = mid + detail::mulhi64(lo, range);
  return detail::mulhi64(hi, range) + (sum < mid ? 1 : 0);  // the carry into bit 128
}

/// low + below(range), wrapping in unsigned arithmetic: T is int32_t or int64_t and
/// range = high - low fits in 64 bits.
template <class T>
TESSERA_HD inline T integer(const Block& b, T low, std::uint64_t range) {
  return static_cast<T>(static_cast<std::uint64_t>(low) + below(b, range));
}

}  // namespace tessera::philox

#undef TESSERA_PHILOX_OPAQUE
