// Host side of tessera::random: one Philox block per element, the same philox.hpp conversions
// as the CUDA kernel (hence bitwise identical values).
#include "../detail/random_kernels.hpp"
#include "tessera/local/philox.hpp"

namespace tessera::detail {
namespace {
template <class T, class F>
void fill(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset, F f) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = f(philox::block_at(seed, offset + static_cast<std::uint64_t>(i)));
}

#define TESSERA_RANDOM_ARGS std::int64_t n, std::uint64_t seed, std::uint64_t offset
class HostRandom final : public RandomKernels {
 public:
  void uniform(float* o, TESSERA_RANDOM_ARGS, float low, float range, float top, void*) const override {
    fill(o, n, seed, offset, [=](const philox::Block& b) { return philox::uniform(b, low, range, top); });
  }
  void uniform(double* o, TESSERA_RANDOM_ARGS, double low, double range, double top, void*) const override {
    fill(o, n, seed, offset, [=](const philox::Block& b) { return philox::uniform(b, low, range, top); });
  }
  void normal(float* o, TESSERA_RANDOM_ARGS, float mean, float stddev, void*) const override {
    fill(o, n, seed, offset, [=](const philox::Block& b) { return philox::normal(b, mean, stddev); });
  }
  void normal(double* o, TESSERA_RANDOM_ARGS, double mean, double stddev, void*) const override {
    fill(o, n, seed, offset, [=](const philox::Block& b) { return philox::normal(b, mean, stddev); });
  }
  void integers(std::int32_t* o, TESSERA_RANDOM_ARGS, std::int32_t low, std::uint64_t range, void*) const override {
    fill(o, n, seed, offset, [=](const philox::Block& b) { return philox::integer(b, low, range); });
  }
  void integers(std::int64_t* o, TESSERA_RANDOM_ARGS, std::int64_t low, std::uint64_t range, void*) const override {
    fill(o, n, seed, offset, [=](const philox::Block& b) { return philox::integer(b, low, range); });
  }
};
#undef TESSERA_RANDOM_ARGS
}  // namespace

const RandomKernels& host_random() {
  static const HostRandom k;
  return k;
}
}  // namespace tessera::detail
