// tessera::random: argument checks, then the device's kernels (detail/random_kernels.hpp).
#include "tessera/local/random.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "../detail/random_kernels.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::random {
namespace {

template <class T>
std::string str(T v) {  // shortest text that reads back as v
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

[[noreturn]] void invalid(const char* fn, const std::string& why, const Stream& s) {
  throw InvalidArgument(std::string("random::") + fn + ": " + why, s.device());
}

void check_output(const char* fn, const void* out, std::int64_t n, const Stream& s) {
  if (n < 0) invalid(fn, "n (" + str(n) + ") must not be negative", s);
  if (n > 0 && out == nullptr) invalid(fn, "out is null with n = " + str(n), s);
}

template <class T>
void check_less(const char* fn, T low, T high, const Stream& s) {
  if (!(low < high))
    invalid(fn, "low (" + str(low) + ") must be less than high (" + str(high) + ")", s);
}

// The kernels of the stream's device, made current for the call.
struct On {
  DeviceGuard guard;
  const detail::RandomKernels& k;
  explicit On(const Stream& s) : guard(s.device()), k(detail::random_kernels(s.device().kind())) {}
};

}  // namespace

template <Real T>
void uniform(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
             std::type_identity_t<T> low, std::type_identity_t<T> high, const Stream& s) {
  check_output("uniform", out, n, s);
  check_less("uniform", low, high, s);
  const T range = high - low;
  if (!std::isfinite(range))
    invalid("uniform", "high - low must be finite (low " + str(low) + ", high " + str(high) + ")",
            s);
  if (n == 0) return;
  const T top = std::nextafter(high, low);  // the largest value below high
  On(s).k.uniform(out, n, seed, offset, low, range, top, s.native());
}

template <Real T>
void normal(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
            std::type_identity_t<T> mean, std::type_identity_t<T> stddev, const Stream& s) {
  check_output("normal", out, n, s);
  if (!std::isfinite(mean)) invalid("normal", "mean (" + str(mean) + ") must be finite", s);
  if (!(stddev >= 0) || !std::isfinite(stddev))
    invalid("normal", "stddev (" + str(stddev) + ") must be finite and >= 0", s);
  if (n == 0) return;
  On(s).k.normal(out, n, seed, offset, mean, stddev, s.native());
}

template <Integer T>
void integers(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
              std::type_identity_t<T> low, std::type_identity_t<T> high, const Stream& s) {
  check_output("integers", out, n, s);
  check_less("integers", low, high, s);
  if (n == 0) return;
  // high - low in unsigned arithmetic: exact, as it lies in [1, 2^64).
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  On(s).k.integers(out, n, seed, offset, low, range, s.native());
}

#define TESSERA_RANDOM_REAL(T)                                                                       \
  template void uniform<T>(T*, std::int64_t, std::uint64_t, std::uint64_t, T, T, const Stream&); \
  template void normal<T>(T*, std::int64_t, std::uint64_t, std::uint64_t, T, T, const Stream&);
#define TESSERA_RANDOM_INTEGER(T) \
  template void integers<T>(T*, std::int64_t, std::uint64_t, std::uint64_t, T, T, const Stream&);
TESSERA_FOR_EACH_REAL(TESSERA_RANDOM_REAL)
TESSERA_FOR_EACH_INTEGER(TESSERA_RANDOM_INTEGER)

}  // namespace tessera::random
