// Host side of stencil.hpp: regions, OpenMP loops, and the dispatch to stencil.cu for GPUs.
#include "stencil.hpp"

#include <algorithm>
#include <cmath>

namespace heat3d {

Region interior_region(const std::array<index_t, 3>& n, const std::array<bool, 3>& wrap) {
  Region r;
  r.interior = true;
  Box b;
  for (int a = 0; a < 3; ++a) b.lo[a] = wrap[a] ? 0 : 1, b.hi[a] = wrap[a] ? n[a] : n[a] - 1;
  if (b.size() > 0) r.box[r.count++] = b;
  return r;
}

Region shell_region(const std::array<index_t, 3>& n, const std::array<bool, 3>& wrap) {
  Region r;
  for (int a = 0; a < 3; ++a) {
    if (wrap[a]) continue;  // no halo along a: its end cells belong to the interior
    Box face;
    for (int b = 0; b < 3; ++b) {
      const bool trimmed = b < a && !wrap[b];  // axes before a: their faces hold the outer cells already
      face.lo[b] = trimmed ? 1 : 0;
      face.hi[b] = trimmed ? n[b] - 1 : n[b];
    }
    face.hi[a] = 1;  // low face
    if (face.size() > 0) r.box[r.count++] = face;
    if (n[a] >= 2) {  // high face (a block of one cell has only the low one)
      face.lo[a] = n[a] - 1, face.hi[a] = n[a];
      if (face.size() > 0) r.box[r.count++] = face;
    }
  }
  return r;
}

Variant parse_variant(const std::string& name) {
  if (name == "plain") return Variant::plain;
  if (name == "wide") return Variant::wide;
  if (name == "stream") return Variant::stream;
  if (name == "wide-stream") return Variant::wide_stream;
  if (name == "vec") return Variant::vec;
  if (name == "vec-ahead") return Variant::vec_ahead;
  throw tessera::InvalidArgument("--variant '" + name + "': expected " + kVariantNames);
}

namespace {
#if !TESSERA_HAVE_CUDA
[[noreturn]] void no_cuda(const char* what, tessera::Device d) {
  throw tessera::BackendUnavailable(std::string("heat3d: ") + what + " on " + d.str() +
                                        ": this build has no CUDA backend (configure with nvcc found)",
                                    d);
}
#endif

double mode_at(const Mode& m, index_t i, index_t j, index_t k) {
  return std::cos(m.k[0] * (m.lo[0] + i) * m.h[0]) * std::sin(m.k[1] * (m.lo[1] + j) * m.h[1]) *
         std::sin(m.k[2] * (m.lo[2] + k) * m.h[2]);
}
}  // namespace

// Offsets of the -1 and +1 neighbours of cell i along an axis of n cells and stride s.
inline void neighbours(index_t i, index_t n, index_t s, bool wrap, index_t& minus, index_t& plus) {
  minus = wrap && i == 0 ? (n - 1) * s : -s;
  plus = wrap && i == n - 1 ? -(n - 1) * s : s;
}

template <class T>
void update(const Field<T>& u, const Field<T>& v, const Coeffs<T>& c, const Region& r, Variant variant,
            tessera::Device d, void* stream) {
  if (d.is_cuda()) {
#if TESSERA_HAVE_CUDA
    return cuda::update(u, v, c, r, variant, stream);
#else
    no_cuda("update", d);
#endif
  }
  (void)variant, (void)stream;  // host work runs now, in its one form
  const index_t sx = u.sx, sy = u.sy, nz = u.n[2];
  for (int b = 0; b < r.count; ++b) {
    const Box& x = r.box[b];
    // Cells 1..nz-2 of a row need no wrap along axis 2: a loop the compiler vectorizes.
    const index_t k0 = std::max<index_t>(x.lo[2], 1), k1 = std::min<index_t>(x.hi[2], nz - 1);
#if defined(_OPENMP)
#pragma omp parallel for collapse(2) schedule(static)
#endif
    for (index_t i = x.lo[0]; i < x.hi[0]; ++i)
      for (index_t j = x.lo[1]; j < x.hi[1]; ++j) {
        index_t xm, xp, ym, yp;
        neighbours(i, u.n[0], sx, u.wrap[0], xm, xp);
        neighbours(j, u.n[1], sy, u.wrap[1], ym, yp);
        const T* __restrict__ p = u.origin + i * sx + j * sy;
        T* __restrict__ q = v.origin + i * v.sx + j * v.sy;
        auto cell = [&](index_t k) {
          index_t zm, zp;
          neighbours(k, nz, 1, u.wrap[2], zm, zp);
          q[k] = c.c0 * p[k] + c.cx * (p[k + xm] + p[k + xp]) + c.cy * (p[k + ym] + p[k + yp]) +
                 c.cz * (p[k + zm] + p[k + zp]);
        };
        if (x.lo[2] == 0) cell(0);
        for (index_t k = k0; k < k1; ++k)
          q[k] = c.c0 * p[k] + c.cx * (p[k + xm] + p[k + xp]) + c.cy * (p[k + ym] + p[k + yp]) +
                 c.cz * (p[k - 1] + p[k + 1]);
        if (x.hi[2] == nz && nz > 1) cell(nz - 1);
      }
  }
}

template <class T>
void fill_mode(const Field<T>& u, const Mode& m, double amplitude, tessera::Device d, void* stream) {
  if (d.is_cuda()) {
#if TESSERA_HAVE_CUDA
    return cuda::fill_mode(u, m, amplitude, stream);
#else
    no_cuda("fill_mode", d);
#endif
  }
  (void)stream;
#if defined(_OPENMP)
#pragma omp parallel for collapse(2) schedule(static)
#endif
  for (index_t i = 0; i < u.n[0]; ++i)
    for (index_t j = 0; j < u.n[1]; ++j)
      for (index_t k = 0; k < u.n[2]; ++k)
        u.origin[i * u.sx + j * u.sy + k] = static_cast<T>(amplitude * mode_at(m, i, j, k));
}

template <class T>
std::array<double, 3> error_sums(const Field<T>& u, const Mode& m, double a0, double a1, tessera::Device d,
                                 void* stream) {
  if (d.is_cuda()) {
#if TESSERA_HAVE_CUDA
    return cuda::error_sums(u, m, a0, a1, d, stream);
#else
    no_cuda("error_sums", d);
#endif
  }
  (void)stream;
  double e0 = 0, e1 = 0, ss = 0;
#if defined(_OPENMP)
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : e0, e1, ss)
#endif
  for (index_t i = 0; i < u.n[0]; ++i)
    for (index_t j = 0; j < u.n[1]; ++j)
      for (index_t k = 0; k < u.n[2]; ++k) {
        const double s = mode_at(m, i, j, k), x = static_cast<double>(u.origin[i * u.sx + j * u.sy + k]);
        e0 += (x - a0 * s) * (x - a0 * s), e1 += (x - a1 * s) * (x - a1 * s), ss += s * s;
      }
  return {e0, e1, ss};
}

#define HEAT3D_INSTANTIATE(T)                                                                                       \
  template void update<T>(const Field<T>&, const Field<T>&, const Coeffs<T>&, const Region&, Variant, tessera::Device,  \
                          void*);                                                                                  \
  template void fill_mode<T>(const Field<T>&, const Mode&, double, tessera::Device, void*);                        \
  template std::array<double, 3> error_sums<T>(const Field<T>&, const Mode&, double, double, tessera::Device, void*);
HEAT3D_INSTANTIATE(float)
HEAT3D_INSTANTIATE(double)
#undef HEAT3D_INSTANTIATE

}  // namespace heat3d
