// The outermost-axis FFT pass (the algorithm and its layout: fft_axis0.hpp).
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "fft_axis0.hpp"
#include "fft_axis0_cuda.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/error.hpp"

namespace tessera::local::fft::detail {
namespace {
using axis0::Args;
using axis0::Cx;

// A block's shared memory: its C columns of all P*Q rows.
template <class R, int P, int Q, int C>
constexpr int smem_bytes() { return C * P * Q * static_cast<int>(sizeof(Cx<R>)); }

// Two blocks to an SM (one computes while the other loads) where shared memory and registers
// allow it: 64 KiB or less, and a register cap that holds the values a thread keeps at once (H:
// its 32-point FFTs in halves).
template <class R, int P, int Q, int C, bool H>
constexpr int min_blocks() {
  return smem_bytes<R, P, Q, C>() <= 65536 && axis0::two_blocks_fit_registers<R, P, Q, H>(C * P) ? 2 : 1;
}

// What a block does after phase 1: stores times the scale, times the spectral factors, or the
// round trip (the factors, the backward FFT, then stores times the scale).
enum class Mode { scaled, spectral, round_trip };

template <class R, int P, int Q, int C, Mode M, bool H>
__global__ void __launch_bounds__(C * P, (min_blocks<R, P, Q, C, H>())) axis0_kernel(Args<R> a) {
  extern __shared__ __align__(16) unsigned char raw[];
  auto* sh = reinterpret_cast<Cx<R>*>(raw);
  const long long col0 = static_cast<long long>(blockIdx.x) * C;
  axis0::phase1<R, P, Q, C, false, H>(threadIdx.x, col0, blockIdx.y, a, sh);
  __syncthreads();
  if constexpr (M == Mode::round_trip) {
    axis0::phase2_round_trip<R, P, Q, C, H>(threadIdx.x, col0, blockIdx.y, a, sh);
    __syncthreads();
    axis0::phase3_round_trip<R, P, Q, C, H>(threadIdx.x, col0, blockIdx.y, a, sh);
  } else {
    axis0::phase2<R, P, Q, C, M == Mode::spectral, H>(threadIdx.x, col0, blockIdx.y, a, sh);
  }
}

template <class R, int P, int Q, int C, Mode M, bool H>
void launch_kernel(const Args<R>& a, long long batch, cudaStream_t s) {
  constexpr int smem = smem_bytes<R, P, Q, C>();
  // Beyond 48 KiB needs the opt-in, which is per device: set on every launch (a host-side call).
  TESSERA_CHECK_CUDA(
      cudaFuncSetAttribute(axis0_kernel<R, P, Q, C, M, H>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(static_cast<unsigned>((a.cols + C - 1) / C), static_cast<unsigned>(batch));
  axis0_kernel<R, P, Q, C, M, H><<<grid, C * P, smem, s>>>(a);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

// `halves` (TESSERA_FFT_HALVES) where the block's shared memory allows it, else whole FFTs.
template <class R, int P, int Q, int C, Mode M>
void launch(const Args<R>& a, long long batch, bool halves, cudaStream_t s) {
  if constexpr (axis0::halves_fit<R, P, Q, C>())
    if (halves) return launch_kernel<R, P, Q, C, M, true>(a, batch, s);
  launch_kernel<R, P, Q, C, M, false>(a, batch, s);
}

template <class R, int C, Mode M>
void dispatch_n(const Args<R>& a, long long n, long long batch, bool halves, cudaStream_t s) {
  switch (n) {
    case 1024: return launch<R, 32, 32, C, M>(a, batch, halves, s);
    case 512: return launch<R, 32, 16, C, M>(a, batch, halves, s);
    case 256: return launch<R, 16, 16, C, M>(a, batch, halves, s);
  }
  throw InvalidArgument("fft axis-0 pass: length " + std::to_string(n) + " is not 256, 512 or 1024");
}

template <class R, Mode M>
void dispatch_tile(const Args<R>& a, long long n, long long batch, int tile_bytes, bool halves, cudaStream_t s) {
  constexpr int row = static_cast<int>(sizeof(Cx<R>));
  if (tile_bytes == 64) return dispatch_n<R, 64 / row, M>(a, n, batch, halves, s);
  return dispatch_n<R, 128 / row, M>(a, n, batch, halves, s);
}

template <class R>
void dispatch(const Args<R>& a, long long n, long long batch, int tile_bytes, bool halves, Mode mode,
              cudaStream_t s) {
  switch (mode) {
    case Mode::scaled: return dispatch_tile<R, Mode::scaled>(a, n, batch, tile_bytes, halves, s);
    case Mode::spectral: return dispatch_tile<R, Mode::spectral>(a, n, batch, tile_bytes, halves, s);
    case Mode::round_trip: return dispatch_tile<R, Mode::round_trip>(a, n, batch, tile_bytes, halves, s);
  }
}

// Args of either precision for `dispatch`.
template <class R>
Args<R> args_of(const void* in, void* out, const void* tw, long long cols, long long ld, long long dist,
                double scale, bool backward, const StoreParams& mult, int row_axis) {
  return {static_cast<const Cx<R>*>(in), static_cast<Cx<R>*>(out), static_cast<const Cx<R>*>(tw), cols, ld, dist,
          static_cast<R>(scale), backward, mult, row_axis};
}

void check_batch(long long batch) {
  if (batch > 65535)
    throw InvalidArgument("fft axis-0 pass: batch " + std::to_string(batch) + " exceeds the grid's 65535");
}

void check_row_axis(const StoreParams& mult, int row_axis, long long n, long long ld) {
  if (row_axis < 0 || row_axis >= mult.dims)
    throw InvalidArgument("fft axis-0 pass: the spectral factors' block has no axis of the pass's rows (" +
                          std::to_string(n) + " rows " + std::to_string(ld) + " apart)");
}

template <class R>
void* twiddles(long long n) {
  const std::vector<Cx<R>> t = axis0::twiddle_table<R>(n);
  void* d = nullptr;
  TESSERA_CHECK_CUDA(cudaMalloc(&d, n * sizeof(Cx<R>)));
  // A pageable cudaMemcpy returns once the data is staged, maybe before its DMA has landed, and
  // the pass runs on non-blocking streams, which do not wait for the legacy stream: wait for it
  // here. (Unwaited, a first backward under load read stale twiddles: the rows with k2 > 0 wrong.)
  cudaError_t e = cudaMemcpy(d, t.data(), n * sizeof(Cx<R>), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamLegacy);
  if (e != cudaSuccess) (void)cudaFree(d);
  TESSERA_CHECK_CUDA(e);
  return d;
}
}  // namespace

bool axis0_supported(long long n, int tile_bytes, int device) {
  if (axis0::factor_p(n) == 0) return false;
  int most = 0;
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<long long>(tile_bytes) * n <= most;
}

void* axis0_twiddles(long long n, bool single) { return single ? twiddles<float>(n) : twiddles<double>(n); }

void axis0_fft_cuda(const void* in, void* out, const void* tw, bool single, bool backward, long long n,
                    long long cols, long long ld, long long batch, long long dist, double scale,
                    const StoreParams* spectral, int row_axis, int tile_bytes, bool halves, cudaStream_t s) {
  if (cols <= 0 || batch <= 0) return;
  check_batch(batch);
  const StoreParams mult = spectral ? *spectral : StoreParams{};
  if (spectral) check_row_axis(mult, row_axis, n, ld);
  const Mode mode = spectral ? Mode::spectral : Mode::scaled;
  if (single)
    dispatch(args_of<float>(in, out, tw, cols, ld, dist, scale, backward, mult, row_axis), n, batch, tile_bytes,
             halves, mode, s);
  else
    dispatch(args_of<double>(in, out, tw, cols, ld, dist, scale, backward, mult, row_axis), n, batch, tile_bytes,
             halves, mode, s);
}

void axis0_round_trip_cuda(void* data, const void* tw, bool single, long long n, long long cols, long long ld,
                           long long batch, long long dist, double scale, const StoreParams& spectral, int row_axis,
                           int tile_bytes, bool halves, cudaStream_t s) {
  if (cols <= 0 || batch <= 0) return;
  check_batch(batch);
  check_row_axis(spectral, row_axis, n, ld);
  if (single)
    dispatch(args_of<float>(data, data, tw, cols, ld, dist, scale, false, spectral, row_axis), n, batch, tile_bytes,
             halves, Mode::round_trip, s);
  else
    dispatch(args_of<double>(data, data, tw, cols, ld, dist, scale, false, spectral, row_axis), n, batch, tile_bytes,
             halves, Mode::round_trip, s);
}

}  // namespace tessera::local::fft::detail
