// CUDA side of stencil.hpp.
//  - The interior (one box, no halo needed; wrapped axes whole): 32x8 (or 32x16, see Variant)
//    threads over (axis 2, axis 1); each thread (one cell or a 16-byte vector of them along
//    axis 2) marches kMarch cells along axis 0 keeping u[i-1], u[i], u[i+1] in registers, so HBM sees one read of u and one write of v per cell (16 B for
//    double) while the in-plane neighbours come from L1/L2. Wrapped neighbours only change a thread's offsets.
//  - The shell (up to six thin boxes): one grid-stride kernel over all of their cells, wrapping
//    around the axes that have no halo (see Field).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "stencil.hpp"
#include "tessera/local/cuda_check.hpp"

namespace heat3d::cuda {
namespace {

constexpr int kTx = 32, kMarch = 32;  // kMarch: cells per thread along axis 0 (16-64 measured alike)

// kTy: rows of threads per block (8, or 16 for the wide variants); kStream: streaming stores of v.
template <class T, int kTy, bool kStream>
__global__ void __launch_bounds__(kTx* kTy) interior_kernel(const T* __restrict__ u, T* __restrict__ v, Field<T> f,
                                                             Coeffs<T> c, Box b) {
  const index_t k = b.lo[2] + static_cast<index_t>(blockIdx.x) * kTx + threadIdx.x;
  const index_t j = b.lo[1] + static_cast<index_t>(blockIdx.y) * kTy + threadIdx.y;
  if (k >= b.hi[2] || j >= b.hi[1]) return;
  const index_t sx = f.sx, sy = f.sy, n0 = f.n[0];
  // Neighbour offsets; past the end of a wrapped axis they point to its other end.
  const index_t ym = f.wrap[1] && j == 0 ? (f.n[1] - 1) * sy : -sy, yp = f.wrap[1] && j == f.n[1] - 1 ? -(f.n[1] - 1) * sy : sy;
  const index_t zm = f.wrap[2] && k == 0 ? f.n[2] - 1 : -1, zp = f.wrap[2] && k == f.n[2] - 1 ? 1 - f.n[2] : 1;
  const index_t i0 = b.lo[0] + static_cast<index_t>(blockIdx.z) * kMarch;
  const index_t i1 = i0 + kMarch < b.hi[0] ? i0 + kMarch : b.hi[0];
  index_t off = i0 * sx + j * sy + k;
  T below = u[off + (f.wrap[0] && i0 == 0 ? (n0 - 1) * sx : -sx)], here = u[off];
#pragma unroll 4
  for (index_t i = i0; i < i1; ++i, off += sx) {
    const T above = u[off + (f.wrap[0] && i == n0 - 1 ? -(n0 - 1) * sx : sx)];
    const T next = c.c0 * here + c.cx * (below + above) + c.cy * (u[off + ym] + u[off + yp]) +
                   c.cz * (u[off + zm] + u[off + zp]);
    if constexpr (kStream) __stcs(v + off, next);
    else v[off] = next;
    below = here;
    here = above;
  }
}

// The vector variant: each thread updates W = 16 / sizeof(T) adjacent cells along axis 2 with
// 16-byte loads and streaming stores (a warp row spans 512 B: 4x fewer load instructions for
// float, 2x for double); the axis-2 neighbours past its vector are two scalar loads (L1 hits).
// kAhead pipelines the march: plane i+1's loads (in-plane neighbours, and plane i+2's cells from
// HBM) are issued before plane i is computed, so each thread keeps two planes of loads in flight.
template <class T> struct Vec;
template <> struct Vec<float> { using type = float4; static constexpr int n = 4; };
template <> struct Vec<double> { using type = double2; static constexpr int n = 2; };

template <class T>
__device__ inline T& lane(typename Vec<T>::type& v, int e) { return reinterpret_cast<T*>(&v)[e]; }

template <class T, bool kAhead>
__global__ void __launch_bounds__(kTx * 8, 4) interior_vec_kernel(const T* __restrict__ u,
                                                                                T* __restrict__ v, Field<T> f,
                                                                                Coeffs<T> c, Box b) {
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::n;
  const index_t k = b.lo[2] + (static_cast<index_t>(blockIdx.x) * kTx + threadIdx.x) * W;
  const index_t j = b.lo[1] + static_cast<index_t>(blockIdx.y) * 8 + threadIdx.y;
  if (k >= b.hi[2] || j >= b.hi[1]) return;
  const index_t sx = f.sx, sy = f.sy, n0 = f.n[0];
  const index_t ym = f.wrap[1] && j == 0 ? (f.n[1] - 1) * sy : -sy, yp = f.wrap[1] && j == f.n[1] - 1 ? -(f.n[1] - 1) * sy : sy;
  // The cells just before and after the vector along axis 2, wrapped where the axis is.
  const index_t zm = f.wrap[2] && k == 0 ? f.n[2] - 1 : -1, zp = f.wrap[2] && k + W == f.n[2] ? W - f.n[2] : W;
  const index_t i0 = b.lo[0] + static_cast<index_t>(blockIdx.z) * kMarch;
  const index_t i1 = i0 + kMarch < b.hi[0] ? i0 + kMarch : b.hi[0];
  const index_t base = j * sy + k;
  // Offset of plane p's cells (p in [lo-1, hi+1]): a wrapped axis 0 takes them from its other end.
  auto at = [&](index_t p) { return (f.wrap[0] ? (p < 0 ? p + n0 : p >= n0 ? p - n0 : p) : p) * sx + base; };
  auto load = [&](index_t o) { return *reinterpret_cast<const V*>(u + o); };
  struct Side { V ny, py; T l, r; };  // a plane's neighbours of the vector within the plane
  auto side = [&](index_t o) { return Side{load(o + ym), load(o + yp), u[o + zm], u[o + zp]}; };
  V below = load(at(i0 - 1)), here = load(at(i0)), above = load(at(i0 + 1));
  Side s = side(at(i0));
#pragma unroll 2
  for (index_t i = i0; i < i1; ++i) {
    const index_t off = at(i);
    V ahead{};
    Side next{};
    if (kAhead && i + 1 < i1) ahead = load(at(i + 2)), next = side(at(i + 1));
    V out;
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const T zl = e == 0 ? s.l : lane<T>(here, e - 1), zr = e == W - 1 ? s.r : lane<T>(here, e + 1);
      lane<T>(out, e) = c.c0 * lane<T>(here, e) + c.cx * (lane<T>(below, e) + lane<T>(above, e)) +
                        c.cy * (lane<T>(s.ny, e) + lane<T>(s.py, e)) + c.cz * (zl + zr);
    }
    __stcs(reinterpret_cast<V*>(v + off), out);
    below = here;
    here = above;
    if constexpr (kAhead) {
      above = ahead, s = next;
    } else if (i + 1 < i1) {
      above = load(at(i + 2)), s = side(at(i + 1));
    }
  }
}

// The marching kernels' grid over box b: `cells` along axis 2 and `rows` along axis 1 per block,
// kMarch planes along axis 0.
dim3 march_grid(const Box& b, index_t cells, int rows) {
  const dim3 grid(static_cast<unsigned>((b.hi[2] - b.lo[2] + cells - 1) / cells),
                  static_cast<unsigned>((b.hi[1] - b.lo[1] + rows - 1) / rows),
                  static_cast<unsigned>((b.hi[0] - b.lo[0] + kMarch - 1) / kMarch));
  if (grid.y > 65535 || grid.z > 65535)
    throw tessera::InvalidArgument("heat3d: block of " + std::to_string(b.hi[1] - b.lo[1]) + " x " +
                                   std::to_string(b.hi[0] - b.lo[0]) + " rows is too large for one launch");
  return grid;
}

// Whether the vector kernel fits the box: 16-byte aligned rows, whole vectors along axis 2.
template <class T>
bool vec_fits(const Field<T>& u, const Field<T>& v, const Box& b) {
  constexpr int W = Vec<T>::n;
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return aligned(u.origin) && aligned(v.origin) && u.sx % W == 0 && u.sy % W == 0 && v.sx == u.sx &&
         v.sy == u.sy && b.lo[2] % W == 0 && (b.hi[2] - b.lo[2]) % W == 0 && (!u.wrap[2] || u.n[2] % W == 0);
}

template <class T, bool kAhead>
void launch_interior_vec(const Field<T>& u, const Field<T>& v, const Coeffs<T>& c, const Box& b, cudaStream_t s) {
  interior_vec_kernel<T, kAhead><<<march_grid(b, kTx * Vec<T>::n, 8), dim3(kTx, 8), 0, s>>>(u.origin, v.origin, u, c, b);
}

template <class T, int kTy, bool kStream>
void launch_interior(const Field<T>& u, const Field<T>& v, const Coeffs<T>& c, const Box& b, cudaStream_t s) {
  interior_kernel<T, kTy, kStream><<<march_grid(b, kTx, kTy), dim3(kTx, kTy), 0, s>>>(u.origin, v.origin, u, c, b);
}

template <class T>
__global__ void shell_kernel(const T* __restrict__ u, T* __restrict__ v, Field<T> f, Coeffs<T> c, Region r,
                             index_t total) {
  const index_t s[3] = {f.sx, f.sy, 1};
  for (index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<index_t>(gridDim.x) * blockDim.x) {
    index_t rem = t;
    int b = 0;
    while (rem >= r.box[b].size()) rem -= r.box[b++].size();
    const Box& x = r.box[b];
    const index_t nk = x.hi[2] - x.lo[2], nj = x.hi[1] - x.lo[1];
    const index_t idx[3] = {x.lo[0] + rem / (nj * nk), x.lo[1] + rem / nk % nj, x.lo[2] + rem % nk};
    const index_t off = idx[0] * f.sx + idx[1] * f.sy + idx[2];
    T acc[3];
    for (int a = 0; a < 3; ++a) {  // neighbours past a wrapped end come from the other end
      const index_t minus = f.wrap[a] && idx[a] == 0 ? (f.n[a] - 1) * s[a] : -s[a];
      const index_t plus = f.wrap[a] && idx[a] == f.n[a] - 1 ? -(f.n[a] - 1) * s[a] : s[a];
      acc[a] = u[off + minus] + u[off + plus];
    }
    v[off] = c.c0 * u[off] + c.cx * acc[0] + c.cy * acc[1] + c.cz * acc[2];
  }
}

__device__ double mode_at(const Mode& m, index_t i, index_t j, index_t k) {
  return cos(m.k[0] * (m.lo[0] + i) * m.h[0]) * sin(m.k[1] * (m.lo[1] + j) * m.h[1]) *
         sin(m.k[2] * (m.lo[2] + k) * m.h[2]);
}

template <class T>
__global__ void fill_kernel(T* u, index_t sx, index_t sy, index_t n0, index_t n1, index_t n2, Mode m, double amp) {
  const index_t total = n0 * n1 * n2;
  for (index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t i = t / (n1 * n2), j = t / n2 % n1, k = t % n2;
    u[i * sx + j * sy + k] = static_cast<T>(amp * mode_at(m, i, j, k));
  }
}

// Block sums of the three error terms, added to out[0..2] with one atomic per block and term.
template <class T>
__global__ void error_kernel(const T* u, index_t sx, index_t sy, index_t n0, index_t n1, index_t n2, Mode m, double a0,
                             double a1, double* out) {
  double acc[3] = {0, 0, 0};
  const index_t total = n0 * n1 * n2;
  for (index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t i = t / (n1 * n2), j = t / n2 % n1, k = t % n2;
    const double s = mode_at(m, i, j, k), x = static_cast<double>(u[i * sx + j * sy + k]);
    acc[0] += (x - a0 * s) * (x - a0 * s), acc[1] += (x - a1 * s) * (x - a1 * s), acc[2] += s * s;
  }
  __shared__ double warp_sums[3][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int q = 0; q < 3; ++q) {
    for (int o = 16; o > 0; o /= 2) acc[q] += __shfl_down_sync(0xffffffffu, acc[q], o);
    if (lane == 0) warp_sums[q][warp] = acc[q];
  }
  __syncthreads();
  if (warp == 0) {
    for (int q = 0; q < 3; ++q) {
      double s = lane < static_cast<int>(blockDim.x / 32) ? warp_sums[q][lane] : 0.0;
      for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
      if (lane == 0) atomicAdd(out + q, s);
    }
  }
}

int grid_stride_blocks(index_t n, int threads) {
  const index_t want = (n + threads - 1) / threads;
  return static_cast<int>(want < 65536 ? (want > 0 ? want : 1) : 65536);
}

}  // namespace

template <class T>
void update(const Field<T>& u, const Field<T>& v, const Coeffs<T>& c, const Region& r, Variant variant, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const index_t total = r.size();
  if (total == 0) return;
  if (r.interior) {  // the marching kernel
    switch (variant) {
      case Variant::plain: launch_interior<T, 8, false>(u, v, c, r.box[0], s); break;
      case Variant::wide: launch_interior<T, 16, false>(u, v, c, r.box[0], s); break;
      case Variant::stream: launch_interior<T, 8, true>(u, v, c, r.box[0], s); break;
      case Variant::wide_stream: launch_interior<T, 16, true>(u, v, c, r.box[0], s); break;
      case Variant::vec:  // where the box allows 16-byte vectors, else `stream`
      case Variant::vec_ahead:
        if (!vec_fits(u, v, r.box[0])) launch_interior<T, 8, true>(u, v, c, r.box[0], s);
        else if (variant == Variant::vec) launch_interior_vec<T, false>(u, v, c, r.box[0], s);
        else launch_interior_vec<T, true>(u, v, c, r.box[0], s);
        break;
    }
  } else {
    shell_kernel<T><<<grid_stride_blocks(total, 256), 256, 0, s>>>(u.origin, v.origin, u, c, r, total);
  }
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

template <class T>
void fill_mode(const Field<T>& u, const Mode& m, double amplitude, void* stream) {
  const index_t total = u.n[0] * u.n[1] * u.n[2];
  if (total == 0) return;
  fill_kernel<T><<<grid_stride_blocks(total, 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      u.origin, u.sx, u.sy, u.n[0], u.n[1], u.n[2], m, amplitude);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

template <class T>
std::array<double, 3> error_sums(const Field<T>& u, const Mode& m, double a0, double a1, tessera::Device d,
                                 void* stream) {
  std::array<double, 3> h{0, 0, 0};
  const index_t total = u.n[0] * u.n[1] * u.n[2];
  if (total == 0) return h;
  const auto s = static_cast<cudaStream_t>(stream);
  tessera::local::Array<double, 1> out({3}, d);  // from the device's stream-ordered pool
  TESSERA_CHECK_CUDA(cudaMemsetAsync(out.data(), 0, 3 * sizeof(double), s));
  error_kernel<T><<<std::min(grid_stride_blocks(total, 256), 4096), 256, 0, s>>>(
      u.origin, u.sx, u.sy, u.n[0], u.n[1], u.n[2], m, a0, a1, out.data());
  TESSERA_CHECK_CUDA(cudaGetLastError());
  TESSERA_CHECK_CUDA(cudaMemcpyAsync(h.data(), out.data(), 3 * sizeof(double), cudaMemcpyDeviceToHost, s));
  TESSERA_CHECK_CUDA(cudaStreamSynchronize(s));
  return h;
}

#define HEAT3D_CUDA_INSTANTIATE(T)                                                                                  \
  template void update<T>(const Field<T>&, const Field<T>&, const Coeffs<T>&, const Region&, Variant, void*);      \
  template void fill_mode<T>(const Field<T>&, const Mode&, double, void*);                                         \
  template std::array<double, 3> error_sums<T>(const Field<T>&, const Mode&, double, double, tessera::Device, void*);
HEAT3D_CUDA_INSTANTIATE(float)
HEAT3D_CUDA_INSTANTIATE(double)
#undef HEAT3D_CUDA_INSTANTIATE

}  // namespace heat3d::cuda
