// Internal: a length-N FFT along the outermost axis of row-major data (N = P*Q, P >= Q, both
// powers of two <= 32), one pass over memory: the GPU kernel behind split cuFFT plans
// (fft_cufft.cpp: this pass, then a batched 2-D cuFFT over the inner axes), carrying the plan's
// scale in its stores. Written once for the kernel (fft_axis0.cu) and a host emulation
// of one thread block (tests/local/test_fft_axis0.cpp checks the algorithm in CI).
//
// A block takes C adjacent columns (one 64- or 128-byte row segment) of all N rows. Four-step:
// with n = n1 + P*n2 and k = k2 + Q*k1,
//   X[k2 + Q*k1] = sum_n1 W_P^(n1 k1) W_N^(n1 k2) sum_n2 x[n1 + P*n2] W_Q^(n2 k2).
// Phase 1: thread (c, n1) loads its Q elements (each warp load: whole row segments), does the
// Q-point FFT in registers, multiplies by the twiddle and stores to shared memory [k2][n1][c].
// Phase 2 (after a barrier): thread (c, k2) does the P-point FFT over n1 and stores row
// k2 + Q*k1 times the scale. Every read of the block precedes every write, so in == out works.
// With H (TESSERA_FFT_HALVES, where a block's shared memory is 64 KiB or less: halves_fit()), a
// thread's 32-point FFTs go in two halves through its own shared-memory slots (fft_halves): half
// the registers, so that two blocks can share an SM, one loading while the other computes.
// Backward transforms conjugate on load and store (IFFT(x) = conj(FFT(conj(x)))).
// A spectral pass (S = true: the last pass of a split r2c plan or a plan down columns, with a
// spectral multiply) stores each element times the factor of its position (store_factor's)
// instead of the scale: the Poisson solve's multiply rides on this store. It needs the pass's rows
// to be one axis of the multiply's block (row_axis, spectral_row_axis): a thread takes |k|^2 of the
// other axes once for its column and adds the row's own per store.
// A round trip (round_trip_kernel: a spectral solve's forward pass, multiply and backward pass in
// one read and one write) runs the four-step backwards after phase 2's FFTs, inside the block:
// with IFFT(y) = conj(FFT(conj(y))), thread (c, k2) takes the P-point FFT over k1 of conj(f X),
// twiddles it back into its slots (phase2_round_trip); after a barrier, thread (c, n1) takes the
// Q-point FFT over k2 and stores rows n1 + P*n2 conjugated, times the scale (phase3_round_trip):
// the rows phase 1 of that thread loaded.
#pragma once
#include <cmath>
#include <numbers>
#include <vector>

#include "fft_store.hpp"
#include "tessera/local/hd.hpp"

namespace tessera::local::fft::detail::axis0 {

template <class R>
struct alignas(2 * sizeof(R)) Cx {
  R x, y;
};

template <class R>
TESSERA_HD inline Cx<R> mul(Cx<R> a, Cx<R> b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}

// cos(pi k / 16), k = 0..8.
TESSERA_HD constexpr double cos16(int k) {
  return k == 0 ? 1.0 : k == 1 ? 0.98078528040323044913 : k == 2 ? 0.92387953251128675613
       : k == 3 ? 0.83146961230254523708 : k == 4 ? 0.70710678118654752440 : k == 5 ? 0.55557023301960222474
       : k == 6 ? 0.38268343236508977173 : k == 7 ? 0.19509032201612826785 : 0.0;
}
// exp(-2 pi i m / 32), m in [0, 32): constants once the register loops are unrolled.
template <class R>
TESSERA_HD constexpr Cx<R> root32(int m) {
  const double c = m <= 8 ? cos16(m) : m <= 16 ? -cos16(16 - m) : m <= 24 ? -cos16(m - 16) : cos16(32 - m);
  const double s = m <= 8 ? cos16(8 - m) : m <= 16 ? cos16(m - 8) : m <= 24 ? -cos16(24 - m) : -cos16(m - 24);
  return {static_cast<R>(c), static_cast<R>(-s)};
}

template <int L>
TESSERA_HD constexpr int bit_reverse(int i) {
  int r = 0;
  for (int b = 1; b < L; b <<= 1, i >>= 1) r = (r << 1) | (i & 1);
  return r;
}
template <int L>
constexpr int log2_of() {
  int l = 0;
  while ((1 << l) < L) ++l;
  return l;
}

// In-register forward FFT of L <= 32 points (radix 2, decimation in time).
template <int L, class R>
TESSERA_HD inline void fft_registers(Cx<R> (&v)[L]) {
#pragma unroll
  for (int i = 0; i < L; ++i) {
    const int j = bit_reverse<L>(i);
    if (i < j) {
      const Cx<R> t = v[i];
      v[i] = v[j];
      v[j] = t;
    }
  }
#pragma unroll
  for (int s = 1; s <= log2_of<L>(); ++s) {
    const int len = 1 << s, half = len / 2;
#pragma unroll
    for (int i = 0; i < L; i += len) {
#pragma unroll
      for (int k = 0; k < half; ++k) {
        const Cx<R> a = v[i + k], b = k == 0 ? v[i + k + half] : mul(v[i + k + half], root32<R>(k * (32 / len)));
        v[i + k] = {a.x + b.x, a.y + b.y};
        v[i + k + half] = {a.x - b.x, a.y - b.y};
      }
    }
  }
}

// An L-point forward FFT (L even) of in(j), j < L, handing X_k to out(k, X_k), with L/2 + 2 values
// in registers instead of L: the L/2-point FFT E of the even inputs waits in slots the calling
// thread owns, keep(m) for m < L/2, while that of the odd inputs, O, is computed in registers; then
// X_k = E_k + W_L^k O_k and X_(k+L/2) = E_k - W_L^k O_k. keep(m) is written after every even input
// was read and read once, just before out(k) and out(k + L/2) are called for k = m.
template <int L, class R, class In, class Keep, class Out>
TESSERA_HD inline void fft_halves(const In& in, const Keep& keep, const Out& out) {
  constexpr int H = L / 2;
  Cx<R> v[H];
#pragma unroll
  for (int m = 0; m < H; ++m) v[m] = in(2 * m);
  fft_registers<H>(v);
#pragma unroll
  for (int m = 0; m < H; ++m) keep(m) = v[m];
#pragma unroll
  for (int m = 0; m < H; ++m) v[m] = in(2 * m + 1);
  fft_registers<H>(v);
#pragma unroll
  for (int k = 0; k < H; ++k) {
    const Cx<R> e = keep(k), o = k == 0 ? v[k] : mul(v[k], root32<R>(k * (32 / L)));
    out(k, Cx<R>{e.x + o.x, e.y + o.y});
    out(k + H, Cx<R>{e.x - o.x, e.y - o.y});
  }
}

// Whether blocks of C columns of P*Q rows may take their 32-point FFTs in halves (fft_halves): where
// a block's shared memory is 64 KiB or less, so that two blocks could share an SM if their
// registers allowed (a thread's 32 complex values alone fill the registers of one 512-thread block
// per SM).
template <class R, int P, int Q, int C>
TESSERA_HD constexpr bool halves_fit() {
  return (P > 16 || Q > 16) && C * P * Q * static_cast<int>(sizeof(Cx<R>)) <= 65536;
}
// The complex values a thread holds in registers at once, with (H) and without halves.
template <int P, int Q, bool H>
TESSERA_HD constexpr int values_per_thread() {
  constexpr int most = P > Q ? P : Q;
  return H && most > 16 ? most / 2 + 2 : most;
}
// Whether the register cap of two blocks of `threads` per SM holds those values (and about 24
// registers of addresses and indices): the kernels' case for asking for two blocks.
template <class R, int P, int Q, bool H>
TESSERA_HD constexpr bool two_blocks_fit_registers(int threads) {
  constexpr int regs = values_per_thread<P, Q, H>() * static_cast<int>(sizeof(Cx<R>)) / 4 + 24;
  return 65536 / (2 * threads) >= regs;
}

// A load of the pass's input; `L2`: from L2, past the SM's L1 (the plane kernel's column tasks
// read what other blocks wrote during the same kernel).
template <bool L2, class R>
TESSERA_HD inline Cx<R> load(const Cx<R>* p) {
#ifdef __CUDA_ARCH__
  if constexpr (L2 && sizeof(R) == 4) {
    const float2 v = __ldcg(reinterpret_cast<const float2*>(p));
    return {v.x, v.y};
  } else if constexpr (L2) {
    const double2 v = __ldcg(reinterpret_cast<const double2*>(p));
    return {v.x, v.y};
  }
#endif
  return *p;
}

// exp(-2 pi i m / n) for m < n, from long double phases: the passes' twiddle table (uploaded by
// axis0_twiddles; the host emulations use it as it is).
template <class R>
std::vector<Cx<R>> twiddle_table(long long n) {
  std::vector<Cx<R>> t(n);
  for (long long m = 0; m < n; ++m) {
    const long double phi = -2 * std::numbers::pi_v<long double> * m / n;
    t[m] = {static_cast<R>(std::cos(phi)), static_cast<R>(std::sin(phi))};
  }
  return t;
}

// One transform's data: `in`/`out` (elements of Cx<R>) hold `batch` arrays of N rows, `ld`
// elements apart, of which the first `cols` columns are transformed, arrays `dist` elements apart;
// `tw[m]` = exp(-2 pi i m / N) for m < N; `mult` the spectral pass's factors (their offsets count
// elements from `out`), `row_axis` the axis of mult's block that the rows are (spectral_row_axis).
template <class R>
struct Args {
  const Cx<R>* in;
  Cx<R>* out;
  const Cx<R>* tw;
  long long cols, ld, dist;
  R scale;
  bool backward;
  StoreParams mult;
  int row_axis = -1;
};

// The axis of p's block whose index is the pass's row (n rows `ld` apart, the batch `dist` apart)
// with the other axes' indices fixed along each column: its stride is ld and its extent n, every
// column and transform of the batch starts at its index 0. -1 where there is none.
inline int spectral_row_axis(const StoreParams& p, long long n, long long ld, long long cols, long long batch,
                             long long dist) {
  long long stride = 1;
  for (int a = p.dims - 1; a >= 0; stride *= p.block[a], --a) {
    if (stride != ld || p.block[a] != n) continue;
    const long long span = n * ld;
    return cols <= ld && p.offset % span == 0 && (batch == 1 || dist % span == 0) ? a : -1;
  }
  return -1;
}

// The supported lengths and their factors (0 when unsupported).
TESSERA_HD constexpr int factor_p(long long n) { return n == 1024 ? 32 : n == 512 ? 32 : n == 256 ? 16 : 0; }
TESSERA_HD constexpr int factor_q(long long n) { return n == 1024 ? 32 : n == 512 ? 16 : n == 256 ? 16 : 0; }

// Thread `t` of the block holding columns [col0, col0 + C) of batch b; `sh` has C*P*Q elements.
template <class R, int P, int Q, int C, bool L2 = false, bool H = false>
TESSERA_HD inline void phase1(int t, long long col0, long long b, const Args<R>& a, Cx<R>* sh) {
  static_assert(!H || halves_fit<R, P, Q, C>());
  const int c = t % C, n1 = t / C;
  const long long col = col0 + c;
  if constexpr (H && Q > 16) {
    // The thread's slots [k2][n1][c] hold the even inputs' half-length FFT meanwhile.
    const Cx<R>* src = a.in + b * a.dist + col;
    const auto in = [&](int j) {
      if (col >= a.cols) return Cx<R>{R(0), R(0)};
      const Cx<R> v = load<L2>(src + (n1 + static_cast<long long>(P) * j) * a.ld);
      return a.backward ? Cx<R>{v.x, -v.y} : v;
    };
    const auto slot = [&](int k2) -> Cx<R>& { return sh[(k2 * P + n1) * C + c]; };
    fft_halves<Q, R>(in, slot, [&](int k2, Cx<R> x) { slot(k2) = k2 == 0 ? x : mul(x, a.tw[n1 * k2]); });
  } else {
    Cx<R> v[Q];
    if (col < a.cols) {
      const Cx<R>* src = a.in + b * a.dist + col;
#pragma unroll
      for (int j = 0; j < Q; ++j) v[j] = load<L2>(src + (n1 + static_cast<long long>(P) * j) * a.ld);
    } else {
#pragma unroll
      for (int j = 0; j < Q; ++j) v[j] = {R(0), R(0)};
    }
    if (a.backward) {
#pragma unroll
      for (int j = 0; j < Q; ++j) v[j].y = -v[j].y;
    }
    fft_registers<Q>(v);
#pragma unroll
    for (int k2 = 0; k2 < Q; ++k2) sh[(k2 * P + n1) * C + c] = k2 == 0 ? v[k2] : mul(v[k2], a.tw[n1 * k2]);
  }
}

// The spectral factor of row r of one column (S passes): the column's |k|^2 once (in double), then
// per store the row's own part and the factor in R: one R division per store, in single precision
// no double arithmetic per store. The row axis's parameters are hoisted out of the stores (an axis
// without frequencies adds 0).
template <class R>
struct RowFactor {
  R inner, kw, s;
  long long lo, nr;
  bool half;
  int kind;
  TESSERA_HD RowFactor(const Args<R>& a, long long first)
      : inner(static_cast<R>(store_k2(a.mult, static_cast<unsigned long long>(first), a.row_axis))),
        kw(a.mult.n[a.row_axis] != 0 ? static_cast<R>(a.mult.k[a.row_axis]) : R(0)),
        s(static_cast<R>(a.mult.scale)),
        lo(a.mult.lo[a.row_axis]),
        nr(a.mult.n[a.row_axis]),
        half(a.mult.half[a.row_axis] != 0),
        kind(a.mult.kind) {}
  TESSERA_HD R operator()(long long r) const {
    const R w = kw * static_cast<R>(store_frequency(lo + r, nr, half));
    return store_factor_of<R>(kind, s, inner + w * w);
  }
};

// Thread `t` of the same block after the barrier: the P-point FFTs over n1 and the stores of rows
// k2 + Q*k1, times the scale or (S) the spectral factor of their position. `sh` is written only in
// the thread's own slots [k2][.][c] (H: the even half's FFT).
template <class R, int P, int Q, int C, bool S = false, bool H = false>
TESSERA_HD inline void phase2(int t, long long col0, long long b, const Args<R>& a, Cx<R>* sh) {
  static_assert(!H || halves_fit<R, P, Q, C>());
  const int c = t % C, k2 = t / C;
  const long long col = col0 + c;
  if (k2 >= Q || col >= a.cols) return;
  if constexpr (H && P > 16) {
    Cx<R>* dst = a.out + b * a.dist + col;
    const auto in = [&](int n1) { return sh[(k2 * P + n1) * C + c]; };
    const auto even = [&](int m) -> Cx<R>& { return sh[(k2 * P + 2 * m) * C + c]; };
    if constexpr (S) {
      const RowFactor<R> factor(a, b * a.dist + col);
      fft_halves<P, R>(in, even, [&](int k1, Cx<R> x) {
        const long long r = k2 + static_cast<long long>(Q) * k1;
        const R f = factor(r);
        dst[r * a.ld] = {x.x * f, x.y * (a.backward ? -f : f)};
      });
    } else {
      const R sy = a.backward ? -a.scale : a.scale;
      fft_halves<P, R>(in, even, [&](int k1, Cx<R> x) {
        dst[(k2 + static_cast<long long>(Q) * k1) * a.ld] = {x.x * a.scale, x.y * sy};
      });
    }
  } else {
    Cx<R> v[P];
#pragma unroll
    for (int n1 = 0; n1 < P; ++n1) v[n1] = sh[(k2 * P + n1) * C + c];
    fft_registers<P>(v);
    const long long first = b * a.dist + col;
    Cx<R>* dst = a.out + first;
    if constexpr (S) {
      const RowFactor<R> factor(a, first);
#pragma unroll
      for (int k1 = 0; k1 < P; ++k1) {
        const long long r = k2 + static_cast<long long>(Q) * k1;
        const R f = factor(r);
        dst[r * a.ld] = {v[k1].x * f, v[k1].y * (a.backward ? -f : f)};
      }
    } else {
      const R sy = a.backward ? -a.scale : a.scale;
#pragma unroll
      for (int k1 = 0; k1 < P; ++k1)
        dst[(k2 + static_cast<long long>(Q) * k1) * a.ld] = {v[k1].x * a.scale, v[k1].y * sy};
    }
  }
}

// In halves, a round trip's P-point FFTs run in the thread's own slots [k2][.][c]: fft_halves's
// outputs k and k + L/2 go where its kept value k and its odd input k were, so output j lands in
// slot interleave<L>(j), and the second FFT's output n1 in slot interleave(interleave(n1)).
template <int L>
TESSERA_HD constexpr int interleave(int j) {
  return j < L / 2 ? 2 * j : 2 * (j - L / 2) + 1;
}
// The slot of value n1 that phase2_round_trip leaves for phase3_round_trip.
template <int P, bool H>
TESSERA_HD constexpr int round_trip_slot(int n1) {
  return H && P > 16 ? interleave<P>(interleave<P>(n1)) : n1;
}

// A round trip's thread `t` after phase 1's barrier: the P-point FFTs over n1 (phase 2's), times
// the spectral factor of each row k2 + Q*k1 and conjugated, then the P-point FFTs over k1 times the
// twiddle W_N^(n1 k2) (the conjugate of the backward's), into the thread's own slots
// (round_trip_slot).
template <class R, int P, int Q, int C, bool H = false>
TESSERA_HD inline void phase2_round_trip(int t, long long col0, long long b, const Args<R>& a, Cx<R>* sh) {
  static_assert(!H || halves_fit<R, P, Q, C>());
  const int c = t % C, k2 = t / C;
  const long long col = col0 + c;
  if (k2 >= Q || col >= a.cols) return;
  const RowFactor<R> factor(a, b * a.dist + col);
  const auto spectral = [&](int k1, Cx<R> x) {
    const R f = factor(k2 + static_cast<long long>(Q) * k1);
    return Cx<R>{x.x * f, -x.y * f};
  };
  const auto twiddled = [&](int n1, Cx<R> z) { return n1 * k2 == 0 ? z : mul(z, a.tw[n1 * k2]); };
  const auto slot = [&](int j) -> Cx<R>& { return sh[(k2 * P + j) * C + c]; };
  if constexpr (H && P > 16) {
    fft_halves<P, R>([&](int n1) { return slot(n1); }, [&](int m) -> Cx<R>& { return slot(2 * m); },
                     [&](int k1, Cx<R> x) { slot(interleave<P>(k1)) = spectral(k1, x); });
    fft_halves<P, R>([&](int k1) { return slot(interleave<P>(k1)); },
                     [&](int m) -> Cx<R>& { return slot(interleave<P>(2 * m)); },
                     [&](int n1, Cx<R> z) { slot(round_trip_slot<P, H>(n1)) = twiddled(n1, z); });
  } else {
    Cx<R> v[P];
#pragma unroll
    for (int n1 = 0; n1 < P; ++n1) v[n1] = slot(n1);
    fft_registers<P>(v);
#pragma unroll
    for (int k1 = 0; k1 < P; ++k1) v[k1] = spectral(k1, v[k1]);
    fft_registers<P>(v);
#pragma unroll
    for (int n1 = 0; n1 < P; ++n1) slot(n1) = twiddled(n1, v[n1]);
  }
}

// A round trip's thread `t` after the second barrier: the Q-point FFTs over k2 of slot n1 of every
// k2, stored to rows n1 + P*n2 conjugated and times the scale.
template <class R, int P, int Q, int C, bool H = false>
TESSERA_HD inline void phase3_round_trip(int t, long long col0, long long b, const Args<R>& a, Cx<R>* sh) {
  static_assert(!H || halves_fit<R, P, Q, C>());
  const int c = t % C, n1 = t / C;
  const long long col = col0 + c;
  if (col >= a.cols) return;
  const int at = round_trip_slot<P, H>(n1);
  const auto in = [&](int k2) { return sh[(k2 * P + at) * C + c]; };
  Cx<R>* dst = a.out + b * a.dist + col;
  const auto store = [&](int n2, Cx<R> x) {
    dst[(n1 + static_cast<long long>(P) * n2) * a.ld] = {x.x * a.scale, -x.y * a.scale};
  };
  if constexpr (H && Q > 16) {
    fft_halves<Q, R>(in, [&](int m) -> Cx<R>& { return sh[(2 * m * P + at) * C + c]; }, store);
  } else {
    Cx<R> v[Q];
#pragma unroll
    for (int k2 = 0; k2 < Q; ++k2) v[k2] = in(k2);
    fft_registers<Q>(v);
#pragma unroll
    for (int n2 = 0; n2 < Q; ++n2) store(n2, v[n2]);
  }
}

}  // namespace tessera::local::fft::detail::axis0
