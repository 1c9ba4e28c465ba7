// Internal: the random-fill kernels behind tessera::random, one implementation per backend
// (src/host/random_host.cpp, src/cuda/random.cu), registered in src/common/backends.cpp. Called
// from src/common/random.cpp with validated arguments, n > 0 and the device current; both
// evaluate the same philox.hpp functions per element, hence bitwise identical values.
// `stream` is a cudaStream_t (null on host).
#pragma once
#include <cstdint>

#include "tessera/local/device.hpp"

namespace tessera::detail {

class RandomKernels {
 public:
  virtual ~RandomKernels() = default;
  // range = high - low, top = the largest value below high (see philox::uniform).
  virtual void uniform(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset, float low, float range,
                       float top, void* stream) const = 0;
  virtual void uniform(double* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset, double low,
                       double range, double top, void* stream) const = 0;
  virtual void normal(float* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset, float mean, float stddev,
                      void* stream) const = 0;
  virtual void normal(double* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset, double mean,
                      double stddev, void* stream) const = 0;
  // range = high - low as an unsigned 64-bit number.
  virtual void integers(std::int32_t* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                        std::int32_t low, std::uint64_t range, void* stream) const = 0;
  virtual void integers(std::int64_t* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset,
                        std::int64_t low, std::uint64_t range, void* stream) const = 0;
};

// The kernels of `kind`; BackendUnavailable for a kind this build lacks.
const RandomKernels& random_kernels(DeviceKind kind);
const RandomKernels& host_random();  // for the registry
const RandomKernels& cuda_random();

}  // namespace tessera::detail
