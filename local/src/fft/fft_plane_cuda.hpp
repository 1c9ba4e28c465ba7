// Internal (CUDA backend): the one-kernel 2-D c2c, r2c and c2r FFTs of packed planes (fft_plane.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace tessera::local::fft::detail {

// Whether n1 x n2 planes have the kernel (square, 256, 512 or 1024) and the device gives a block
// the shared memory it takes with `tile_bytes` (64 or 128) row segments.
bool plane_supported(long long n1, long long n2, int tile_bytes, int device);
// The work area of one execution over `batch` planes (its counters; zeroed on the stream by each).
std::size_t plane_work_bytes(long long batch);
// `batch` packed n x n planes of complex float (`single`) or double from `in` to `out` (either may
// equal the other), times `scale`; `twiddles` from axis0_twiddles(n); `halves` as the axis pass's
// (TESSERA_FFT_HALVES); `work` plane_work_bytes(batch) bytes that no other execution uses at the
// same time.
void plane_fft_cuda(const void* in, void* out, const void* twiddles, bool single, bool backward, long long n,
                    long long batch, double scale, int tile_bytes, bool halves, void* work, cudaStream_t s);
// The r2c forward of `batch` packed n x n real planes (rows of n reals, or of 2 (n/2 + 1) in place)
// of float (`single`) or double from `in` to `out` (n rows of n/2 + 1 complex each; `in` aligned to
// the complex type), times `scale`; the rest as plane_fft_cuda's. Square planes of 256, 512 or
// 1024 (plane_supported).
void plane_r2c_fft_cuda(const void* in, void* out, const void* twiddles, bool single, long long n, long long batch,
                        bool in_place, double scale, int tile_bytes, bool halves, void* work, cudaStream_t s);
// The c2r backward of `batch` packed planes of n rows of n/2 + 1 complex at `in`, which it
// overwrites, to n real rows of n (or, in place, 2 (n/2 + 1)) at `out`, times `scale`; the rest as
// plane_r2c_fft_cuda's.
void plane_c2r_fft_cuda(void* in, void* out, const void* twiddles, bool single, long long n, long long batch,
                        bool in_place, double scale, int tile_bytes, bool halves, void* work, cudaStream_t s);

}  // namespace tessera::local::fft::detail
