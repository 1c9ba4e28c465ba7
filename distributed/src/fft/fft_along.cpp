// Transforms along some axes of a distributed array (fft.hpp: fft_along, rfft_along, irfft_along):
// numpy.fft.fftn(x, axes=...) when the axes are held whole. Every rank transforms its block with
// batched local plans, one per run of at most three adjacent axes: a run that ends at the last
// axis is one packed batch; an inner run strides over the axes after it (its batches adjacent)
// and is repeated per outer block. No communication.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "../detail/kernels.hpp"
#include "stages.hpp"
#include "tessera/fft/fft.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/fft_plan.hpp"

namespace tessera::fft {
namespace {
namespace lf = local::fft;
using detail::norm_factor;
using detail::prod;
using distributed::Index;

// The axes as numpy reads them (negative from the end), checked: distinct, in range, none split
// over more than one rank (InvalidArgument naming the first that is).
template <int R>
std::vector<int> checked_axes(const Layout<R>& l, const std::vector<int>& axes, const char* op) {
  if (axes.empty()) throw InvalidArgument(std::string("fft::") + op + ": no axes to transform");
  std::vector<int> out;
  for (int a : axes) {
    const int k = a < 0 ? a + R : a;
    if (k < 0 || k >= R)
      throw InvalidArgument(std::string("fft::") + op + ": axis " + std::to_string(a) + " is out of range for a " +
                            std::to_string(R) + "-D array");
    for (int b : out)
      if (b == k) throw InvalidArgument(std::string("fft::") + op + ": axis " + std::to_string(a) + " is repeated");
    const int g = l.split()[k];
    if (g >= 0 && l.grid().dims()[g] > 1)
      throw InvalidArgument(std::string("fft::") + op + ": axis " + std::to_string(k) + " is split over " +
                            std::to_string(l.grid().dims()[g]) + " ranks in " + l.str() +
                            " (redistribute it whole first)");
    out.push_back(k);
  }
  return out;
}

// x's blocks (no halos), `axis` of extent n (held whole).
template <int R>
Layout<R> with_extent(const Layout<R>& l, int axis, index_t n) {
  Index<R> shape = l.global_shape();
  shape[axis] = n;
  typename Layout<R>::Offsets off;
  for (int a = 0; a < R; ++a) off[a] = l.offsets(a);
  off[axis] = {0, n};
  return Layout<R>(l.grid(), shape, l.split(), off, Index<R>{}, l.periodic());
}

// x's block, packed, on the default stream of x's device: x's interior itself when it is
// contiguous (after x's stream), else a copy (the R2C's input).
template <class T, int R>
local::Array<T, R> packed(const Array<T, R>& x) {
  const Stream& s = Stream::default_for(x.device());
  s.wait_for(x.stream());
  local::Array<T, R> in = x.interior();
  if (in.is_contiguous()) return in;
  local::Array<T, R> p(in.shape(), x.device());
  local::copy(p, in);
  return p;
}

// One local pass over packed blocks: `kind` along axes [first, last] of the input block
// `in_shape` into the output block `out_shape`.
template <class Real, int R>
struct Pass {
  lf::Kind kind;
  lf::Direction dir;
  int first, last;
  Index<R> in_shape, out_shape;  // the blocks; equal but along `last` for r2c/c2r
  index_t n_last;                // the logical (real) size along `last`
};

template <class Real, int R>
void run_pass(const Pass<Real, R>& ps, const void* in, void* out, Device dev) {
  const Index<R>& is = ps.in_shape;
  const Index<R>& os = ps.out_shape;
  if (local::shape_size(is) == 0 || local::shape_size(os) == 0) return;
  lf::PlanDesc p;
  p.device = dev;
  p.kind = ps.kind;
  p.precision = lf::precision_of<Real>();
  p.rank = ps.last - ps.first + 1;
  p.in_place = in == out;
  p.preserve_input = false;  // c2r reads a work copy of the caller's spectrum
  for (int k = 0; k < p.rank; ++k) {
    p.n[k] = ps.first + k == ps.last ? ps.n_last : is[ps.first + k];
    p.inembed[k] = is[ps.first + k];
    p.onembed[k] = os[ps.first + k];
  }
  const index_t inner = prod<R>(is, ps.last + 1, R);
  const index_t outer = prod<R>(is, 0, ps.first);
  const index_t in_run = prod<R>(is, ps.first, ps.last + 1) * inner;  // elements per outer block
  const index_t out_run = prod<R>(os, ps.first, ps.last + 1) * inner;
  p.istride = p.ostride = inner;
  p.idist = inner == 1 ? in_run : 1;
  p.odist = inner == 1 ? out_run : 1;
  p.batch = inner == 1 ? outer : inner;
  const auto plan = lf::get_plan(p);
  const Stream& s = Stream::default_for(dev);
  const std::size_t in_size = ps.kind == lf::Kind::r2c ? sizeof(Real) : 2 * sizeof(Real);
  const std::size_t out_size = ps.kind == lf::Kind::c2r ? sizeof(Real) : 2 * sizeof(Real);
  auto at = [](const void* base, index_t elements, std::size_t size) {
    return static_cast<char*>(const_cast<void*>(base)) + elements * static_cast<index_t>(size);
  };
  if (inner == 1) return plan->execute(in, out, ps.dir, s);
  // cuFFT needs real data aligned to its complex type: an outer block of an odd number of reals
  // at an odd position goes through an aligned buffer.
  auto odd = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % (2 * sizeof(Real)) != 0; };
  for (index_t o = 0; o < outer; ++o) {
    void* i = at(in, o * in_run, in_size);
    void* w = at(out, o * out_run, out_size);
    if (dev.is_cuda() && ps.kind == lf::Kind::r2c && odd(i)) {
      local::Array<Real, 1> tmp(Index<1>{in_run}, dev);
      local::copy(tmp, local::Array<Real, 1>::view(static_cast<Real*>(i), Index<1>{in_run}, dev));
      plan->execute(tmp.data(), w, ps.dir, s);
    } else if (dev.is_cuda() && ps.kind == lf::Kind::c2r && odd(w)) {
      local::Array<Real, 1> tmp(Index<1>{out_run}, dev);
      plan->execute(i, tmp.data(), ps.dir, s);
      local::copy(local::Array<Real, 1>::view(static_cast<Real*>(w), Index<1>{out_run}, dev), tmp);
    } else {
      plan->execute(i, w, ps.dir, s);
    }
  }
}

// C2C passes in place over `data` (shape `shape`) along `axes`: runs of adjacent axes, at most
// three to a plan.
template <class Real, int R>
void c2c_passes(std::complex<Real>* data, const Index<R>& shape, std::vector<int> axes, bool forward, Device dev) {
  std::sort(axes.begin(), axes.end());
  for (std::size_t i = 0; i < axes.size();) {
    std::size_t j = i;
    while (j + 1 < axes.size() && axes[j + 1] == axes[j] + 1 && j + 1 - i < 3) ++j;
    Pass<Real, R> ps{lf::Kind::c2c, forward ? lf::Direction::forward : lf::Direction::backward,
                     axes[i], axes[j], shape, shape, shape[axes[j]]};
    run_pass<Real, R>(ps, data, data, dev);
    i = j + 1;
  }
}

template <int R>
double points_along(const Index<R>& shape, const std::vector<int>& axes) {
  double n = 1;
  for (int a : axes) n *= static_cast<double>(shape[a]);
  return n;
}

template <class Real>
void scale_by(std::complex<Real>* data, index_t n, double factor, Device dev) {
  if (factor != 1.0 && n > 0)
    distributed::detail::scale_kernel<Real>(reinterpret_cast<Real*>(data), 2 * static_cast<std::size_t>(n), factor,
                                            Stream::default_for(dev));
}
template <class Real>
void scale_by(Real* data, index_t n, double factor, Device dev) {
  if (factor != 1.0 && n > 0)
    distributed::detail::scale_kernel<Real>(data, static_cast<std::size_t>(n), factor, Stream::default_for(dev));
}

}  // namespace

template <class T, int R>
Array<T, R> fft_along(const Array<T, R>& x, const std::vector<int>& axes, bool forward, Norm norm) {
  using Real = typename detail::RealOf<T>::type;
  const auto ax = checked_axes(x.layout(), axes, "fft_along");
  const Device dev = x.device();
  Array<T, R> y(x.layout().with_halo({}), dev);
  Stream::default_for(dev).wait_for(x.stream());
  local::copy(y.local(), x.interior());  // the transforms run in place on the copy
  c2c_passes<Real, R>(y.local().data(), y.local().shape(), ax, forward, dev);
  scale_by<Real>(y.local().data(), y.local().size(), norm_factor(norm, forward, points_along<R>(x.global_shape(), ax)),
                 dev);
  return y;
}

template <class T, int R>
Array<std::complex<T>, R> rfft_along(const Array<T, R>& x, const std::vector<int>& axes, Norm norm) {
  using C = std::complex<T>;
  const auto ax = checked_axes(x.layout(), axes, "rfft_along");
  const Device dev = x.device();
  const int last = ax.back();
  const index_t n = x.global_shape()[last];
  Array<C, R> y(with_extent(x.layout(), last, n / 2 + 1), dev);
  const local::Array<T, R> in = packed(x);
  run_pass<T, R>(Pass<T, R>{lf::Kind::r2c, lf::Direction::forward, last, last, in.shape(), y.local().shape(), n},
                 in.data(), y.local().data(), dev);
  c2c_passes<T, R>(y.local().data(), y.local().shape(), std::vector<int>(ax.begin(), ax.end() - 1), true, dev);
  scale_by<T>(y.local().data(), y.local().size(), norm_factor(norm, true, points_along<R>(x.global_shape(), ax)),
              dev);
  return y;
}

template <class T, int R>
Array<T, R> irfft_along(const Array<std::complex<T>, R>& y, const std::vector<int>& axes, index_t n, Norm norm) {
  using C = std::complex<T>;
  const auto ax = checked_axes(y.layout(), axes, "irfft_along");
  const Device dev = y.device();
  const int last = ax.back();
  if (n < 1 || n / 2 + 1 != y.global_shape()[last])
    throw InvalidArgument("fft::irfft_along: " + std::to_string(n) + " real values along axis " + std::to_string(last) +
                          " need " + std::to_string(n / 2 + 1) + " complex ones, the spectrum has " +
                          std::to_string(y.global_shape()[last]));
  // The C2R transform overwrites its input: it reads a work copy (the caller's spectrum stays).
  local::Array<C, R> work(y.interior().shape(), dev);
  Stream::default_for(dev).wait_for(y.stream());
  local::copy(work, y.interior());
  c2c_passes<T, R>(work.data(), work.shape(), std::vector<int>(ax.begin(), ax.end() - 1), false, dev);
  Array<T, R> x(with_extent(y.layout(), last, n), dev);
  run_pass<T, R>(Pass<T, R>{lf::Kind::c2r, lf::Direction::backward, last, last, work.shape(), x.local().shape(), n},
                 work.data(), x.local().data(), dev);
  Index<R> real_shape = y.global_shape();
  real_shape[last] = n;
  scale_by<T>(x.local().data(), x.local().size(), norm_factor(norm, false, points_along<R>(real_shape, ax)), dev);
  return x;
}

#define TESSERA_FFT_ALONG(T, R)                                                                                  \
  template Array<std::complex<T>, R> fft_along(const Array<std::complex<T>, R>&, const std::vector<int>&, bool, \
                                               Norm);                                                            \
  template Array<std::complex<T>, R> rfft_along(const Array<T, R>&, const std::vector<int>&, Norm);              \
  template Array<T, R> irfft_along(const Array<std::complex<T>, R>&, const std::vector<int>&, index_t, Norm);
#define TESSERA_FFT_ALONG_RANKS(T) \
  TESSERA_FFT_ALONG(T, 1) TESSERA_FFT_ALONG(T, 2) TESSERA_FFT_ALONG(T, 3) TESSERA_FFT_ALONG(T, 4)
TESSERA_FFT_ALONG_RANKS(float)
TESSERA_FFT_ALONG_RANKS(double)

}  // namespace tessera::fft
