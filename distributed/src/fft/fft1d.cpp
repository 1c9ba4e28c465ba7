// The 1-D distributed FFT (fft1d.hpp): four-step over the exchange engine, Bluestein for primes,
// R2C/C2R through the complex transform.
#include "fft1d.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "../detail/kernels.hpp"
#include "../detail/twiddle_phase.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/fft_plan.hpp"

namespace tessera::fft::detail {
namespace {
namespace lf = local::fft;
using distributed::Box;
using distributed::ProcessGrid;
template <class T> using Buf = local::Array<T, 1>;

// Each rank's block of `l`, cut to [0, clip).
std::vector<Box<1>> boxes(const Layout<1>& l, index_t clip) {
  std::vector<Box<1>> b(l.grid().size());
  for (int r = 0; r < l.grid().size(); ++r) {
    const auto x = l.local_box(r);
    b[r].lo[0] = std::min(x.lo[0], clip);
    b[r].hi[0] = std::min(x.hi[0], clip);
  }
  return b;
}
template <int D> std::vector<Box<D>> boxes(const Layout<D>& l) {
  std::vector<Box<D>> b(l.grid().size());
  for (int r = 0; r < l.grid().size(); ++r) b[r] = l.local_box(r);
  return b;
}

// 1-D blocks of whole rows of an N1 x N2 row-major matrix split by rows (uneven when P does not divide N1).
Layout<1> row_blocks(const ProcessGrid& g, index_t N1, index_t N2) {
  const Layout<2> rows(g, {N1, N2}, {0, -1});
  std::vector<index_t> o = rows.offsets(0);
  for (auto& v : o) v *= N2;
  return Layout<1>(g, {N1 * N2}, {0}, typename Layout<1>::Offsets{o}, {});
}

}  // namespace

// One complex transform of length n over a 1-D grid: four-step when n = n1*n2, else Bluestein.
template <class Real>
struct C2c1d {
  using C = std::complex<Real>;
  Device dev;
  ProcessGrid g;
  index_t n, n1 = 0, n2 = 0;  // n1 == 0: Bluestein
  bool natural;
  int chunks;
  Layout<1> in, out;
  std::unique_ptr<C2c1d> inner;  // Bluestein's length-M plan (transposed output)
  Buf<C> bhat[2];                // its spectra of the chirp (forward, backward), times 1/M

  C2c1d(const ProcessGrid& grid, index_t len, Device d, bool nat, int ch)
      : dev(d), g(grid), n(len), natural(nat), chunks(ch), in(row_blocks(grid, 1, len)), out(in) {
    const index_t P = g.size();
    index_t best = 0;
    for (index_t a = 2; a * a <= n; ++a) {  // factor pairs, the smaller factor first
      if (n % a) continue;
      for (index_t f : {a, n / a}) {
        const index_t h = n / f, cost = std::max((f + P - 1) / P * h, (h + P - 1) / P * f);
        if (n1 == 0 || cost < best || (cost == best && std::max(f, h) < std::max(n1, n2))) n1 = f, n2 = h, best = cost;
      }
    }
    if (n1) {
      in = row_blocks(g, n1, n2);
      out = natural ? row_blocks(g, n2, n1) : in;
      return;
    }
    in = out = Layout<1>(g, {n}, {0});  // Bluestein: balanced, natural both ways
    index_t M = std::max<index_t>(2 * n - 1, 4);
    auto smooth = [](index_t m) {
      for (index_t p : {2, 3, 5, 7})
        while (m % p == 0) m /= p;
      return m == 1;
    };
    while (!smooth(M) || M == 5 || M == 7) ++M;  // composite: the inner plan is a four-step one
    inner = std::make_unique<C2c1d>(g, M, d, false, ch);
    const auto box = inner->in.local_box();
    for (int s = 0; s < 2; ++s) {  // b[m] = exp(-sign*i*pi*m^2/n) for |m| < n, wrapped mod M
      const int sign = s == 0 ? -1 : 1;
      std::vector<C> b(static_cast<std::size_t>(box.size()));
      for (index_t m = box.lo[0]; m < box.hi[0]; ++m) {
        const index_t k = m < n ? m : M - m < n ? M - m : -1;
        if (k < 0) continue;
        const auto k2 = distributed::detail::mul_mod(k, k, 2 * n);  // exact: the phase's period is 2n
        const double a = -sign * std::numbers::pi * static_cast<double>(k2) / static_cast<double>(n);
        b[m - box.lo[0]] = C(std::cos(a), std::sin(a));
      }
      Buf<C> bd(box.shape(), dev);
      local::copy(bd, Buf<C>::view(b.data(), box.shape(), Device::host()));
      bhat[s] = inner->forward(bd, -1, 1.0 / static_cast<double>(M));
    }
  }

  const comm::ProcessGroup& group() const { return g.group(); }
  const Stream& work() const { return Stream::default_for(dev); }

  template <int D>
  local::Array<C, D> move(const local::Array<C, D>& a, const Layout<D>& from, const Layout<D>& to) const {
    local::Array<C, D> b(to.local_shape(), dev);
    distributed::exchange<C, D>(group(), {boxes(from), a}, {boxes(to), b}, work(), dev, {.chunks = chunks});
    return b;
  }
  // The same, with `a` written by produce(lo, hi, stream) in parts [lo, hi) along `axis`: the
  // local FFT of part k+1 runs while part k travels (exchange.hpp's ExchangeChunking).
  template <class F>
  local::Array<C, 2> move(const local::Array<C, 2>& a, const Layout<2>& from, const Layout<2>& to, int axis,
                          F produce) const {
    local::Array<C, 2> b(to.local_shape(), dev);
    const index_t e = a.shape()[axis];
    const distributed::ExchangeChunking ch{axis, chunks, [&](int s, int k, const Stream& on) {
                                             produce(distributed::chunk_begin(e, s, k),
                                                     distributed::chunk_begin(e, s + 1, k), on);
                                           }};
    distributed::exchange<C, 2>(group(), {boxes(from), a}, {boxes(to), b}, work(), dev, {.chunking = &ch});
    return b;
  }
  // `batch` transforms of length `len`: element t of transform b at [b*dist + t*stride].
  void fft(const C* i, C* o, index_t len, index_t batch, index_t is, index_t id, index_t os, index_t od, int sign,
           const Stream& on) const {
    if (batch <= 0) return;
    lf::PlanDesc p;
    p.device = dev;
    p.kind = lf::Kind::c2c;
    p.precision = lf::precision_of<Real>();
    p.rank = 1;
    p.n[0] = len;
    p.batch = batch;
    p.inembed[0] = p.onembed[0] = len;
    p.istride = is, p.idist = id, p.ostride = os, p.odist = od;
    p.in_place = i == o;
    lf::get_plan(p)->execute(i, o, sign < 0 ? lf::Direction::forward : lf::Direction::backward, on);
  }
  void twiddle(C* d, distributed::detail::Twiddle t, const Stream& on) const {
    if (t.rows * t.cols > 0) distributed::detail::twiddle_kernel<Real>(d, t, on);
  }

  // The four-step pass over an N1 x N2 view (rows of N2 in, see fft1d.hpp); the output is C
  // split by rows (nat == false) or X in blocks of whole N1-rows (nat == true).
  Buf<C> four_step(const Buf<C>& x, index_t N1, index_t N2, int sign, double scale, bool nat) const {
    const Layout<2> rows(g, {N1, N2}, {0, -1}), cols(g, {N1, N2}, {-1, 0});
    const auto rl = rows.local_shape()[0];
    auto b = move<2>(x.template reshape<2>({rl, N2}), rows, cols);  // N1 x cl
    const index_t cl = b.shape()[1], c0 = cols.local_box().lo[1];
    auto c = move(b, cols, rows, 1, [&](index_t lo, index_t hi, const Stream& on) {  // columns [lo, hi)
      fft(b.data() + lo, b.data() + lo, N1, hi - lo, cl, 1, cl, 1, sign, on);
      twiddle(b.data() + lo, {N1, hi - lo, cl, 0, c0 + lo, N1 * N2, false, sign, scale}, on);
    });  // rl x N2
    if (!nat) {
      fft(c.data(), c.data(), N2, rl, 1, N2, 1, N2, sign, work());
      return c.template reshape<1>({rl * N2});
    }
    local::Array<C, 2> d({N2, rl}, dev);  // rows stored transposed: columns of the N2 x N1 result
    const Layout<2> tcols(g, {N2, N1}, {-1, 0}), trows(g, {N2, N1}, {0, -1});
    auto e = move(d, tcols, trows, 1, [&](index_t lo, index_t hi, const Stream& on) {
      fft(c.data() + lo * N2, d.data() + lo, N2, hi - lo, 1, N2, rl, 1, sign, on);
    });
    return e.template reshape<1>({e.size()});
  }
  // The inverse order of the transposed four-step: C split by rows back to x in rows of n2.
  Buf<C> four_step_back(const Buf<C>& y, int sign, double scale) const {
    const Layout<2> rows(g, {n1, n2}, {0, -1}), cols(g, {n1, n2}, {-1, 0});
    const auto rl = rows.local_shape()[0], r0 = rows.local_box().lo[0];
    local::Array<C, 2> a({rl, n2}, dev);  // out of place: y is the caller's
    auto b = move(a, rows, cols, 0, [&](index_t lo, index_t hi, const Stream& on) {  // rows [lo, hi)
      fft(y.data() + lo * n2, a.data() + lo * n2, n2, hi - lo, 1, n2, 1, n2, sign, on);
      twiddle(a.data() + lo * n2, {hi - lo, n2, n2, r0 + lo, 0, n, false, sign, scale}, on);
    });
    const index_t cl = b.shape()[1];
    auto e = move(b, cols, rows, 1, [&](index_t lo, index_t hi, const Stream& on) {
      fft(b.data() + lo, b.data() + lo, n1, hi - lo, cl, 1, cl, 1, sign, on);
    });
    return e.template reshape<1>({e.size()});
  }
  // Bluestein: X[k] = c_k * sum_j (x_j c_j) conj(c_(k-j)), c_j = exp(sign*i*pi*j^2/n).
  Buf<C> bluestein(const Buf<C>& x, int sign, double scale) const {
    const auto lo = in.local_box().lo[0];
    Buf<C> a(x.shape(), dev);
    local::copy(a, x);
    twiddle(a.data(), {a.size(), 1, 1, lo, 0, 2 * n, true, sign, 1.0}, work());
    Buf<C> pad(inner->in.local_shape(), dev);
    local::fill(pad, C{});
    distributed::exchange<C, 1>(group(), {boxes(in, n), a}, {boxes(inner->in, inner->n), pad}, work(), dev,
                                {.chunks = chunks});
    auto s = inner->forward(pad, -1, 1.0);
    local::mul(s, s, bhat[sign < 0 ? 0 : 1]);
    auto conv = inner->backward(s, 1, 1.0);
    const auto mine = boxes(inner->in, n)[g.rank()];
    Buf<C> r(in.local_shape(), dev);
    distributed::exchange<C, 1>(group(), {boxes(inner->in, n), conv.slice(0, 0, mine.shape()[0])},
                                {boxes(in, n), r}, work(), dev, {.chunks = chunks});
    twiddle(r.data(), {r.size(), 1, 1, lo, 0, 2 * n, true, sign, scale}, work());
    return r;
  }

  // in -> out, and out -> in, with the exponent's sign.
  Buf<C> forward(const Buf<C>& x, int sign, double scale) const {
    if (!n1) return bluestein(x, sign, scale);
    return four_step(x, n1, n2, sign, scale, natural);
  }
  Buf<C> backward(const Buf<C>& y, int sign, double scale) const {
    if (!n1) return bluestein(y, sign, scale);
    return natural ? four_step(y, n2, n1, sign, scale, true) : four_step_back(y, sign, scale);
  }
};

template <class In>
Line<In>::Line(const Layout<1>& l, Device d, bool natural, int chunks)
    : core_(std::make_unique<C2c1d<Real>>(l.grid().ndims() == 1 ? l.grid() : ProcessGrid(l.grid().group()),
                                          l.global_shape()[0], d, natural || !IsComplex<In>::value, chunks)),
      in_(core_->in),
      out_(IsComplex<In>::value ? core_->out : Layout<1>(core_->g, {l.global_shape()[0] / 2 + 1}, {0})) {}
template <class In> Line<In>::~Line() = default;

template <class In>
std::array<index_t, 2> Line<In>::output_order() const {
  const auto& c = *core_;
  if (c.n1 && !c.natural) return {c.n1, c.n2};
  return {1, out_.global_shape()[0]};
}

template <class In>
bool Line<In>::bluestein() const {
  return core_->n1 == 0;
}

template <class In>
std::string Line<In>::method() const {
  const auto& c = *core_;
  return c.n1 ? "four-step " + std::to_string(c.n1) + " x " + std::to_string(c.n2)
              : "Bluestein " + std::to_string(c.inner->n);
}

template <class In>
local::Array<typename Line<In>::Out, 1> Line<In>::forward(const local::Array<In, 1>& x, double scale) const {
  if constexpr (IsComplex<In>::value) {
    return core_->forward(x, -1, scale);
  } else {
    const auto& c = *core_;
    Buf<Out> z(x.shape(), c.dev);
    local::cast(z, x);
    auto full = c.forward(z, -1, scale);
    Buf<Out> half(out_.local_shape(), c.dev);
    const index_t h = out_.global_shape()[0];
    const auto mine = boxes(c.out, h)[c.g.rank()];
    distributed::exchange<Out, 1>(c.group(), {boxes(c.out, h), full.slice(0, 0, mine.shape()[0])},
                                  {boxes(out_, h), half}, c.work(), c.dev, {.chunks = c.chunks});
    return half;
  }
}

template <class In>
local::Array<In, 1> Line<In>::backward(const local::Array<Out, 1>& y, double scale) const {
  if constexpr (IsComplex<In>::value) {
    return core_->backward(y, 1, scale);
  } else {
    const auto& c = *core_;
    const index_t n = c.n, h = out_.global_shape()[0];
    Buf<Out> full(c.out.local_shape(), c.dev);
    local::fill(full, Out{});
    distributed::exchange<Out, 1>(c.group(), {boxes(out_, h), y}, {boxes(c.out, n), full}, c.work(), c.dev,
                                  {.chunks = c.chunks});
    // Re(IFFT(y with 0 < k < n/2 doubled)) is the C2R of the Hermitian spectrum.
    const auto box = c.out.local_box();
    const index_t lo = std::max<index_t>(box.lo[0], 1), hi = std::min<index_t>(box.hi[0], (n + 1) / 2);
    if (hi > lo)
      distributed::detail::scale_kernel<Real>(reinterpret_cast<Real*>(full.data() + (lo - box.lo[0])),
                                              2 * static_cast<std::size_t>(hi - lo), 2.0, c.work());
    auto z = c.backward(full, 1, scale);
    local::Array<In, 1> r(z.shape(), c.dev);
    local::cast(r, z);
    return r;
  }
}

template class Line<float>;
template class Line<double>;
template class Line<std::complex<float>>;
template class Line<std::complex<double>>;

}  // namespace tessera::fft::detail
