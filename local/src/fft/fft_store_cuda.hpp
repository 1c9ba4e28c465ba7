// Internal (CUDA backend): the kernels behind store-multiplying cuFFT plans (fft_store.cu)
// and the embedded LTO-IR of their callbacks (generated from fft_callbacks.cu).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "fft_store.hpp"

namespace tessera::local::fft::detail {

// An output layout: batch, logical dims m (1 beyond rank), embeds, stride, distance.
struct StoreLayout {
  int rank;
  long long batch, m[3], onembed[3], ostride, odist;
};

void store_write_params(StoreParams* slot, const StoreParams& p, cudaStream_t s);
void store_multiply_cuda(void* out, bool real, bool single, const StoreLayout& l, const StoreParams& p,
                         cudaStream_t s);

// The callbacks' fatbin (LTO-IR), or size 0 when the build made none.
extern const unsigned char fft_callbacks_fatbin[];
extern const std::size_t fft_callbacks_fatbin_size;

}  // namespace tessera::local::fft::detail
