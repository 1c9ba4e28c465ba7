// The reductions, written once: host loops always, CUDA kernels (CUB block reductions) when
// compiled by nvcc. Included by src/cuda/reduce.cu or src/host/reduce.cpp.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/local/expr.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/reduce.hpp"
#include "tessera/local/settings.hpp"
#ifdef __CUDACC__
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#endif

namespace tessera::local::detail {

template <class D> struct ArgAcc { D v; index_t i; };

// Per-operation accumulator: identity, the value an element contributes, and the combination.
template <class T, ReduceOp Op>
struct Red {
  using D = dev_t<T>;
  using R = reduce_result_t<T, Op>;
  static constexpr bool is_arg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
  using acc = std::conditional_t<is_arg, ArgAcc<D>, dev_t<R>>;

  static TESSERA_HD acc identity() {
    if constexpr (Op == ReduceOp::sum || Op == ReduceOp::sumsq) return acc(0);
    else if constexpr (Op == ReduceOp::prod) return acc(1);
    else if constexpr (Op == ReduceOp::min) return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    else if constexpr (Op == ReduceOp::max) return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    else if constexpr (Op == ReduceOp::any) return false;
    else if constexpr (Op == ReduceOp::all) return true;
    else return acc{D(), -1};
  }
  static TESSERA_HD acc load(const D& v, index_t i) {
    if constexpr (Op == ReduceOp::sumsq) {
      if constexpr (is_cplx<D>::value) return v.real() * v.real() + v.imag() * v.imag();
      else return v * v;
    } else if constexpr (Op == ReduceOp::any || Op == ReduceOp::all) {
      return v != D(0);
    } else if constexpr (is_arg) {
      return acc{v, i};
    } else {
      return convert<acc>(v);
    }
  }
  static TESSERA_HD acc combine(const acc& a, const acc& b) {
    if constexpr (Op == ReduceOp::sum || Op == ReduceOp::sumsq) return a + b;
    else if constexpr (Op == ReduceOp::prod) return a * b;
    else if constexpr (Op == ReduceOp::min) return b < a ? b : a;
    else if constexpr (Op == ReduceOp::max) return a < b ? b : a;
    else if constexpr (Op == ReduceOp::any) return a || b;
    else if constexpr (Op == ReduceOp::all) return a && b;
    else {
      if (a.i < 0) return b;
      if (b.i < 0) return a;
      const bool better = Op == ReduceOp::argmin ? (b.v < a.v) : (a.v < b.v);
      if (better || (!(a.v < b.v) && !(b.v < a.v) && b.i < a.i)) return b;
      return a;
    }
  }
  static TESSERA_HD R finalize(const acc& a) {
    if constexpr (is_arg) return a.i;
    else return convert<R>(a);
  }
};

// Element offset of flat row-major index i in a (6-d, any strides).
TESSERA_HD inline index_t offset_of(index_t i, const index_t* shape, const index_t* strides) {
  index_t off = 0;
  for (int d = kMaxRank - 1; d >= 0; --d) {
    off += (i % shape[d]) * strides[d];
    i /= shape[d];
  }
  return off;
}

// Pairwise combination keeps rounding error O(log n) for sums on host.
template <class RD>
typename RD::acc host_reduce_range(const typename RD::D* p, index_t lo, index_t hi, const index_t* shape,
                                   const index_t* strides, bool contiguous) {
  if (hi - lo <= 256) {
    auto acc = RD::identity();
    for (index_t i = lo; i < hi; ++i)
      acc = RD::combine(acc, RD::load(p[contiguous ? i : offset_of(i, shape, strides)], i));
    return acc;
  }
  const index_t mid = lo + (hi - lo) / 2;
  return RD::combine(host_reduce_range<RD>(p, lo, mid, shape, strides, contiguous),
                     host_reduce_range<RD>(p, mid, hi, shape, strides, contiguous));
}

template <class T, ReduceOp Op>
void check_nonempty(const Array6<T>& a, index_t n) {
  if (n == 0 && (Op == ReduceOp::min || Op == ReduceOp::max || Op == ReduceOp::argmin || Op == ReduceOp::argmax))
    throw InvalidArgument("zero-size array to a reduction (min/max/argmin/argmax) that has no identity", a.device());
}

#ifdef __CUDACC__
constexpr int kReduceThreads = 256;

// Each block reduces its share into partials[block]; the last block to finish (a counter, left at 0
// again for the next call) combines the partials in block order (deterministic) into *out: one
// launch, no second kernel for the partials (docs/performance/local.md, History).
template <class RD, int V>
__global__ void reduce_all_kernel(const typename RD::D* p, index_t n, Shape<kMaxRank> shape, Shape<kMaxRank> strides,
                                  bool contiguous, typename RD::acc* partials, unsigned* counter,
                                  dev_t<typename RD::R>* out) {
  using acc_t = typename RD::acc;
  using BR = cub::BlockReduce<acc_t, kReduceThreads>;
  __shared__ typename BR::TempStorage tmp;
  __shared__ bool last;
  acc_t acc = RD::identity();
  const index_t tid = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const index_t nthreads = static_cast<index_t>(gridDim.x) * blockDim.x;
  if (contiguous && V > 1) {
    // 16-byte loads: V elements per load, several loads in flight per thread.
    struct alignas(16) Vec { typename RD::D e[V]; };
    const Vec* pv = reinterpret_cast<const Vec*>(p);
    const index_t nv = n / V;
    index_t j = tid;
    // One accumulator here, unlike the row kernel below: four (one per load) were slower
    // (docs/performance/local.md, History).
    for (; j + 3 * nthreads < nv; j += 4 * nthreads) {
      Vec v0 = pv[j], v1 = pv[j + nthreads], v2 = pv[j + 2 * nthreads], v3 = pv[j + 3 * nthreads];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        acc = RD::combine(acc, RD::load(v0.e[k], 0));
        acc = RD::combine(acc, RD::load(v1.e[k], 0));
        acc = RD::combine(acc, RD::load(v2.e[k], 0));
        acc = RD::combine(acc, RD::load(v3.e[k], 0));
      }
    }
    for (; j < nv; j += nthreads) {
      Vec v0 = pv[j];
#pragma unroll
      for (int k = 0; k < V; ++k) acc = RD::combine(acc, RD::load(v0.e[k], 0));
    }
    for (index_t i = nv * V + tid; i < n; i += nthreads) acc = RD::combine(acc, RD::load(p[i], i));
  } else {
    for (index_t i = tid; i < n; i += nthreads)
      acc = RD::combine(acc, RD::load(p[contiguous ? i : offset_of(i, shape.data(), strides.data())], i));
  }
  auto op = [](const acc_t& a, const acc_t& b) { return RD::combine(a, b); };
  acc_t r = BR(tmp).Reduce(acc, op);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = r;
    __threadfence();  // the partial is visible before the count says so
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  acc = RD::identity();
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) acc = RD::combine(acc, partials[i]);
  __syncthreads();  // tmp is reused
  r = BR(tmp).Reduce(acc, op);
  if (threadIdx.x == 0) {
    *out = convert<dev_t<typename RD::R>>(RD::finalize(r));
    *counter = 0;
  }
}

// The whole-array reduction's scratch, kept per context and device and ordered on the device's
// compute stream (every reduction's): the block counter, the result slot and the partials, so
// that no call pays a stream-ordered allocation (docs/performance/local.md, History).
struct ReduceScratch {
  static constexpr std::size_t kHead = 256;  // the counter at 0, the result slot at kHead / 2
  std::mutex mu;
  std::map<Device, Buffer> bufs;
};
// The scratch of `s`'s device with room for `partial_bytes` after the head, its counter 0; `lock`
// holds it until the caller has queued its kernel.
inline unsigned char* reduce_scratch(const Stream& s, std::size_t partial_bytes, std::unique_lock<std::mutex>& lock) {
  auto& sc = Context::current().resource<ReduceScratch>([] { return std::make_shared<ReduceScratch>(); });
  lock = std::unique_lock<std::mutex>(sc.mu);
  Buffer& b = sc.bufs[s.device()];
  if (b.bytes() < ReduceScratch::kHead + partial_bytes) {
    b = Buffer(ReduceScratch::kHead + std::max<std::size_t>(partial_bytes, 16 << 10), s);
    TESSERA_CHECK_CUDA(cudaMemsetAsync(b.data(), 0, ReduceScratch::kHead, static_cast<cudaStream_t>(s.native())));
  }
  return static_cast<unsigned char*>(b.data());
}

// One warp per output where the reduced axis is contiguous: the lanes read consecutive elements.
template <class RD>
__global__ void reduce_axis_warp_kernel(const typename RD::D* p, index_t m, index_t len, Shape<kMaxRank> oshape,
                                        Shape<kMaxRank> strides, Shape<kMaxRank> ostrides,
                                        dev_t<typename RD::R>* out) {
  using acc_t = typename RD::acc;
  using WR = cub::WarpReduce<acc_t>;
  __shared__ typename WR::TempStorage tmp[kReduceThreads / 32];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const index_t warps = static_cast<index_t>(gridDim.x) * (blockDim.x / 32);
  for (index_t o = static_cast<index_t>(blockIdx.x) * (blockDim.x / 32) + warp; o < m; o += warps) {
    const auto* row = p + offset_of(o, oshape.data(), strides.data());
    acc_t acc = RD::identity();
    // Unrolled: four loads in flight per lane (the combines wait on them, not the next loads).
#pragma unroll 4
    for (index_t j = lane; j < len; j += 32) acc = RD::combine(acc, RD::load(row[j], j));
    acc_t r = WR(tmp[warp]).Reduce(acc, [](const acc_t& a, const acc_t& b) { return RD::combine(a, b); });
    if (lane == 0) out[offset_of(o, oshape.data(), ostrides.data())] = convert<dev_t<typename RD::R>>(RD::finalize(r));
    __syncwarp();
  }
}

// Rows of 16-byte loads (V elements) where every row is 16-byte aligned, four loads in flight per
// thread, each into its own accumulator (independent chains of adds); the last len % V elements
// of a row are scalar loads. `flat`: rows o * len apart and outputs in order, without the
// per-row index arithmetic (six 64-bit divisions each way).
template <class RD, int V, int Team>
__device__ typename RD::acc sum_row_vec(const typename RD::D* row, index_t len, int t) {
  using acc_t = typename RD::acc;
  struct alignas(16) Vec { typename RD::D e[V]; };
  const auto* rv = reinterpret_cast<const Vec*>(row);
  const index_t nv = len / V;
  acc_t acc = RD::identity(), a1 = RD::identity(), a2 = RD::identity(), a3 = RD::identity();
  index_t j = t;
  for (; j + 3 * Team < nv; j += 4 * Team) {
    const Vec x0 = rv[j], x1 = rv[j + Team], x2 = rv[j + 2 * Team], x3 = rv[j + 3 * Team];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      acc = RD::combine(acc, RD::load(x0.e[e], 0));
      a1 = RD::combine(a1, RD::load(x1.e[e], 0));
      a2 = RD::combine(a2, RD::load(x2.e[e], 0));
      a3 = RD::combine(a3, RD::load(x3.e[e], 0));
    }
  }
  for (; j < nv; j += Team) {
    const Vec x = rv[j];
#pragma unroll
    for (int e = 0; e < V; ++e) acc = RD::combine(acc, RD::load(x.e[e], 0));
  }
  acc = RD::combine(RD::combine(acc, a1), RD::combine(a2, a3));
  for (index_t k = nv * V + t; k < len; k += Team) acc = RD::combine(acc, RD::load(row[k], k));
  return acc;
}

// A warp per row.
template <class RD, int V>
__global__ void reduce_axis_warp_vec_kernel(const typename RD::D* p, index_t m, index_t len, Shape<kMaxRank> oshape,
                                            Shape<kMaxRank> strides, Shape<kMaxRank> ostrides, bool flat,
                                            dev_t<typename RD::R>* out) {
  using acc_t = typename RD::acc;
  using WR = cub::WarpReduce<acc_t>;
  __shared__ typename WR::TempStorage tmp[kReduceThreads / 32];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const index_t warps = static_cast<index_t>(gridDim.x) * (blockDim.x / 32);
  for (index_t o = static_cast<index_t>(blockIdx.x) * (blockDim.x / 32) + warp; o < m; o += warps) {
    const auto* row = p + (flat ? o * len : offset_of(o, oshape.data(), strides.data()));
    const acc_t acc = sum_row_vec<RD, V, 32>(row, len, lane);
    acc_t r = WR(tmp[warp]).Reduce(acc, [](const acc_t& a, const acc_t& b) { return RD::combine(a, b); });
    if (lane == 0)
      out[flat ? o : offset_of(o, oshape.data(), ostrides.data())] = convert<dev_t<typename RD::R>>(RD::finalize(r));
    __syncwarp();
  }
}

// A block per row, for long rows (docs/performance/local.md, History).
template <class RD, int V>
__global__ void reduce_axis_block_vec_kernel(const typename RD::D* p, index_t m, index_t len, Shape<kMaxRank> oshape,
                                             Shape<kMaxRank> strides, Shape<kMaxRank> ostrides, bool flat,
                                             dev_t<typename RD::R>* out) {
  using acc_t = typename RD::acc;
  using BR = cub::BlockReduce<acc_t, kReduceThreads>;
  __shared__ typename BR::TempStorage tmp;
  for (index_t o = blockIdx.x; o < m; o += gridDim.x) {
    const auto* row = p + (flat ? o * len : offset_of(o, oshape.data(), strides.data()));
    const acc_t acc = sum_row_vec<RD, V, kReduceThreads>(row, len, static_cast<int>(threadIdx.x));
    acc_t r = BR(tmp).Reduce(acc, [](const acc_t& a, const acc_t& b) { return RD::combine(a, b); });
    if (threadIdx.x == 0)
      out[flat ? o : offset_of(o, oshape.data(), ostrides.data())] = convert<dev_t<typename RD::R>>(RD::finalize(r));
    __syncthreads();  // tmp is reused
  }
}

// Outputs across threads (adjacent outputs read adjacent elements), the axis cut into gridDim.y
// segments when the outputs alone are too few to fill the GPU: partials[segment * m + output].
template <class RD>
__global__ void reduce_axis_split_kernel(const typename RD::D* p, index_t m, int axis, index_t len,
                                         Shape<kMaxRank> oshape, Shape<kMaxRank> strides, typename RD::acc* partials) {
  const index_t segs = gridDim.y, seg = blockIdx.y;
  const index_t lo = len * seg / segs, hi = len * (seg + 1) / segs;
  for (index_t o = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < m;
       o += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t in_off = offset_of(o, oshape.data(), strides.data());
    auto acc = RD::identity();
#pragma unroll 4
    for (index_t j = lo; j < hi; ++j) acc = RD::combine(acc, RD::load(p[in_off + j * strides[axis]], j));
    partials[seg * m + o] = acc;
  }
}

// The same with V adjacent outputs per thread (16-byte loads along the outputs' unit-stride axis,
// whose extent V divides): m / V threads, partials as above.
template <class RD, int V>
__global__ void reduce_axis_split_vec_kernel(const typename RD::D* p, index_t m, int axis, index_t len,
                                             Shape<kMaxRank> oshape, Shape<kMaxRank> strides,
                                             typename RD::acc* partials) {
  struct alignas(16) Vec { typename RD::D e[V]; };
  const index_t segs = gridDim.y, seg = blockIdx.y, mv = m / V, step = strides[axis];
  const index_t lo = len * seg / segs, hi = len * (seg + 1) / segs;
  for (index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < mv;
       t += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const auto* col = reinterpret_cast<const Vec*>(p + offset_of(t * V, oshape.data(), strides.data()));
    typename RD::acc acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = RD::identity();
#pragma unroll 4
    for (index_t j = lo; j < hi; ++j) {
      const Vec x = col[j * step / V];
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = RD::combine(acc[e], RD::load(x.e[e], 0));
    }
#pragma unroll
    for (int e = 0; e < V; ++e) partials[seg * m + t * V + e] = acc[e];
  }
}

template <class RD>
__global__ void reduce_axis_combine_kernel(const typename RD::acc* partials, index_t m, int segs,
                                           Shape<kMaxRank> oshape, Shape<kMaxRank> ostrides,
                                           dev_t<typename RD::R>* out) {
  for (index_t o = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < m;
       o += static_cast<index_t>(gridDim.x) * blockDim.x) {
    auto acc = RD::identity();
    for (int sg = 0; sg < segs; ++sg) acc = RD::combine(acc, partials[sg * m + o]);
    out[offset_of(o, oshape.data(), ostrides.data())] = convert<dev_t<typename RD::R>>(RD::finalize(acc));
  }
}

template <class RD>
__global__ void reduce_axis_kernel(const typename RD::D* p, index_t m, int axis, index_t len, Shape<kMaxRank> oshape,
                                   Shape<kMaxRank> strides, Shape<kMaxRank> ostrides, dev_t<typename RD::R>* out) {
  for (index_t o = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < m;
       o += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t in_off = offset_of(o, oshape.data(), strides.data());
    auto acc = RD::identity();
    for (index_t j = 0; j < len; ++j) acc = RD::combine(acc, RD::load(p[in_off + j * strides[axis]], j));
    out[offset_of(o, oshape.data(), ostrides.data())] = convert<dev_t<typename RD::R>>(RD::finalize(acc));
  }
}
#endif

template <class T, ReduceOp Op>
void reduce_all6(const Array6<T>& a, reduce_result_t<T, Op>* result, bool on_device) {
  using RD = Red<T, Op>;
  using R = reduce_result_t<T, Op>;
  const index_t n = a.size();
  check_nonempty<T, Op>(a, n);
  const auto* p = reinterpret_cast<const typename RD::D*>(a.data());
  // Flat indices (argmin/argmax) count over the logical shape, so views keep numpy's meaning.
  const bool contiguous = a.is_contiguous();
  if (a.device().is_host()) {
    const R r = RD::finalize(host_reduce_range<RD>(p, 0, n, a.shape().data(), a.strides().data(), contiguous));
    std::memcpy(result, &r, sizeof(R));
    return;
  }
#ifdef __CUDACC__
  DeviceGuard guard(a.device());
  const Stream& s = Stream::default_for(a.device());
  auto cs = static_cast<cudaStream_t>(s.native());
  const int sms = multiprocessor_count(a.device().index());
  constexpr int V = (RD::is_arg || sizeof(typename RD::D) > 16) ? 1 : 16 / sizeof(typename RD::D);
  const bool vec = contiguous && V > 1 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  const index_t per_block = kReduceThreads * (vec ? 4 * V : 1);
  const index_t cap = static_cast<index_t>(sms) * settings().reduce_blocks_per_sm;
  const int blocks = static_cast<int>(std::max<index_t>(1, std::min<index_t>((n + per_block - 1) / per_block, cap)));
  std::unique_lock<std::mutex> lock;
  unsigned char* scratch = reduce_scratch(s, sizeof(typename RD::acc) * blocks, lock);
  auto* counter = reinterpret_cast<unsigned*>(scratch);
  auto* part = reinterpret_cast<typename RD::acc*>(scratch + ReduceScratch::kHead);
  auto* out = on_device ? reinterpret_cast<dev_t<R>*>(result)
                        : reinterpret_cast<dev_t<R>*>(scratch + ReduceScratch::kHead / 2);
  if (vec)
    reduce_all_kernel<RD, V><<<blocks, kReduceThreads, 0, cs>>>(p, n, a.shape(), a.strides(), true, part, counter, out);
  else
    reduce_all_kernel<RD, 1><<<blocks, kReduceThreads, 0, cs>>>(p, n, a.shape(), a.strides(), contiguous, part,
                                                                counter, out);
  TESSERA_CHECK_CUDA(cudaGetLastError());
  note_kernel_launch();
  if (!on_device) {
    TESSERA_CHECK_CUDA(cudaMemcpyAsync(result, out, sizeof(R), cudaMemcpyDeviceToHost, cs));
    lock.unlock();
    s.synchronize();
  }
#else
  (void)result;
  (void)on_device;
  throw BackendUnavailable("reduction on " + a.device().str() + " needs the CUDA backend", a.device());
#endif
}

template <class T, ReduceOp Op>
void reduce_axis6(const Array6<T>& a, int axis, const Array6<reduce_result_t<T, Op>>& out) {
  using RD = Red<T, Op>;
  using R = reduce_result_t<T, Op>;
  if (out.device() != a.device())
    throw DeviceMismatch("reduction along an axis: input on " + a.device().str() + ", output on " + out.device().str(),
                         a.device());
  const index_t len = a.shape()[axis];
  if (len == 0) check_nonempty<T, Op>(a, 0);
  const index_t m = out.size();
  const auto* p = reinterpret_cast<const typename RD::D*>(a.data());
  auto* o = reinterpret_cast<dev_t<R>*>(out.data());
  if (a.device().is_host()) {
    for (index_t k = 0; k < m; ++k) {
      const index_t in_off = offset_of(k, out.shape().data(), a.strides().data());
      auto acc = RD::identity();
      for (index_t j = 0; j < len; ++j) acc = RD::combine(acc, RD::load(p[in_off + j * a.strides()[axis]], j));
      o[offset_of(k, out.shape().data(), out.strides().data())] = convert<dev_t<R>>(RD::finalize(acc));
    }
    return;
  }
#ifdef __CUDACC__
  if (m == 0) return;
  DeviceGuard guard(a.device());
  const Stream& s = Stream::default_for(a.device());
  auto cs = static_cast<cudaStream_t>(s.native());
  const index_t fill = static_cast<index_t>(multiprocessor_count(a.device().index())) * 2048;  // threads to fill it
  auto grid = [](index_t threads) { return static_cast<unsigned>(std::max<index_t>(1, std::min<index_t>((threads + 255) / 256, 65535))); };
  // 16-byte loads of V elements where the data start and the strides keep them aligned: for a
  // warp per row, every stride but the reduced axis' a multiple of V; for V outputs per thread,
  // the outputs' innermost axis of unit stride and an extent V divides, the other strides
  // (the reduced axis' too) multiples of V.
  constexpr int V = (RD::is_arg || 16 % sizeof(typename RD::D) != 0) ? 1 : 16 / sizeof(typename RD::D);
  int inner = -1;  // the outputs' innermost axis longer than 1
  for (int d = 0; d < kMaxRank; ++d)
    if (d != axis && a.shape()[d] > 1) inner = d;
  bool rows_aligned = V > 1 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0, cols_aligned = rows_aligned && inner >= 0;
  for (int d = 0; d < kMaxRank; ++d) {
    if (d == axis || a.shape()[d] == 1) continue;
    const bool multiple = a.strides()[d] % V == 0;
    rows_aligned = rows_aligned && multiple;
    cols_aligned = cols_aligned && (d == inner ? a.strides()[d] == 1 && a.shape()[d] % V == 0 : multiple);
  }
  const bool vec_cols = cols_aligned && a.strides()[axis] % V == 0;
  const index_t threads = vec_cols ? m / V : m;  // outputs across threads: V per thread or 1
  if (a.strides()[axis] == 1 && len >= 32) {  // contiguous axis: a warp per output
    if constexpr (V > 1) {
      if (rows_aligned) {
        // A block per row from 128 KiB rows on, else a warp (docs/performance/local.md, History).
        const bool flat = axis == kMaxRank - 1 && a.is_contiguous() && out.is_contiguous();
        if (len * static_cast<index_t>(sizeof(T)) >= (index_t(128) << 10))
          reduce_axis_block_vec_kernel<RD, V><<<grid(m * kReduceThreads), kReduceThreads, 0, cs>>>(
              p, m, len, out.shape(), a.strides(), out.strides(), flat, o);
        else
          reduce_axis_warp_vec_kernel<RD, V><<<grid(m * 32), kReduceThreads, 0, cs>>>(
              p, m, len, out.shape(), a.strides(), out.strides(), flat, o);
        TESSERA_CHECK_CUDA(cudaGetLastError());
        note_kernel_launch();
        return;
      }
    }
    reduce_axis_warp_kernel<RD><<<grid(m * 32), kReduceThreads, 0, cs>>>(p, m, len, out.shape(), a.strides(),
                                                                         out.strides(), o);
  } else if ((threads < fill || vec_cols) && len >= 64) {  // cut the axis too (to fill the GPU), then combine
    const int segs = static_cast<int>(std::min<index_t>({(fill + threads - 1) / threads, len / 16, 1024}));
    Buffer partials(sizeof(typename RD::acc) * static_cast<std::size_t>(m) * segs, s);
    auto* part = static_cast<typename RD::acc*>(partials.data());
    if (vec_cols) {
      if constexpr (V > 1)
        reduce_axis_split_vec_kernel<RD, V><<<dim3(grid(threads), segs), 256, 0, cs>>>(p, m, axis, len, out.shape(),
                                                                                         a.strides(), part);
    } else {
      reduce_axis_split_kernel<RD><<<dim3(grid(m), segs), 256, 0, cs>>>(p, m, axis, len, out.shape(), a.strides(), part);
    }
    TESSERA_CHECK_CUDA(cudaGetLastError());
    note_kernel_launch();
    reduce_axis_combine_kernel<RD><<<grid(m), 256, 0, cs>>>(part, m, segs, out.shape(), out.strides(), o);
  } else {
    reduce_axis_kernel<RD><<<grid(m), 256, 0, cs>>>(p, m, axis, len, out.shape(), a.strides(), out.strides(), o);
  }
  TESSERA_CHECK_CUDA(cudaGetLastError());
  note_kernel_launch();
#else
  throw BackendUnavailable("reduction on " + a.device().str() + " needs the CUDA backend", a.device());
#endif
}

}  // namespace tessera::local::detail

#define TESSERA_INSTANTIATE_REDUCTION(T, OP)                                                              \
  template void tessera::local::detail::reduce_all6<T, OP>(const Array6<T>&, reduce_result_t<T, OP>*, bool); \
  template void tessera::local::detail::reduce_axis6<T, OP>(const Array6<T>&, int, const Array6<reduce_result_t<T, OP>>&);
#define TESSERA_INSTANTIATE_COMMON_REDUCTIONS(T)               \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::sum)              \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::prod)             \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::any)              \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::all)              \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::sumsq)
#define TESSERA_INSTANTIATE_ORDERED_REDUCTIONS(T)              \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::min)              \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::max)              \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::argmin)           \
  TESSERA_INSTANTIATE_REDUCTION(T, ReduceOp::argmax)
