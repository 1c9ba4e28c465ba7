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

// One launch's description, of either precision (the entry points' arguments).
struct Pass {
  const void* in;
  void* out;
  const void* tw;
  bool single, backward;
  long long n, cols, ld, batch, dist;
  double scale;
  int tile_bytes;
  bool halves;
};

template <class R>
Args<R> args_of(const Pass& p, const StoreParams& mult, int row_axis) {
  return {static_cast<const Cx<R>*>(p.in), static_cast<Cx<R>*>(p.out), static_cast<const Cx<R>*>(p.tw), p.cols, p.ld,
          p.dist, static_cast<R>(p.scale), p.backward, mult, row_axis};
}

// The checks every mode shares, then the kernel of the pass's precision: `mult` and `row_axis`
// serve the spectral and round-trip modes (their block must have the rows as an axis).
void run_pass(const Pass& p, const StoreParams& mult, int row_axis, Mode mode, cudaStream_t s) {
  if (p.cols <= 0 || p.batch <= 0) return;
  if (p.batch > 65535)
    throw InvalidArgument("fft axis-0 pass: batch " + std::to_string(p.batch) + " exceeds the grid's 65535");
  if (mode != Mode::scaled && (row_axis < 0 || row_axis >= mult.dims))
    throw InvalidArgument("fft axis-0 pass: the spectral factors' block has no axis of the pass's rows (" +
                          std::to_string(p.n) + " rows " + std::to_string(p.ld) + " apart)");
  if (p.single)
    dispatch(args_of<float>(p, mult, row_axis), p.n, p.batch, p.tile_bytes, p.halves, mode, s);
  else
    dispatch(args_of<double>(p, mult, row_axis), p.n, p.batch, p.tile_bytes, p.halves, mode, s);
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
  const Pass pass{in, out, tw, single, backward, n, cols, ld, batch, dist, scale, tile_bytes, halves};
  if (spectral)
    run_pass(pass, *spectral, row_axis, Mode::spectral, s);
  else
    run_pass(pass, StoreParams{}, -1, Mode::scaled, s);
}

void axis0_round_trip_cuda(void* data, const void* tw, bool single, long long n, long long cols, long long ld,
                           long long batch, long long dist, double scale, const StoreParams& spectral, int row_axis,
                           int tile_bytes, bool halves, cudaStream_t s) {
  const Pass pass{data, data, tw, single, false, n, cols, ld, batch, dist, scale, tile_bytes, halves};
  run_pass(pass, spectral, row_axis, Mode::round_trip, s);
}

}  // namespace tessera::local::fft::detail
