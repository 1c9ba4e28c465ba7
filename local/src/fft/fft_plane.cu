// The 2-D c2c FFT of packed square planes in one kernel (the algorithm, its tasks and why they
// deadlock in no order: fft_plane.hpp).
#include <cuda_runtime_api.h>

#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "fft_plane.hpp"
#include "fft_plane_cuda.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/expr/tree.hpp"  // multiprocessor_count

namespace tessera::local::fft::detail {
namespace {
using axis0::Cx;

template <int P, int Q, int C>
constexpr int block_threads() { return C * P; }

// Shared memory: a column task's C columns of P*Q rows, or a row task's C padded rows.
template <class R, int P, int Q, int C>
constexpr int smem_bytes() {
  return std::max(C * P * Q, plane::row_tile_elements<P, Q, C>()) * static_cast<int>(sizeof(Cx<R>));
}

__device__ unsigned rows_done(unsigned* count) {
  return cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*count).load(cuda::memory_order_acquire);
}

// With H (32-point FFTs in halves), two blocks to an SM where the register cap holds a thread's
// values, as in the axis pass (their shared memory, about 66 KiB each, fits twice); without, no
// second argument to ptxas (an explicit 1 made it give the 256^2 block 80 registers, not 54).
template <class R, int P, int Q, int C, bool H>
__global__ void __launch_bounds__(block_threads<P, Q, C>(),
                                  (H && axis0::two_blocks_fit_registers<R, P, Q, true>(block_threads<P, Q, C>()) ? 2 : 0))
    plane_kernel(plane::Args<R> a, unsigned long long* next, unsigned* done) {
  extern __shared__ __align__(16) unsigned char raw[];
  auto* sh = reinterpret_cast<Cx<R>*>(raw);
  __shared__ unsigned long long ticket;
  const long long tiles = a.n1 / C, total = a.batch * 2 * tiles;  // square: as many row tiles as column tiles
  for (;;) {
    if (threadIdx.x == 0) ticket = atomicAdd(next, 1ull);
    __syncthreads();
    const long long t = static_cast<long long>(ticket);
    if (t >= total) return;
    const plane::Task task = plane::plane_task(t, a.batch, tiles, tiles);
    if (!task.columns) {
      plane::rows_phase1<R, P, Q, C, H>(threadIdx.x, task.plane, task.tile * C, a, sh);
      __syncthreads();
      plane::rows_phase2<R, P, Q, C, H>(threadIdx.x, task.plane, task.tile * C, a, sh);
      __threadfence();  // every thread's rows are visible before the count says so
      __syncthreads();
      if (threadIdx.x == 0)
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(done[task.plane])
            .fetch_add(1u, cuda::memory_order_release);
    } else {
      if (threadIdx.x == 0)
        while (rows_done(&done[task.plane]) < tiles) __nanosleep(64);
      __syncthreads();
      const axis0::Args<R> col = plane::column_args(a, task.plane);
      axis0::phase1<R, P, Q, C, true, H>(threadIdx.x, task.tile * C, 0, col, sh);
      __syncthreads();
      axis0::phase2<R, P, Q, C, false, H>(threadIdx.x, task.tile * C, 0, col, sh);
      __syncthreads();  // the shared memory and the ticket are reused by the next task
    }
  }
}

// How many blocks of `kernel` fit on one device at once; the shared-memory opt-in beyond 48 KiB,
// which is per device, is set when a device is first asked (these are host calls of microseconds,
// once per device and kernel rather than on every execution of a small plan).
template <auto kernel, int smem, int threads>
long long resident_blocks(int device) {
  static std::mutex mu;
  static std::vector<long long> fit;  // by device; 0: not asked yet
  std::lock_guard<std::mutex> lock(mu);
  if (device >= static_cast<int>(fit.size())) fit.resize(device + 1, 0);
  if (fit[device] > 0) return fit[device];
  TESSERA_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  TESSERA_CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  if (per_sm < 1)
    throw InvalidArgument("fft plane kernel: a block of " + std::to_string(threads) + " threads and " +
                          std::to_string(smem) + " bytes of shared memory does not fit on device " +
                          std::to_string(device));
  fit[device] = static_cast<long long>(per_sm) * local::detail::multiprocessor_count(device);
  return fit[device];
}

// Persistent blocks of `kernel` over `tasks` tasks of `batch` planes, as many as fit at once (more
// would only queue behind them), with the work area's counters zeroed first: the next ticket,
// then each plane's finished row tasks.
template <auto kernel, int smem, int threads, class A>
void launch_persistent(const A& a, long long tasks, void* work, cudaStream_t s) {
  int device = 0;
  TESSERA_CHECK_CUDA(cudaGetDevice(&device));
  const auto grid = static_cast<unsigned>(std::min<long long>(tasks, resident_blocks<kernel, smem, threads>(device)));
  TESSERA_CHECK_CUDA(cudaMemsetAsync(work, 0, plane_work_bytes(a.batch), s));
  auto* next = static_cast<unsigned long long*>(work);
  kernel<<<grid, threads, smem, s>>>(a, next, reinterpret_cast<unsigned*>(next + 1));
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

template <class R, int P, int Q, int C, bool H>
void launch_kernel(const plane::Args<R>& a, void* work, cudaStream_t s) {
  launch_persistent<plane_kernel<R, P, Q, C, H>, smem_bytes<R, P, Q, C>(), block_threads<P, Q, C>()>(
      a, a.batch * 2 * (a.n1 / C), work, s);
}

// ---- r2c and c2r planes (fft_plane.hpp): row tasks of C real rows (M-point FFTs and the
// untangling), column tasks of C of the M + 1 spectrum columns; r2c takes a plane's rows first, c2r
// its columns. Square planes n x n, n = P * Q. The loop is the c2c kernel's, written out again
// rather than shared: the c2c kernel's code stays as it was measured (a shared helper changed its
// register counts).
template <class A, class R, int P, int Q, int C>
constexpr int real_smem_bytes() {
  constexpr int P2 = plane::r2c_p2(P * Q), Q2 = plane::r2c_q2(P * Q);
  constexpr int rows = std::is_same_v<A, plane::R2cArgs<R>> ? plane::r2c_row_tile_elements<P2, Q2, C>()
                                                            : plane::c2r_row_tile_elements<P2, Q2, C>();
  return std::max(C * P * Q, rows) * static_cast<int>(sizeof(Cx<R>));
}

// A row task of real plane p (rows [row0, row0 + C)): three phases between barriers.
template <class A, class R, int P2, int Q2, int C>
__device__ void real_rows(long long p, long long row0, const A& a, Cx<R>* sh) {
  if constexpr (std::is_same_v<A, plane::R2cArgs<R>>) {
    plane::r2c_rows_phase1<R, P2, Q2, C>(threadIdx.x, p, row0, a, sh);
    __syncthreads();
    plane::r2c_rows_phase2<R, P2, Q2, C>(threadIdx.x, a, sh);
    __syncthreads();
    plane::r2c_rows_phase3<R, P2, Q2, C>(threadIdx.x, blockDim.x, p, row0, a, sh);
  } else {
    plane::c2r_rows_phase1<R, P2, Q2, C>(threadIdx.x, blockDim.x, p, row0, a, sh);
    __syncthreads();
    plane::c2r_rows_phase2<R, P2, Q2, C>(threadIdx.x, a, sh);
    __syncthreads();
    plane::c2r_rows_phase3<R, P2, Q2, C>(threadIdx.x, p, row0, a, sh);
  }
}

// A column task of real plane p: the c2c phases over its spectrum's columns [col0, col0 + C)
// (r2c's read what this kernel's row tasks wrote: from L2).
template <class A, class R, int P, int Q, int C, bool H>
__device__ void real_columns(long long p, long long col0, const A& a, Cx<R>* sh) {
  constexpr bool r2c = std::is_same_v<A, plane::R2cArgs<R>>;
  axis0::Args<R> col;
  if constexpr (r2c) col = plane::r2c_column_args(a, p);
  else col = plane::c2r_column_args(a, p);
  axis0::phase1<R, P, Q, C, r2c, H>(threadIdx.x, col0, 0, col, sh);
  __syncthreads();
  axis0::phase2<R, P, Q, C, false, H>(threadIdx.x, col0, 0, col, sh);
}

template <class A, class R, int P, int Q, int C, bool H>
__global__ void __launch_bounds__(block_threads<P, Q, C>(),
                                  (H && axis0::two_blocks_fit_registers<R, P, Q, true>(block_threads<P, Q, C>()) ? 2 : 0))
    plane_real_kernel(A a, unsigned long long* next, unsigned* done) {
  constexpr bool r2c = std::is_same_v<A, plane::R2cArgs<R>>;
  constexpr int P2 = plane::r2c_p2(P * Q), Q2 = plane::r2c_q2(P * Q);
  extern __shared__ __align__(16) unsigned char raw[];
  auto* sh = reinterpret_cast<Cx<R>*>(raw);
  __shared__ unsigned long long ticket;
  const long long row_tiles = a.n1 / C, col_tiles = plane::spectrum_tiles(a.n2, C);
  const long long first = r2c ? row_tiles : col_tiles, second = r2c ? col_tiles : row_tiles;
  const long long total = a.batch * (row_tiles + col_tiles);
  for (;;) {
    if (threadIdx.x == 0) ticket = atomicAdd(next, 1ull);
    __syncthreads();
    const long long t = static_cast<long long>(ticket);
    if (t >= total) return;
    const plane::Task task = plane::plane_task(t, a.batch, first, second);
    if (!task.columns) {  // the first stage: r2c's rows, c2r's columns
      if constexpr (r2c) real_rows<A, R, P2, Q2, C>(task.plane, task.tile * C, a, sh);
      else real_columns<A, R, P, Q, C, H>(task.plane, task.tile * C, a, sh);
      __threadfence();  // every thread's stores are visible before the count says so
      __syncthreads();
      if (threadIdx.x == 0)
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(done[task.plane])
            .fetch_add(1u, cuda::memory_order_release);
    } else {
      if (threadIdx.x == 0)
        while (rows_done(&done[task.plane]) < first) __nanosleep(64);
      __syncthreads();
      if constexpr (r2c) real_columns<A, R, P, Q, C, H>(task.plane, task.tile * C, a, sh);
      else real_rows<A, R, P2, Q2, C>(task.plane, task.tile * C, a, sh);
      __syncthreads();  // the shared memory and the ticket are reused by the next task
    }
  }
}

template <class R, int P, int Q, int C, bool H, template <class> class A>
  requires(std::is_same_v<A<R>, plane::R2cArgs<R>> || std::is_same_v<A<R>, plane::C2rArgs<R>>)
void launch_kernel(const A<R>& a, void* work, cudaStream_t s) {
  launch_persistent<plane_real_kernel<A<R>, R, P, Q, C, H>, real_smem_bytes<A<R>, R, P, Q, C>(),
                    block_threads<P, Q, C>()>(a, a.batch * (a.n1 / C + plane::spectrum_tiles(a.n2, C)), work, s);
}

// `halves` (TESSERA_FFT_HALVES) where the blocks' shared memory allows it (axis0::halves_fit); A
// is the kind of planes (plane::Args: c2c, plane::R2cArgs: r2c, plane::C2rArgs: c2r), which picks
// the kernel.
template <int P, int Q, int C, template <class> class A, class R>
void launch(const A<R>& a, bool halves, void* work, cudaStream_t s) {
  if constexpr (axis0::halves_fit<R, P, Q, C>())
    if (halves) return launch_kernel<R, P, Q, C, true>(a, work, s);
  launch_kernel<R, P, Q, C, false>(a, work, s);
}

template <int C, template <class> class A, class R>
void dispatch_n(const A<R>& a, bool halves, void* work, cudaStream_t s) {
  switch (a.n1) {
    case 1024: return launch<32, 32, C>(a, halves, work, s);
    case 512: return launch<32, 16, C>(a, halves, work, s);
    case 256: return launch<16, 16, C>(a, halves, work, s);
  }
  throw InvalidArgument("fft plane kernel: planes of " + std::to_string(a.n1) + " x " + std::to_string(a.n2) +
                        " (256, 512 or 1024 only)");
}

template <template <class> class A, class R>
void dispatch(const A<R>& a, int tile_bytes, bool halves, void* work, cudaStream_t s) {
  constexpr int row = static_cast<int>(sizeof(Cx<R>));
  if (a.n1 != a.n2)
    throw InvalidArgument("fft plane kernel: planes of " + std::to_string(a.n1) + " x " + std::to_string(a.n2) +
                          " (square planes only)");
  if (tile_bytes == 64) return dispatch_n<64 / row>(a, halves, work, s);
  dispatch_n<128 / row>(a, halves, work, s);
}
}  // namespace

bool plane_supported(long long n1, long long n2, int tile_bytes, int device) {
  if (n1 != n2 || axis0::factor_p(n1) == 0) return false;
  int most = 0;
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // The padded row tiles' shared memory (fft_plane.hpp), the larger of the two kinds of task.
  const long long row = tile_bytes * (n1 + n1 / axis0::factor_p(n1));
  return row <= most;
}

std::size_t plane_work_bytes(long long batch) {
  return static_cast<std::size_t>(sizeof(unsigned long long) + sizeof(unsigned) * std::max<long long>(batch, 1));
}

void plane_fft_cuda(const void* in, void* out, const void* tw, bool single, bool backward, long long n,
                    long long batch, double scale, int tile_bytes, bool halves, void* work, cudaStream_t s) {
  if (batch <= 0) return;
  if (single) {
    const auto* t = static_cast<const Cx<float>*>(tw);
    dispatch(plane::Args<float>{static_cast<const Cx<float>*>(in), static_cast<Cx<float>*>(out), t, t, n, n, batch,
                                backward, static_cast<float>(scale)},
             tile_bytes, halves, work, s);
  } else {
    const auto* t = static_cast<const Cx<double>*>(tw);
    dispatch(plane::Args<double>{static_cast<const Cx<double>*>(in), static_cast<Cx<double>*>(out), t, t, n, n,
                                 batch, backward, scale},
             tile_bytes, halves, work, s);
  }
}

void plane_r2c_fft_cuda(const void* in, void* out, const void* tw, bool single, long long n, long long batch,
                        bool in_place, double scale, int tile_bytes, bool halves, void* work, cudaStream_t s) {
  if (batch <= 0) return;
  const long long in_ld = in_place ? 2 * (n / 2 + 1) : n;
  // The rows are read as pairs of reals: each row must start on a complex element.
  if (reinterpret_cast<std::uintptr_t>(in) % (single ? sizeof(Cx<float>) : sizeof(Cx<double>)) != 0)
    throw InvalidArgument("fft r2c plane kernel: real input not aligned to its complex type");
  if (single) {
    const auto* t = static_cast<const Cx<float>*>(tw);
    dispatch(plane::R2cArgs<float>{static_cast<const float*>(in), static_cast<Cx<float>*>(out), t, t, n, n, batch,
                                   in_ld, static_cast<float>(scale)},
             tile_bytes, halves, work, s);
  } else {
    const auto* t = static_cast<const Cx<double>*>(tw);
    dispatch(plane::R2cArgs<double>{static_cast<const double*>(in), static_cast<Cx<double>*>(out), t, t, n, n, batch,
                                    in_ld, scale},
             tile_bytes, halves, work, s);
  }
}

void plane_c2r_fft_cuda(void* in, void* out, const void* tw, bool single, long long n, long long batch,
                        bool in_place, double scale, int tile_bytes, bool halves, void* work, cudaStream_t s) {
  if (batch <= 0) return;
  const long long out_ld = in_place ? 2 * (n / 2 + 1) : n;
  if (single) {
    const auto* t = static_cast<const Cx<float>*>(tw);
    dispatch(plane::C2rArgs<float>{static_cast<Cx<float>*>(in), static_cast<float*>(out), t, t, n, n, batch, out_ld,
                                   static_cast<float>(scale)},
             tile_bytes, halves, work, s);
  } else {
    const auto* t = static_cast<const Cx<double>*>(tw);
    dispatch(plane::C2rArgs<double>{static_cast<Cx<double>*>(in), static_cast<double*>(out), t, t, n, n, batch,
                                    out_ld, scale},
             tile_bytes, halves, work, s);
  }
}

}  // namespace tessera::local::fft::detail
