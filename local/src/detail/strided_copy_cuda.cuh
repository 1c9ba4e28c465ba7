// Strided copies (a sliced or stepped view on either side, unit strides not required) that are
// not transposes: after merging the axes that are contiguous in both arrays, the last axis is a
// row and the others count rows. Threads walk a row, kPer elements each with the loads issued
// before the stores, and a block works out its row's offsets once instead of a division per axis
// per element (docs/performance/local.md, History). nvcc only; included by basic_ops_impl.hpp.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>

#include "copy_word_cuda.cuh"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::local::detail {
namespace rows {
constexpr int kThreads = 256, kPer = 4, kOuter = kMaxRank - 1;
constexpr index_t kMinRow = 64;  // shorter rows stay with the generic kernel (idle threads here)

struct Geometry {
  index_t len = 0, ds = 0, ss = 0;  // the row: extent, stride in dst, in src
  int outer = 0;                    // the other (merged) axes, outermost first
  index_t oe[kOuter] = {}, od[kOuter] = {}, os[kOuter] = {};
  index_t rows = 1;
};

template <class T>
__global__ void __launch_bounds__(kThreads) rows_kernel(T* __restrict__ dst, const T* __restrict__ src, Geometry g) {
  const index_t c0 = static_cast<index_t>(blockIdx.x) * (kThreads * kPer) + threadIdx.x;
  for (index_t r = blockIdx.y; r < g.rows; r += gridDim.y) {
    index_t so = 0, doff = 0, q = r;
    for (int k = g.outer - 1; k >= 0; --k) {
      const index_t i = q % g.oe[k];
      q /= g.oe[k];
      so += i * g.os[k], doff += i * g.od[k];
    }
    T v[kPer];
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const index_t c = c0 + e * kThreads;
      if (c < g.len) v[e] = src[so + c * g.ss];
    }
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const index_t c = c0 + e * kThreads;
      if (c < g.len) dst[doff + c * g.ds] = v[e];
    }
  }
}

// The row geometry of dst = src: extent-1 axes dropped, neighbours merged where both arrays
// step over the inner one exactly. False when there is nothing to gain: both contiguous (the
// linear kernel), or a row shorter than kMinRow.
template <class T>
bool geometry(const Array6<T>& dst, const Array6<T>& src, Geometry& g) {
  index_t e[kMaxRank], d[kMaxRank], s[kMaxRank];
  int n = 0;
  for (int a = 0; a < kMaxRank; ++a) {
    if (dst.shape()[a] == 1) continue;
    if (n > 0 && d[n - 1] == dst.strides()[a] * dst.shape()[a] && s[n - 1] == src.strides()[a] * dst.shape()[a]) {
      e[n - 1] *= dst.shape()[a], d[n - 1] = dst.strides()[a], s[n - 1] = src.strides()[a];
      continue;
    }
    e[n] = dst.shape()[a], d[n] = dst.strides()[a], s[n] = src.strides()[a], ++n;
  }
  if (n == 0 || e[n - 1] < kMinRow || (n == 1 && d[0] == 1 && s[0] == 1)) return false;
  g.len = e[n - 1], g.ds = d[n - 1], g.ss = s[n - 1], g.outer = n - 1;
  for (int k = 0; k < n - 1; ++k) g.oe[k] = e[k], g.od[k] = d[k], g.os[k] = s[k], g.rows *= e[k];
  return true;
}
}  // namespace rows

// dst = src (same CUDA device) by rows when that is the copy's shape; false otherwise.
template <class T>
bool strided_copy_cuda(const Array6<T>& dst, const Array6<T>& src) {
  rows::Geometry g;
  if (!dst.device().is_cuda() || dst.size() == 0 || !rows::geometry(dst, src, g)) return false;
  DeviceGuard guard(dst.device());
  const auto stream = static_cast<cudaStream_t>(Stream::default_for(dst.device()).native());
  using D = copy_word_t<T>;
  static_assert(sizeof(D) == sizeof(T));
  constexpr index_t per_block = rows::kThreads * rows::kPer;
  const index_t bx = (g.len + per_block - 1) / per_block;
  if (bx > 0x7fffffff) return false;
  const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(std::min<index_t>(g.rows, 65535)));
  rows::rows_kernel<D><<<grid, rows::kThreads, 0, stream>>>(reinterpret_cast<D*>(dst.data()),
                                                            reinterpret_cast<const D*>(src.data()), g);
  TESSERA_CHECK_CUDA(cudaGetLastError());
  note_kernel_launch();
  return true;
}
}  // namespace tessera::local::detail
