// Copies whose source runs along another axis than the destination (a transposed or permuted
// view into a contiguous array): a grid-stride copy reads one of the two sides with a stride, so
// 32x32 tiles go through shared memory and both the reads (along the source's unit-stride axis)
// and the writes (along the destination's) coalesce (docs/performance/local.md, History).
// nvcc only; included by basic_ops_impl.hpp.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>

#include "copy_word_cuda.cuh"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::local::detail {
namespace transpose {
constexpr int kTile = 32, kRows = 8, kBatch = 4;  // tile edge, thread rows, batch axes at most

struct Geometry {
  index_t m = 0, n = 0;                // extents: the source's unit-stride axis, the destination's
  index_t dm = 0, sn = 0;              // m's stride in dst, n's in src (1 in the other)
  int batches = 0;                     // the other axes
  index_t be[kBatch] = {}, bs[kBatch] = {}, bd[kBatch] = {};
  index_t batch_count = 1;
};

template <class T>
__global__ void tile_kernel(T* __restrict__ dst, const T* __restrict__ src, Geometry g) {
  __shared__ T tile[kTile][kTile + 1];  // +1: the column reads hit 32 banks
  const index_t m0 = static_cast<index_t>(blockIdx.y) * kTile, n0 = static_cast<index_t>(blockIdx.x) * kTile;
  for (index_t b = blockIdx.z; b < g.batch_count; b += gridDim.z) {
    index_t so = 0, doff = 0, r = b;
    for (int k = g.batches - 1; k >= 0; --k) {
      const index_t i = r % g.be[k];
      r /= g.be[k];
      so += i * g.bs[k], doff += i * g.bd[k];
    }
    // Read along m (the source's unit stride): threadIdx.x walks m.
    const index_t m = m0 + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kRows) {
      const index_t n = n0 + j;
      if (m < g.m && n < g.n) tile[j][threadIdx.x] = src[so + m + n * g.sn];
    }
    __syncthreads();
    // Write along n (the destination's unit stride): threadIdx.x walks n.
    const index_t n = n0 + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kRows) {
      const index_t mm = m0 + j;
      if (mm < g.m && n < g.n) dst[doff + mm * g.dm + n] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// The geometry of dst = src when it is a tiled transpose: after dropping extent-1 axes, the
// destination's last axis has unit stride, the source's does not, and some other axis of the
// source has unit stride, both of at least a tile's width. False: not this shape of copy.
template <class T>
bool geometry(const Array6<T>& dst, const Array6<T>& src, Geometry& g) {
  int axes[kMaxRank], n = 0;
  for (int a = 0; a < kMaxRank; ++a)
    if (dst.shape()[a] != 1) axes[n++] = a;
  if (n < 2) return false;
  const int last = axes[n - 1];
  if (dst.strides()[last] != 1 || src.strides()[last] == 1) return false;
  int p = -1;
  for (int k = 0; k < n - 1; ++k)
    if (src.strides()[axes[k]] == 1) p = axes[k];
  if (p < 0 || dst.shape()[p] < kTile || dst.shape()[last] < kTile) return false;
  g.m = dst.shape()[p], g.n = dst.shape()[last];
  g.dm = dst.strides()[p], g.sn = src.strides()[last];
  for (int k = 0; k < n - 1; ++k) {
    const int a = axes[k];
    if (a == p) continue;
    if (g.batches == kBatch) return false;
    g.be[g.batches] = dst.shape()[a], g.bs[g.batches] = src.strides()[a], g.bd[g.batches] = dst.strides()[a];
    g.batch_count *= dst.shape()[a], ++g.batches;
  }
  return true;
}
}  // namespace transpose

// dst = src (same CUDA device) by tiles when that is the copy's shape; false otherwise.
template <class T>
bool transpose_copy_cuda(const Array6<T>& dst, const Array6<T>& src) {
  transpose::Geometry g;
  if (!dst.device().is_cuda() || dst.size() == 0 || !transpose::geometry(dst, src, g)) return false;
  DeviceGuard guard(dst.device());
  const auto stream = static_cast<cudaStream_t>(Stream::default_for(dst.device()).native());
  using D = copy_word_t<T>;
  static_assert(sizeof(D) == sizeof(T));
  const dim3 block(transpose::kTile, transpose::kRows);
  const dim3 grid(static_cast<unsigned>((g.n + transpose::kTile - 1) / transpose::kTile),
                  static_cast<unsigned>((g.m + transpose::kTile - 1) / transpose::kTile),
                  static_cast<unsigned>(std::min<index_t>(g.batch_count, 65535)));
  if (grid.y > 65535) return false;
  transpose::tile_kernel<D><<<grid, block, 0, stream>>>(reinterpret_cast<D*>(dst.data()),
                                                        reinterpret_cast<const D*>(src.data()), g);
  TESSERA_CHECK_CUDA(cudaGetLastError());
  note_kernel_launch();
  return true;
}
}  // namespace tessera::local::detail
