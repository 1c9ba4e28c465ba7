// heat3d's kernels: the explicit 7-point update v = u + dt*alpha*lap(u) over boxes of a shard, the
// initial sine mode, and the error sums against a scaled mode. Host: OpenMP loops
// (stencil_host.cpp); CUDA: stencil.cu. Each call is one kernel (one parallel loop) per region.
//
// Bytes per cell: the update reads u and writes v once each, 2*sizeof(T) (16 B for double). The
// six neighbour reads hit L1/L2 (the GPU kernel marches along axis 0 and keeps u[i-1], u[i],
// u[i+1] in registers), so HBM traffic stays at the model when the cache works.
#pragma once
#include <array>
#include <string>

#include <tessera/tessera.hpp>

#ifdef __CUDACC__
#define HEAT3D_HD __host__ __device__
#else
#define HEAT3D_HD
#endif

namespace heat3d {

using tessera::local::index_t;

// A box [lo, hi) of cells in shard-interior coordinates (0 = the first non-halo cell).
struct Box {
  index_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  HEAT3D_HD index_t size() const {
    index_t s = 1;
    for (int a = 0; a < 3; ++a) s *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;
    return s;
  }
};

// Up to six disjoint boxes updated by one kernel (the boundary shell), or the interior box.
struct Region {
  Box box[6];
  int count = 0;
  bool interior = false;  // one box that needs no halo (interior_region)
  HEAT3D_HD index_t size() const {
    index_t s = 0;
    for (int b = 0; b < count; ++b) s += box[b].size();
    return s;
  }
};

// The cells of a block of shape n that need no halo ([1, n-1) along axes with halos, everything
// along wrapped axes), and the rest: one face pair per axis with halos, each leaving out the cells
// that an earlier axis' faces already hold.
Region interior_region(const std::array<index_t, 3>& n, const std::array<bool, 3>& wrap);
Region shell_region(const std::array<index_t, 3>& n, const std::array<bool, 3>& wrap);

// A block of shape n inside its shard: `origin` is its first cell, axis 2 is contiguous, axes 0
// and 1 have strides sx and sy (elements). Along an axis with wrap[a] the block is the whole
// periodic axis (one rank along it) and has no halo: neighbours past an end are taken from the
// other end in place, so the halo exchange only moves faces between ranks.
template <class T>
struct Field {
  T* origin;
  index_t sx, sy;
  index_t n[3];
  bool wrap[3];
};

// v = c0*u + cx*(u[i-1] + u[i+1]) + cy*(...) + cz*(...), with c_a = alpha*dt/h_a^2 and
// c0 = 1 - 2*(cx + cy + cz).
template <class T>
struct Coeffs {
  T c0, cx, cy, cz;
};

// The sine mode cos(kx x) sin(ky y) sin(kz z) at x = (lo[0] + i) * h[0], ... (2*pi-periodic box).
// cos along axis 0 so that its mid-plane x = pi (the PNG slice) is not a node of the mode.
struct Mode {
  int k[3] = {1, 1, 1};
  double h[3] = {1, 1, 1};
  index_t lo[3] = {0, 0, 0};
};

// The GPU interior kernel (--variant, for measurement). Default `vec-ahead`: each thread updates
// 16 bytes along axis 2 (2 doubles or 4 floats) with vector loads and streaming stores, and loads
// plane i+1's cells while it computes plane i (two planes of loads in flight per thread); where
// the rows are not 16-byte aligned it falls back to `stream`. `vec` is the same without the early
// loads. The scalar kernels: `stream` (one cell per thread, streaming stores), `plain` (ordinary
// stores), `wide` / `wide-stream` (16 rows of threads per block instead of 8).
// One H200, 512^3, % of the device copy in the same run (compare_local.sh): double vec-ahead
// 90.7, vec 83.8, stream 79.8; float 91.7, 83.4, 70.9 (ncu: DRAM 77% of peak against 70% for
// stream: the scalar march kept too few bytes in flight). Earlier: plain 3.28 TB/s, wide 3.06,
// wide-stream 3.40 against stream 3.43 (double); 2.5-D blocking with the plane in shared memory
// was slower (2.84 TB/s double, 1.85 float) and was dropped. The host loop has one form.
enum class Variant { plain, wide, stream, wide_stream, vec, vec_ahead };
inline constexpr const char* kVariantNames = "plain, wide, stream, wide-stream, vec or vec-ahead";
Variant parse_variant(const std::string& name);  // InvalidArgument unless one of kVariantNames

// Ordered on `stream` (a cudaStream_t as void*; null on host). The first two return at once on
// GPUs; error_sums synchronizes (its result is a host value).
template <class T>
void update(const Field<T>& u, const Field<T>& v, const Coeffs<T>& c, const Region& r, Variant variant,
            tessera::Device d, void* stream);
template <class T>
void fill_mode(const Field<T>& u, const Mode& m, double amplitude, tessera::Device d, void* stream);
// Over the block, in double: {sum (u - a0*s)^2, sum (u - a1*s)^2, sum s^2}, s = the mode.
template <class T>
std::array<double, 3> error_sums(const Field<T>& u, const Mode& m, double a0, double a1, tessera::Device d,
                                 void* stream);

// The CUDA versions (stencil.cu), called by the above for CUDA devices.
namespace cuda {
template <class T>
void update(const Field<T>& u, const Field<T>& v, const Coeffs<T>& c, const Region& r, Variant variant, void* stream);
template <class T> void fill_mode(const Field<T>& u, const Mode& m, double amplitude, void* stream);
template <class T>
std::array<double, 3> error_sums(const Field<T>& u, const Mode& m, double a0, double a1, tessera::Device d, void* stream);
}  // namespace cuda

}  // namespace heat3d
