// Internal (CUDA backend): the outermost-axis FFT pass of split cuFFT plans (fft_axis0.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include "fft_store.hpp"

namespace tessera::local::fft::detail {

// Whether a length along the outermost axis has the pass (256, 512, 1024), and whether the
// device gives a block the shared memory it takes (tile_bytes * n: 128 KiB at 1024 with 128-byte
// tiles, which GPUs before sm_80 and sm_86/89 do not).
bool axis0_supported(long long n, int tile_bytes, int device);
// exp(-2 pi i m / n) for m < n, complex float or double, written to a new device allocation the
// caller frees with cudaFree.
void* axis0_twiddles(long long n, bool single);
// One pass: `batch` arrays of n rows, `ld` complex elements apart, `dist` elements apart, down the
// first `cols` columns, from `in` to `out` (either may equal the other), times `scale`, or with
// `spectral` (not null) times store_factor(*spectral, the element's offset from `out`), whose block
// has the rows as axis `row_axis` (axis0::spectral_row_axis; else InvalidArgument);
// `tile_bytes` (64 or 128) the row segment a block takes; `halves` (TESSERA_FFT_HALVES): 32-point
// FFTs in halves where a block's shared memory allows two blocks per SM (axis0::halves_fit).
void axis0_fft_cuda(const void* in, void* out, const void* twiddles, bool single, bool backward, long long n,
                    long long cols, long long ld, long long batch, long long dist, double scale,
                    const StoreParams* spectral, int row_axis, int tile_bytes, bool halves, cudaStream_t s);
// A spectral solve's round trip in place in `data` (the layout of axis0_fft_cuda's): the forward
// pass along the rows, times the factors of `spectral` (its block's axis `row_axis` the rows, else
// InvalidArgument), the backward pass, times `scale`; one read and one write of each column.
void axis0_round_trip_cuda(void* data, const void* twiddles, bool single, long long n, long long cols, long long ld,
                           long long batch, long long dist, double scale, const StoreParams& spectral, int row_axis,
                           int tile_bytes, bool halves, cudaStream_t s);

}  // namespace tessera::local::fft::detail
