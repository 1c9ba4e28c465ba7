// tessera::random: argument checks, the host loops and the dispatch to the CUDA kernels. Both
// evaluate the same philox.hpp functions per element, hence bitwise identical values.
#include "tessera/local/random.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "../detail/random_cuda.hpp"
#include "tessera/config.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/philox.hpp"

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

// True for a CUDA stream, which only a build with the CUDA backend can have.
bool use_cuda(const Stream& s) {
  if (!s.device().is_cuda()) return false;
  if (!TESSERA_HAVE_CUDA)
    throw BackendUnavailable("random: " + s.device().str() + " needs the CUDA backend");
  return true;
}

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
  if (use_cuda(s)) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    detail::cuda::random_uniform(out, n, seed, offset, low, range, top, s.native());
#endif
    return;
  }
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = philox::uniform(philox::block_at(seed, offset + static_cast<std::uint64_t>(i)), low,
                             range, top);
}

template <Real T>
void normal(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
            std::type_identity_t<T> mean, std::type_identity_t<T> stddev, const Stream& s) {
  check_output("normal", out, n, s);
  if (!std::isfinite(mean)) invalid("normal", "mean (" + str(mean) + ") must be finite", s);
  if (!(stddev >= 0) || !std::isfinite(stddev))
    invalid("normal", "stddev (" + str(stddev) + ") must be finite and >= 0", s);
  if (n == 0) return;
  if (use_cuda(s)) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    detail::cuda::random_normal(out, n, seed, offset, mean, stddev, s.native());
#endif
    return;
  }
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = philox::normal(philox::block_at(seed, offset + static_cast<std::uint64_t>(i)), mean,
                            stddev);
}

template <Integer T>
void integers(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
              std::type_identity_t<T> low, std::type_identity_t<T> high, const Stream& s) {
  check_output("integers", out, n, s);
  check_less("integers", low, high, s);
  if (n == 0) return;
  // high - low in unsigned arithmetic: exact, as it lies in [1, 2^64).
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  if (use_cuda(s)) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    detail::cuda::random_integers(out, n, seed, offset, low, range, s.native());
#endif
    return;
  }
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = philox::integer(philox::block_at(seed, offset + static_cast<std::uint64_t>(i)), low,
                             range);
}

template void uniform<float>(float*, std::int64_t, std::uint64_t, std::uint64_t, float, float,
                             const Stream&);
template void uniform<double>(double*, std::int64_t, std::uint64_t, std::uint64_t, double, double,
                              const Stream&);
template void normal<float>(float*, std::int64_t, std::uint64_t, std::uint64_t, float, float,
                            const Stream&);
template void normal<double>(double*, std::int64_t, std::uint64_t, std::uint64_t, double, double,
                             const Stream&);
template void integers<std::int32_t>(std::int32_t*, std::int64_t, std::uint64_t, std::uint64_t,
                                     std::int32_t, std::int32_t, const Stream&);
template void integers<std::int64_t>(std::int64_t*, std::int64_t, std::uint64_t, std::uint64_t,
                                     std::int64_t, std::int64_t, const Stream&);

}  // namespace tessera::random
