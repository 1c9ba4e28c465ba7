// Counter-based random numbers into raw memory on any device. Element i of `out` gets the value
// for counter `offset + i` of the stream `seed` (Philox4x32-10; the mapping is in philox.hpp), so
// a sharded array that passes the global flat index of its first element as `offset` gets the
// same values whatever the rank count, and host and CUDA give bitwise identical results.
// Work is ordered on `s` (host: done on return); `out` must live on `s.device()`.
// Invalid arguments (n < 0, low >= high, stddev < 0, non-finite values) throw InvalidArgument.
#pragma once
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "tessera/local/stream.hpp"

namespace tessera::random {

/// The element types each generator fills.
template <class T>
concept Real = std::same_as<T, float> || std::same_as<T, double>;
template <class T>
concept Integer = std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

/// Uniform in [low, high): a value that would round up to `high` is moved just below it.
/// high - low must be finite.
template <Real T>
void uniform(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
             std::type_identity_t<T> low, std::type_identity_t<T> high, const Stream& s);

/// Normal with the given mean and standard deviation (Box-Muller).
template <Real T>
void normal(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
            std::type_identity_t<T> mean, std::type_identity_t<T> stddev, const Stream& s);

/// Uniform integers in [low, high) (bias < 2^-64 per value).
template <Integer T>
void integers(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
              std::type_identity_t<T> low, std::type_identity_t<T> high, const Stream& s);

}  // namespace tessera::random
