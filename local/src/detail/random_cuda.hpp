// Internal: the CUDA kernels behind tessera::random, implemented in src/cuda/random.cu and called
// from src/host/random_host.cpp (only in builds with TESSERA_HAVE_CUDA) with validated arguments,
// n > 0, and the target device current. `stream` is a cudaStream_t.
#pragma once
#include <cstdint>

namespace tessera::detail::cuda {
// range = high - low, top = the largest value below high (see philox::uniform).
void random_uniform(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                    float low, float range, float top, void* stream);
void random_uniform(double* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                    double low, double range, double top, void* stream);
void random_normal(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                   float mean, float stddev, void* stream);
void random_normal(double* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                   double mean, double stddev, void* stream);
// range = high - low as an unsigned 64-bit number.
void random_integers(std::int32_t* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                     std::int32_t low, std::uint64_t range, void* stream);
void random_integers(std::int64_t* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                     std::int64_t low, std::uint64_t range, void* stream);
}  // namespace tessera::detail::cuda
