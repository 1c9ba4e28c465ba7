// The CUDA kernels of algorithms.hpp (detail/algo_kernels.hpp): the only CUB translation unit of
// the distributed layer (radix sort, device and block scans), instantiated explicitly for the
// element types the public functions take.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/std/complex>
#include <cuda/std/limits>
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "../detail/algo_kernels.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::distributed::detail::cuda {
namespace {
template <class T> struct dev { using type = T; };
template <class R> struct dev<std::complex<R>> { using type = ::cuda::std::complex<R>; };
template <class T> using dev_t = typename dev<T>::type;
template <class T> dev_t<T>* d(T* p) { return reinterpret_cast<dev_t<T>*>(p); }
template <class T> const dev_t<T>* d(const T* p) { return reinterpret_cast<const dev_t<T>*>(p); }

unsigned blocks_for(index_t n, int threads) {
  const index_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}
#define TESSERA_GRID_LOOP(i, n) \
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += static_cast<index_t>(gridDim.x) * blockDim.x)

// Stream-ordered scratch (the device's current memory pool) for CUB's temporary storage.
struct Scratch {
  void* p = nullptr;
  cudaStream_t s;
  Scratch(std::size_t bytes, cudaStream_t st) : s(st) { TESSERA_CHECK_CUDA(cudaMallocAsync(&p, bytes ? bytes : 1, s)); }
  ~Scratch() { cudaFreeAsync(p, s); }
};

// Radix sort orders -NaN first and +NaN last, -0.0 before +0.0: make NaNs +NaN (numpy: last) and,
// for argsort's ties, -0.0 +0.0.
template <class T> __global__ void canonicalize(const T* in, T* k, index_t n, bool zeros) {
  TESSERA_GRID_LOOP(i, n) {
    const T v = in[i];
    k[i] = v != v ? ::cuda::std::numeric_limits<T>::quiet_NaN() : zeros && v == T(0) ? T(0) : v;
  }
}

template <class T> __global__ void split_kernel(const T* keys, index_t n, const T* sk, const int* sr, const index_t* sp,
                                                int ns, int me, index_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ns) out[i] = split_point(keys, n, sk[i], sr[i], sp[i], me);
}

struct Add {
  template <class T> __device__ T operator()(const T& a, const T& b) const { return a + b; }
};
struct Mul {
  template <class T> __device__ T operator()(const T& a, const T& b) const { return a * b; }
};

// One block per row of a [rows, len] block: tiles of kThreads scanned by BlockScan, the running
// total carried from tile to tile.
constexpr int kThreads = 256;
template <class T, class Op> __global__ void scan_rows(const T* in, T* data, index_t len, Op op) {
  using Scan = cub::BlockScan<T, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ cub::Uninitialized<T> carry_storage;  // (complex types have constructors)
  T& carry = carry_storage.Alias();
  const T* src = in + static_cast<index_t>(blockIdx.x) * len;
  T* row = data + static_cast<index_t>(blockIdx.x) * len;
  for (index_t base = 0; base < len; base += kThreads) {
    const index_t i = base + threadIdx.x;
    T v = i < len ? src[i] : T(0);
    T total;
    Scan(tmp).InclusiveScan(v, v, op, total);
    if (base > 0) v = op(carry, v);
    if (i < len) row[i] = v;
    __syncthreads();
    if (threadIdx.x == 0) carry = base > 0 ? op(carry, total) : total;
    __syncthreads();
  }
}
// One thread per (outer, inner) column, walking along the axis (coalesced across inner).
template <class T, class Op>
__global__ void scan_columns(const T* in, T* data, index_t outer, index_t len, index_t inner, Op op) {
  TESSERA_GRID_LOOP(c, outer * inner) {
    const index_t at = (c / inner) * len * inner + c % inner;
    const T* q = in + at;
    T* p = data + at;
    T acc = q[0];
    p[0] = acc;
    for (index_t i = 1; i < len; ++i) p[i * inner] = acc = op(acc, q[i * inner]);
  }
}
template <class T, class Op>
__global__ void offset_kernel(T* data, const T* off, index_t outer, index_t len, index_t inner, Op op) {
  TESSERA_GRID_LOOP(e, outer * len * inner) {
    const index_t j = e % inner, o = e / (len * inner);
    data[e] = op(off[o * inner + j], data[e]);
  }
}
template <class T, class Op> __global__ void fold_kernel(const T* parts, int upto, index_t m, T id, Op op, T* out) {
  TESSERA_GRID_LOOP(j, m) {
    T acc = id;
    for (int c = 0; c < upto; ++c) acc = op(acc, parts[c * m + j]);
    out[j] = acc;
  }
}

template <class T, class Op>
void scan_with(const T* in, T* data, index_t outer, index_t len, index_t inner, Op op, cudaStream_t s) {
  if (outer == 1 && inner == 1) {  // one long run: CUB's single-pass decoupled look-back scan
    std::size_t bytes = 0;
    TESSERA_CHECK_CUDA(cub::DeviceScan::InclusiveScan(nullptr, bytes, in, data, op, len, s));
    Scratch tmp(bytes, s);
    TESSERA_CHECK_CUDA(cub::DeviceScan::InclusiveScan(tmp.p, bytes, in, data, op, len, s));
  } else if (inner == 1) {
    for (index_t r = 0; r < outer; r += 65535)
      scan_rows<T, Op><<<static_cast<unsigned>(outer - r < 65535 ? outer - r : 65535), kThreads, 0, s>>>(
          in + r * len, data + r * len, len, op);
  } else {
    scan_columns<T, Op><<<blocks_for(outer * inner, kThreads), kThreads, 0, s>>>(in, data, outer, len, inner, op);
  }
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
}  // namespace

template <class T>
int sort(const T* in, T* keys0, T* keys1, index_t* vals0, index_t* vals1, index_t n, bool canonical, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  std::size_t bytes = 0;
  if constexpr (T(0.5) != T(0)) {  // floats: the copy from `in` is the canonicalizing pass
    canonicalize<<<blocks_for(n, kThreads), kThreads, 0, s>>>(in ? in : keys0, keys0, n, canonical);
    TESSERA_CHECK_CUDA(cudaGetLastError());
  } else if (in && !vals0) {  // integers from `in`: an out-of-place sort, no copy pass
    TESSERA_CHECK_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, in, keys0, n, 0, int(sizeof(T) * 8), s));
    Scratch tmp(bytes, s);
    TESSERA_CHECK_CUDA(cub::DeviceRadixSort::SortKeys(tmp.p, bytes, in, keys0, n, 0, int(sizeof(T) * 8), s));
    return 0;
  } else if (in) {
    TESSERA_CHECK_CUDA(cudaMemcpyAsync(keys0, in, n * sizeof(T), cudaMemcpyDeviceToDevice, s));
  }
  cub::DoubleBuffer<T> k(keys0, keys1);
  if (vals0) {
    cub::DoubleBuffer<index_t> v(vals0, vals1);
    TESSERA_CHECK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, n, 0, int(sizeof(T) * 8), s));
    Scratch tmp(bytes, s);
    TESSERA_CHECK_CUDA(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, k, v, n, 0, int(sizeof(T) * 8), s));
    if (k.selector != v.selector)  // (CUB moves both together; kept as a guard)
      TESSERA_CHECK_CUDA(cudaMemcpyAsync(v.selector ? vals0 : vals1, v.Current(), n * sizeof(index_t),
                                         cudaMemcpyDeviceToDevice, s));
  } else {
    TESSERA_CHECK_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, k, n, 0, int(sizeof(T) * 8), s));
    Scratch tmp(bytes, s);
    TESSERA_CHECK_CUDA(cub::DeviceRadixSort::SortKeys(tmp.p, bytes, k, n, 0, int(sizeof(T) * 8), s));
  }
  return k.selector;
}

template <class T>
void split_points(const T* keys, index_t n, const T* sk, const int* sr, const index_t* sp, int ns, int me,
                  index_t* out, void* stream) {
  split_kernel<<<(ns + 127) / 128, 128, 0, static_cast<cudaStream_t>(stream)>>>(keys, n, sk, sr, sp, ns, me, out);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

template <class T>
void scan(const T* in, T* data, index_t outer, index_t len, index_t inner, bool prod, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (prod) scan_with(d(in), d(data), outer, len, inner, Mul{}, s);
  else scan_with(d(in), d(data), outer, len, inner, Add{}, s);
}
template <class T>
void scan_offset(T* data, const T* off, index_t outer, index_t len, index_t inner, bool prod, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned b = blocks_for(outer * len * inner, kThreads);
  if (prod) offset_kernel<<<b, kThreads, 0, s>>>(d(data), d(off), outer, len, inner, Mul{});
  else offset_kernel<<<b, kThreads, 0, s>>>(d(data), d(off), outer, len, inner, Add{});
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
template <class T> void scan_fold(const T* parts, int upto, index_t m, bool prod, T* out, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  using D = dev_t<T>;
  if (prod) fold_kernel<<<blocks_for(m, kThreads), kThreads, 0, s>>>(d(parts), upto, m, D(1), Mul{}, d(out));
  else fold_kernel<<<blocks_for(m, kThreads), kThreads, 0, s>>>(d(parts), upto, m, D(0), Add{}, d(out));
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

namespace {
__global__ void rows_k(const index_t* pos, index_t n, index_t len, index_t inner, index_t* row) {
  TESSERA_GRID_LOOP(q, n) row[q] = row_of(pos[q], len, inner);
}
__global__ void places_k(const index_t* pos, index_t n, index_t len, index_t inner, index_t* dst, index_t* along) {
  TESSERA_GRID_LOOP(q, n) {
    dst[q] = place_of(q, len, inner);
    if (along) along[q] = along_of(pos[q], len, inner);
  }
}
template <class T> __global__ void gather_k(const T* src, const index_t* off, index_t n, T* dst) {
  TESSERA_GRID_LOOP(i, n) dst[i] = src[off[i]];
}
template <class T> __global__ void scatter_k(T* dst, const index_t* off, const T* src, index_t n) {
  TESSERA_GRID_LOOP(i, n) dst[off[i]] = src[i];
}
template <class T> __global__ void flags_k(const T* in, index_t n, bool* flags) {
  TESSERA_GRID_LOOP(i, n) flags[i] = in[i] != T(0);
}
template <class T> __global__ void select_k(const bool* c, const T* x, const T* y, index_t n, T* out) {
  TESSERA_GRID_LOOP(i, n) out[i] = c[i] ? x[i] : y[i];
}
// Few bins: counts in shared memory first (fewer global atomics); many: straight to global.
template <class T> __global__ void histogram_k(const T* x, index_t n, double lo, double hi, index_t bins, index_t* counts) {
  extern __shared__ unsigned long long shared_counts[];
  const bool local = bins <= 4096;
  if (local)
    for (index_t b = threadIdx.x; b < bins; b += blockDim.x) shared_counts[b] = 0;
  __syncthreads();
  TESSERA_GRID_LOOP(i, n) {
    const index_t b = bin_of(x[i], lo, hi, bins);
    if (b < 0) continue;
    if (local) atomicAdd(&shared_counts[b], 1ull);
    else atomicAdd(reinterpret_cast<unsigned long long*>(counts + b), 1ull);
  }
  __syncthreads();
  if (local)
    for (index_t b = threadIdx.x; b < bins; b += blockDim.x)
      if (shared_counts[b]) atomicAdd(reinterpret_cast<unsigned long long*>(counts + b), shared_counts[b]);
}
}  // namespace

void rows_of(const index_t* pos, index_t n, index_t len, index_t inner, index_t* row, void* stream) {
  rows_k<<<blocks_for(n, kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(pos, n, len, inner, row);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
void places_of(const index_t* pos, index_t n, index_t len, index_t inner, index_t* dst, index_t* along, void* stream) {
  places_k<<<blocks_for(n, kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(pos, n, len, inner, dst, along);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
template <class T> void gather(const T* src, const index_t* off, index_t n, T* dst, void* stream) {
  gather_k<<<blocks_for(n, kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(d(src), off, n, d(dst));
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
template <class T> void scatter(T* dst, const index_t* off, const T* src, index_t n, void* stream) {
  scatter_k<<<blocks_for(n, kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(d(dst), off, d(src), n);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
template <class T> void nonzero_flags(const T* in, index_t n, bool* flags, void* stream) {
  flags_k<<<blocks_for(n, kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(d(in), n, flags);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
template <class T> void select(const bool* c, const T* x, const T* y, index_t n, T* out, void* stream) {
  select_k<<<blocks_for(n, kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(c, d(x), d(y), n, d(out));
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
template <class T> index_t compact(const T* in, const bool* flags, index_t n, T* out, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  std::size_t bytes = 0;
  Scratch count(sizeof(index_t), s);
  auto* num = static_cast<index_t*>(count.p);
  TESSERA_CHECK_CUDA(cub::DeviceSelect::Flagged(nullptr, bytes, d(in), flags, d(out), num, n, s));
  Scratch tmp(bytes, s);
  TESSERA_CHECK_CUDA(cub::DeviceSelect::Flagged(tmp.p, bytes, d(in), flags, d(out), num, n, s));
  index_t k = 0;
  TESSERA_CHECK_CUDA(cudaMemcpyAsync(&k, num, sizeof(k), cudaMemcpyDeviceToHost, s));
  TESSERA_CHECK_CUDA(cudaStreamSynchronize(s));
  return k;
}
template <class T> void histogram(const T* x, index_t n, double lo, double hi, index_t bins, index_t* counts, void* stream) {
  const std::size_t shm = bins <= 4096 ? bins * sizeof(unsigned long long) : 0;
  histogram_k<<<blocks_for(n, kThreads), kThreads, shm, static_cast<cudaStream_t>(stream)>>>(x, n, lo, hi, bins, counts);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

TESSERA_ALGO_KERNEL_INSTANCES

}  // namespace tessera::distributed::detail::cuda
