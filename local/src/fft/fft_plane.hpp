// Internal: the 2-D c2c FFT of a batch of packed n1 x n2 planes in one kernel (fft_plane.cu), each
// plane kept in L2 between its row and column transforms: the inner stage of split 3-D c2c plans
// (after the axis-0 pass) and batched 2-D c2c plans, where a batched 2-D cuFFT reads and writes
// every plane twice (docs/fft.md, how many passes each plan makes). Written once for the kernel
// and a host emulation of its blocks (tests/local/test_fft_plane.cpp runs it in CI).
//
// The kernel's blocks are persistent and take tasks in ticket order (an atomic counter): a row
// task transforms R whole rows of a plane (`in` to `out`), a column task C adjacent columns of a
// plane in place in `out` (axis0's phases with the plane as one transform of n1 rows n2 apart),
// once every row task of that plane has finished (a per-plane count). Tickets put the rows of
// plane s before the columns of plane s - lag (plane_task): a column task waits only on tasks of
// earlier tickets, taken by running blocks that wait on none later, so no order of scheduling
// deadlocks, and some lag + 1 planes are in flight at once, which fit in L2 (8 MiB per plane at
// 1024^2 c64): the column tasks read what the row tasks wrote from L2, and HBM sees one read and
// one write of each plane.
//
// Row tasks use the axis pass's four-step split of a length n2 = P*Q row: thread (r, n1), n1 the
// fast index so that a warp's loads are whole row segments, loads x[n1 + P*j], j < Q, does the
// Q-point FFT in registers, multiplies by the twiddle and stores to shared memory at
// [r][k2][n1] (rows of P + 1: the phase-2 reads down n1 are free of bank conflicts); thread (r, k2)
// does the P-point FFT over n1 and stores element k2 + Q*k1 of its row. Backward transforms
// conjugate on load and store, in both kinds of task.
#pragma once
#include "fft_axis0.hpp"

namespace tessera::local::fft::detail::plane {

using axis0::Cx;

// The planes: `batch` packed planes of n1 rows of n2 elements, from `in` to `out` (which may be the
// same); tw1/tw2 the twiddles of n1 and n2 (axis0_twiddles); `scale` multiplies the column
// tasks' stores (the last of a plane's).
template <class R>
struct Args {
  const Cx<R>* in;
  Cx<R>* out;
  const Cx<R>* tw1;
  const Cx<R>* tw2;
  long long n1, n2, batch;
  bool backward;
  R scale = R(1);
};

// A ticket's task: plane `plane`, its row tiles (rows [tile * R, tile * R + R)) or column tiles
// (columns [tile * C, tile * C + C)).
struct Task {
  long long plane;
  bool columns;
  long long tile;
};

// The lag between a plane's rows and its columns in ticket order (at most the batch).
TESSERA_HD constexpr long long plane_lag(long long batch) { return batch < 2 ? batch : 2; }

// Ticket t of `batch` planes of `row_tiles` row tasks and `col_tiles` column tasks, lag L:
// rows of planes [0, L), then per plane s in [L, batch) its rows and the columns of plane s - L,
// then the columns of the last L planes.
TESSERA_HD inline Task plane_task(long long t, long long batch, long long row_tiles, long long col_tiles) {
  const long long lag = plane_lag(batch), head = lag * row_tiles, stage = row_tiles + col_tiles;
  if (t < head) return {t / row_tiles, false, t % row_tiles};
  t -= head;
  const long long middle = (batch - lag) * stage;
  if (t < middle) {
    const long long s = lag + t / stage, k = t % stage;
    if (k < row_tiles) return {s, false, k};
    return {s - lag, true, k - row_tiles};
  }
  t -= middle;
  return {batch - lag + t / col_tiles, true, t % col_tiles};
}

template <class R>
TESSERA_HD inline Cx<R> conj_if(Cx<R> v, bool c) {
  return c ? Cx<R>{v.x, -v.y} : v;
}

// Shared memory of a row task: R rows of Q * (P + 1) elements.
template <int P, int Q, int RT>
constexpr int row_tile_elements() { return RT * Q * (P + 1); }

// Thread t of the row task over rows [row0, row0 + RT) of plane `p` (threads beyond RT * P idle).
// With H (32-point FFTs in halves, axis0::fft_halves) the even half waits in the thread's own
// slots of its row tile: [r][k2][n1] in phase 1, [r][k2][2m] in phase 2.
template <class R, int P, int Q, int RT, bool H = false>
TESSERA_HD inline void rows_phase1(int t, long long p, long long row0, const Args<R>& a, Cx<R>* sh) {
  if (t >= RT * P) return;
  const int r = t / P, n1 = t % P;
  const Cx<R>* src = a.in + (p * a.n1 + row0 + r) * a.n2 + n1;
  if constexpr (H && Q > 16) {
    Cx<R>* row = sh + r * (Q * (P + 1)) + n1;
    const auto in = [&](int j) { return conj_if(src[static_cast<long long>(P) * j], a.backward); };
    const auto slot = [&](int k2) -> Cx<R>& { return row[k2 * (P + 1)]; };
    axis0::fft_halves<Q, R>(in, slot, [&](int k2, Cx<R> x) { slot(k2) = k2 == 0 ? x : axis0::mul(x, a.tw2[n1 * k2]); });
  } else {
    Cx<R> v[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) v[j] = conj_if(src[static_cast<long long>(P) * j], a.backward);
    axis0::fft_registers<Q>(v);
    Cx<R>* row = sh + r * (Q * (P + 1)) + n1;
#pragma unroll
    for (int k2 = 0; k2 < Q; ++k2) row[k2 * (P + 1)] = k2 == 0 ? v[k2] : axis0::mul(v[k2], a.tw2[n1 * k2]);
  }
}

template <class R, int P, int Q, int RT, bool H = false>
TESSERA_HD inline void rows_phase2(int t, long long p, long long row0, const Args<R>& a, Cx<R>* sh) {
  if (t >= RT * Q) return;
  const int r = t / Q, k2 = t % Q;
  Cx<R>* row = sh + r * (Q * (P + 1)) + k2 * (P + 1);
  if constexpr (H && P > 16) {
    Cx<R>* dst = a.out + (p * a.n1 + row0 + r) * a.n2 + k2;
    const auto in = [&](int n1) { return row[n1]; };
    const auto even = [&](int m) -> Cx<R>& { return row[2 * m]; };
    axis0::fft_halves<P, R>(in, even, [&](int k1, Cx<R> x) { dst[static_cast<long long>(Q) * k1] = conj_if(x, a.backward); });
  } else {
    Cx<R> v[P];
#pragma unroll
    for (int n1 = 0; n1 < P; ++n1) v[n1] = row[n1];
    axis0::fft_registers<P>(v);
    Cx<R>* dst = a.out + (p * a.n1 + row0 + r) * a.n2 + k2;
#pragma unroll
    for (int k1 = 0; k1 < P; ++k1) dst[static_cast<long long>(Q) * k1] = conj_if(v[k1], a.backward);
  }
}

// The column task's view of plane p: axis0's arguments for one transform of n1 rows n2 apart,
// in place in `out`.
template <class R>
TESSERA_HD inline axis0::Args<R> column_args(const Args<R>& a, long long p) {
  Cx<R>* plane = a.out + p * a.n1 * a.n2;
  return axis0::Args<R>{plane, plane, a.tw1, a.n2, a.n2, 0, a.scale, a.backward, {}, -1};
}

// ---- r2c planes (forward): n1 rows of n2 reals to n1 rows of M + 1 complex, M = n2 / 2 ----
// A row task's threads treat each of its RT real rows as M complex values z[m] = x[2m] + i x[2m+1]
// (one load of a pair), take their M-point FFT Z with the four-step split P2 x Q2 = M (as the c2c
// rows), each phase-2 thread leaving its P2 results in the slots it read, then (after a barrier)
// untangle Z into the spectrum of the real row: with E_k = (Z_k + conj Z_(M-k)) / 2 and
// O_k = (Z_k - conj Z_(M-k)) / 2i the FFTs of the even and odd reals, X_k = E_k + W_n2^k O_k and
// X_(M-k) = conj(E_k - W_n2^k O_k), k <= M/2. The column tasks are the c2c kernel's, over the
// M + 1 columns of the output plane (a last tile partly empty). The twiddles of n2 serve both:
// W_M^j = W_n2^(2j).
template <class R>
struct R2cArgs {
  const R* in;
  Cx<R>* out;
  const Cx<R>* tw1;  // of n1 (the columns)
  const Cx<R>* tw2;  // of n2 (the rows)
  long long n1, n2, batch;
  long long in_ld;   // reals from one input row to the next: n2, or 2 (M + 1) in place
  R scale = R(1);
};

// The four-step factors of M, the rows' complex length: M = P2 * Q2.
TESSERA_HD constexpr int r2c_p2(long long n2) { return n2 == 1024 ? 32 : 16; }
TESSERA_HD constexpr int r2c_q2(long long n2) { return n2 == 1024 ? 16 : n2 == 512 ? 16 : 8; }

// Column tiles of C over a real plane's M + 1 spectrum columns (the last partly empty).
TESSERA_HD constexpr long long spectrum_tiles(long long n2, int c) { return (n2 / 2 + c) / c; }

// Shared memory of an r2c row task: R rows of Q2 * (P2 + 1) elements.
template <int P2, int Q2, int RT>
constexpr int r2c_row_tile_elements() { return RT * Q2 * (P2 + 1); }

// The first half of a real row's M = P2 * Q2 point four-step FFT, thread j1's part: the Q2-point
// FFT of src[P2 j], j < Q2, each result k2 times W_M^(j1 k2) = W_n2^(2 j1 k2) into slots[k2 (P2 + 1)].
template <class R, int P2, int Q2>
TESSERA_HD inline void real_rows_q2_step(const Cx<R>* src, int j1, const Cx<R>* tw2, Cx<R>* slots) {
  Cx<R> v[Q2];
#pragma unroll
  for (int j = 0; j < Q2; ++j) v[j] = src[static_cast<long long>(P2) * j];
  axis0::fft_registers<Q2>(v);
#pragma unroll
  for (int k2 = 0; k2 < Q2; ++k2) slots[k2 * (P2 + 1)] = k2 == 0 ? v[k2] : axis0::mul(v[k2], tw2[2 * j1 * k2]);
}

// The second half, thread k2's part: the P2-point FFT of its slots[j1], j1 < P2, into v (element
// k2 + Q2 k1 of the row's FFT is v[k1]).
template <class R, int P2>
TESSERA_HD inline void real_rows_p2_step(const Cx<R>* slots, Cx<R> (&v)[P2]) {
#pragma unroll
  for (int j1 = 0; j1 < P2; ++j1) v[j1] = slots[j1];
  axis0::fft_registers<P2>(v);
}

template <class R, int P2, int Q2, int RT>
TESSERA_HD inline void r2c_rows_phase1(int t, long long p, long long row0, const R2cArgs<R>& a, Cx<R>* sh) {
  if (t >= RT * P2) return;
  const int r = t / P2, j1 = t % P2;
  const auto* z = reinterpret_cast<const Cx<R>*>(a.in + (p * a.n1 + row0 + r) * a.in_ld) + j1;
  real_rows_q2_step<R, P2, Q2>(z, j1, a.tw2, sh + r * (Q2 * (P2 + 1)) + j1);
}

// Thread (r, k2): the P2-point FFT over its own slots [k2][.], its results Z_(k2 + Q2 k1) back into
// them at [k2][k1] (r2c_z reads them there).
template <class R, int P2, int Q2, int RT>
TESSERA_HD inline void r2c_rows_phase2(int t, const R2cArgs<R>&, Cx<R>* sh) {
  if (t >= RT * Q2) return;
  const int r = t / Q2, k2 = t % Q2;
  Cx<R>* slots = sh + r * (Q2 * (P2 + 1)) + k2 * (P2 + 1);
  Cx<R> v[P2];
  real_rows_p2_step<R, P2>(slots, v);
#pragma unroll
  for (int k1 = 0; k1 < P2; ++k1) slots[k1] = v[k1];
}

// Z_k of row r (k < M) where phase 2 left it.
template <class R, int P2, int Q2>
TESSERA_HD inline Cx<R> r2c_z(const Cx<R>* sh, int r, int k) {
  return sh[r * (Q2 * (P2 + 1)) + (k % Q2) * (P2 + 1) + k / Q2];
}

// Threads of `threads` take the pairs (k, M - k), k <= M/2, of the tile's rows in turn and store
// X_k and X_(M-k) to the output rows (M + 1 elements each).
template <class R, int P2, int Q2, int RT>
TESSERA_HD inline void r2c_rows_phase3(int t, int threads, long long p, long long row0, const R2cArgs<R>& a,
                                       const Cx<R>* sh) {
  constexpr int M = P2 * Q2, pairs = M / 2 + 1;
  for (int i = t; i < RT * pairs; i += threads) {
    const int r = i / pairs, k = i % pairs;
    Cx<R>* dst = a.out + (p * a.n1 + row0 + r) * (M + 1);
    const Cx<R> zk = r2c_z<R, P2, Q2>(sh, r, k), zm = r2c_z<R, P2, Q2>(sh, r, (M - k) % M);
    if (k == 0) {  // X_0 and X_M: real
      dst[0] = {zk.x + zk.y, R(0)};
      dst[M] = {zk.x - zk.y, R(0)};
      continue;
    }
    // E = (Z_k + conj Z_(M-k)) / 2, O = (Z_k - conj Z_(M-k)) / 2i, T = W^k O.
    const Cx<R> e{(zk.x + zm.x) / 2, (zk.y - zm.y) / 2}, o{(zk.y + zm.y) / 2, (zm.x - zk.x) / 2};
    const Cx<R> w = axis0::mul(o, a.tw2[k]);
    dst[k] = {e.x + w.x, e.y + w.y};
    if (k != M - k) dst[M - k] = {e.x - w.x, w.y - e.y};
  }
}

// The column task's view of r2c plane p: the M + 1 columns of its output, in place.
template <class R>
TESSERA_HD inline axis0::Args<R> r2c_column_args(const R2cArgs<R>& a, long long p) {
  const long long cols = a.n2 / 2 + 1;
  Cx<R>* plane = a.out + p * a.n1 * cols;
  return axis0::Args<R>{plane, plane, a.tw1, cols, cols, 0, a.scale, false, {}, -1};
}

// ---- c2r planes (backward): n1 rows of M + 1 complex (overwritten) to n1 rows of n2 reals ----
// The r2c kernel the other way round: column tasks first (the c2c backward down the M + 1 columns,
// in place in `in`), then row tasks, which tangle each row's spectrum into the M complex values
// Z_q = A_q + i B_q, A_q = X_q + conj X_(M-q), B_q = (X_q - conj X_(M-q)) conj W_n2^q (A and B the
// spectra of the even and odd reals), take their M-point backward FFT z (conj FFT conj) with the
// four-step split, and store x_2m = Re z_m, x_2m+1 = Im z_m times the scale. In ticket order the
// column tasks take plane_task's first place (its "rows") and the row tasks its second.
template <class R>
struct C2rArgs {
  Cx<R>* in;  // batch planes of n1 rows of M + 1, which the column tasks overwrite
  R* out;
  const Cx<R>* tw1;  // of n1 (the columns)
  const Cx<R>* tw2;  // of n2 (the rows)
  long long n1, n2, batch;
  long long out_ld;  // reals from one output row to the next: n2, or 2 (M + 1) in place
  R scale = R(1);
};

// Shared memory of a c2r row task: the tangled rows (R rows of M), then the four-step's slots.
template <int P2, int Q2, int RT>
constexpr int c2r_row_tile_elements() { return RT * P2 * Q2 + RT * Q2 * (P2 + 1); }

// Threads of `threads` take the pairs (q, M - q), q <= M/2, of the tile's rows in turn and write
// conj Z_q and conj Z_(M-q) in row order to the front of `sh`.
template <class R, int P2, int Q2, int RT>
TESSERA_HD inline void c2r_rows_phase1(int t, int threads, long long p, long long row0, const C2rArgs<R>& a,
                                       Cx<R>* sh) {
  constexpr int M = P2 * Q2, pairs = M / 2 + 1;
  for (int i = t; i < RT * pairs; i += threads) {
    const int r = i / pairs, k = i % pairs;
    const Cx<R>* x = a.in + (p * a.n1 + row0 + r) * (M + 1);
    const auto tangled = [&](int q) {  // conj Z_q, from L2: the column tasks wrote it during this kernel
      const Cx<R> xq = axis0::load<true>(x + q), xm = axis0::load<true>(x + M - q), w = a.tw2[q];
      const Cx<R> sum{xq.x + xm.x, xq.y - xm.y}, b = axis0::mul(Cx<R>{xq.x - xm.x, xq.y + xm.y}, Cx<R>{w.x, -w.y});
      return Cx<R>{sum.x - b.y, -(sum.y + b.x)};
    };
    sh[r * M + k] = tangled(k);
    if (k != 0 && k != M - k) sh[r * M + M - k] = tangled(M - k);
  }
}

// Thread (r, j1): the Q2-point FFT of conj Z_(j1 + P2 j), twiddled into the slots [k2][j1] after
// the tangled rows.
template <class R, int P2, int Q2, int RT>
TESSERA_HD inline void c2r_rows_phase2(int t, const C2rArgs<R>& a, Cx<R>* sh) {
  constexpr int M = P2 * Q2;
  if (t >= RT * P2) return;
  const int r = t / P2, j1 = t % P2;
  real_rows_q2_step<R, P2, Q2>(sh + r * M + j1, j1, a.tw2, sh + RT * M + r * (Q2 * (P2 + 1)) + j1);
}

// Thread (r, k2): the P2-point FFT over its slots, then z_m = conj of element m = k2 + Q2 k1, stored
// as the reals 2m and 2m + 1 of its row times the scale.
template <class R, int P2, int Q2, int RT>
TESSERA_HD inline void c2r_rows_phase3(int t, long long p, long long row0, const C2rArgs<R>& a, const Cx<R>* sh) {
  constexpr int M = P2 * Q2;
  if (t >= RT * Q2) return;
  const int r = t / Q2, k2 = t % Q2;
  Cx<R> v[P2];
  real_rows_p2_step<R, P2>(sh + RT * M + r * (Q2 * (P2 + 1)) + k2 * (P2 + 1), v);
  R* dst = a.out + (p * a.n1 + row0 + r) * a.out_ld + 2 * k2;
#pragma unroll
  for (int k1 = 0; k1 < P2; ++k1) {
    dst[2 * Q2 * k1] = v[k1].x * a.scale;
    dst[2 * Q2 * k1 + 1] = -v[k1].y * a.scale;
  }
}

// The column task's view of c2r plane p: the c2c backward down the M + 1 columns of its input, in
// place.
template <class R>
TESSERA_HD inline axis0::Args<R> c2r_column_args(const C2rArgs<R>& a, long long p) {
  const long long cols = a.n2 / 2 + 1;
  Cx<R>* plane = a.in + p * a.n1 * cols;
  return axis0::Args<R>{plane, plane, a.tw1, cols, cols, 0, R(1), true, {}, -1};
}

}  // namespace tessera::local::fft::detail::plane
