/* FFT plans through the C API against a naive DFT on rank 0: C2C (out of place and in place),
 * R2C/C2R with norm ortho, single precision with norm forward, 1-D to 3-D. */
#include "capi_test.h"

static const double kPi = 3.14159265358979323846;

static double complex input(int ndim, const int64_t* g) {
  double s = 0;
  for (int a = 0; a < ndim; ++a) s += (a + 1.3) * (double)g[a];
  return sin(s) + 0.5 * I * cos(2 * s);
}

/* The DFT of `input` at k (sign -1), scaled by `scale`. */
static double complex dft(int ndim, const int64_t* shape, const int64_t* k, double scale) {
  int64_t zero[3] = {0}, n[3] = {0};
  double complex acc = 0;
  for (int64_t i = 0, m = box_size(ndim, zero, shape); i < m; ++i, next_index(ndim, n, zero, shape)) {
    double ph = 0;
    for (int a = 0; a < ndim; ++a) ph += (double)(k[a] * n[a]) / (double)shape[a];
    acc += input(ndim, n) * cexp(-2 * kPi * I * ph);
  }
  return acc * scale;
}

static void fill_input(tessera_array a, int real) {
  tessera_layout l;
  int ndim;
  int64_t lo[3], hi[3];
  tessera_dtype t;
  OK(tessera_array_layout(a, &l));
  OK(tessera_layout_info(l, &ndim, NULL, lo, hi, NULL));
  OK(tessera_array_info(a, NULL, &t, NULL));
  const int64_t n = box_size(ndim, lo, hi);
  char* host = malloc((size_t)(n ? n : 1) * dtype_bytes(t));
  int64_t g[3];
  memcpy(g, lo, sizeof g);
  for (int64_t i = 0; i < n; ++i, next_index(ndim, g, lo, hi)) {
    const double complex v = input(ndim, g);
    put_value(host, t, i, creal(v), real ? 0 : cimag(v));
  }
  OK(tessera_array_write(a, host, n));
  free(host);
  OK(tessera_layout_free(l));
}

/* Gathers a spectrum and compares it on rank 0 with the DFT of `input` (real part only if real). */
static void check_spectrum(tessera_array a, const int64_t* real_shape, int real, double scale, double tol,
                           const char* what) {
  tessera_layout l;
  int ndim;
  int64_t shape[3], n;
  tessera_dtype t;
  OK(tessera_array_layout(a, &l));
  OK(tessera_layout_info(l, &ndim, shape, NULL, NULL, NULL));
  OK(tessera_layout_sizes(l, NULL, &n));
  OK(tessera_array_info(a, NULL, &t, NULL));
  char* host = my_rank == 0 ? malloc((size_t)n * dtype_bytes(t)) : NULL;
  OK(tessera_gather(a, 0, host, my_rank == 0 ? n : 0, TESSERA_MEMORY_HOST));
  if (my_rank == 0) {
    int64_t zero[3] = {0}, k[3] = {0};
    double err = 0;
    for (int64_t i = 0; i < n; ++i, next_index(ndim, k, zero, shape)) {
      double complex want;
      if (real) {  /* DFT of the real part: (X[k] + conj(X[-k])) / 2 */
        int64_t mk[3];
        for (int a = 0; a < ndim; ++a) mk[a] = (real_shape[a] - k[a]) % real_shape[a];
        want = (dft(ndim, real_shape, k, scale) + conj(dft(ndim, real_shape, mk, scale))) / 2;
      } else {
        want = dft(ndim, real_shape, k, scale);
      }
      err = fmax(err, cabs(get_value(host, t, i) - want));
    }
    CHECK(err <= tol, "%s: max error %g against the naive DFT (tolerance %g)", what, err, tol);
    free(host);
  }
  OK(tessera_layout_free(l));
}

/* Compares a's interior with `input` (the round trip's result). */
static void check_input(tessera_array a, int real, double scale, double tol, const char* what) {
  tessera_layout l;
  int ndim;
  int64_t lo[3], hi[3];
  tessera_dtype t;
  OK(tessera_array_layout(a, &l));
  OK(tessera_layout_info(l, &ndim, NULL, lo, hi, NULL));
  OK(tessera_array_info(a, NULL, &t, NULL));
  const int64_t n = box_size(ndim, lo, hi);
  char* host = malloc((size_t)(n ? n : 1) * dtype_bytes(t));
  OK(tessera_array_read(a, host, n));
  int64_t g[3];
  memcpy(g, lo, sizeof g);
  double err = 0;
  for (int64_t i = 0; i < n; ++i, next_index(ndim, g, lo, hi)) {
    double complex want = input(ndim, g) * scale;
    if (real) want = creal(want);
    err = fmax(err, cabs(get_value(host, t, i) - want));
  }
  CHECK(err <= tol, "%s: round trip error %g (tolerance %g)", what, err, tol);
  free(host);
  OK(tessera_layout_free(l));
}

static void c2c(int ndim, tessera_dtype t, tessera_fft_norm norm, int in_place) {
  const int64_t shape[3] = {6, 5, 4};
  const double N = (double)box_size(ndim, (int64_t[3]){0}, shape);
  const double fscale = norm == TESSERA_NORM_FORWARD ? 1 / N : norm == TESSERA_NORM_ORTHO ? 1 / sqrt(N) : 1;
  const double tol = t == TESSERA_C64 ? 1e-4 * N : 1e-10 * N;
  char what[64];
  snprintf(what, sizeof what, "C2C %d-D dtype %d norm %d%s", ndim, (int)t, (int)norm, in_place ? " in place" : "");
  tessera_grid grid;
  tessera_layout in, out;
  tessera_fft_plan p;
  tessera_array x, y;
  OK(tessera_grid_create(rt, 1, NULL, NULL, &grid));
  OK(tessera_layout_create(grid, ndim, shape, NULL, NULL, NULL, NULL, &in));
  OK(tessera_fft_plan_create(in, t, TESSERA_FFT_C2C, TESSERA_DECOMP_AUTO, in_place, &p));
  OK(tessera_fft_plan_layouts(p, NULL, &out));
  OK(tessera_array_create(in, t, &x));
  fill_input(x, 0);
  y = x;
  if (!in_place) OK(tessera_array_create(out, t, &y));
  OK(tessera_fft_execute(p, TESSERA_FFT_FORWARD, x, y, norm));
  check_spectrum(y, shape, 0, fscale, tol, what);
  tessera_array back = y;
  if (!in_place) OK(tessera_array_create(in, t, &back));
  OK(tessera_fft_execute(p, TESSERA_FFT_BACKWARD, y, back, norm));
  check_input(back, 0, norm == TESSERA_NORM_NONE ? N : 1, t == TESSERA_C64 ? 1e-5 * N : 1e-12 * N, what);
  if (!in_place) {
    OK(tessera_array_free(y));
    OK(tessera_array_free(back));
  }
  OK(tessera_array_free(x));
  OK(tessera_fft_plan_free(p));
  OK(tessera_layout_free(in));
  OK(tessera_layout_free(out));
  OK(tessera_grid_free(grid));
}

static void r2c(int ndim, int pencil) {
  const int64_t shape[3] = {6, 5, 4};
  const double N = (double)box_size(ndim, (int64_t[3]){0}, shape);
  tessera_grid grid;
  tessera_layout in, out;
  tessera_fft_plan p;
  tessera_array x, y, back;
  OK(tessera_grid_create(rt, pencil ? 2 : 1, NULL, NULL, &grid));
  OK(tessera_layout_create(grid, ndim, shape, NULL, NULL, NULL, NULL, &in));
  OK(tessera_fft_plan_create(in, TESSERA_F64, TESSERA_FFT_R2C, pencil ? TESSERA_DECOMP_PENCIL : TESSERA_DECOMP_AUTO,
                             0, &p));
  OK(tessera_fft_plan_layouts(p, NULL, &out));
  int64_t oshape[3];
  OK(tessera_layout_info(out, NULL, oshape, NULL, NULL, NULL));
  CHECK(oshape[ndim - 1] == shape[ndim - 1] / 2 + 1, "R2C output extent %lld", (long long)oshape[ndim - 1]);
  OK(tessera_array_create(in, TESSERA_F64, &x));
  OK(tessera_array_create(out, TESSERA_C128, &y));
  OK(tessera_array_create(in, TESSERA_F64, &back));
  fill_input(x, 1);
  OK(tessera_fft_execute(p, TESSERA_FFT_FORWARD, x, y, TESSERA_NORM_ORTHO));
  check_spectrum(y, shape, 1, 1 / sqrt(N), 1e-10 * N, pencil ? "R2C pencil" : "R2C");
  OK(tessera_fft_execute(p, TESSERA_FFT_BACKWARD, y, back, TESSERA_NORM_ORTHO));
  check_input(back, 1, 1, 1e-12, pencil ? "C2R pencil" : "C2R");
  /* the same into new arrays */
  tessera_array y2 = {0}, back2 = {0};
  OK(tessera_fft_execute_new(p, TESSERA_FFT_FORWARD, x, TESSERA_NORM_ORTHO, &y2));
  check_spectrum(y2, shape, 1, 1 / sqrt(N), 1e-10 * N, pencil ? "R2C pencil, new array" : "R2C, new array");
  OK(tessera_fft_execute_new(p, TESSERA_FFT_BACKWARD, y2, TESSERA_NORM_ORTHO, &back2));
  check_input(back2, 1, 1, 1e-12, pencil ? "C2R pencil, new array" : "C2R, new array");
  CHECK(tessera_fft_execute_new(p, TESSERA_FFT_FORWARD, y2, TESSERA_NORM_ORTHO, &back) == TESSERA_ERROR_DTYPE_MISMATCH,
        "execute_new forward of a complex array");
  CHECK(tessera_fft_execute_new(p, TESSERA_FFT_FORWARD, x, TESSERA_NORM_ORTHO, NULL) == TESSERA_ERROR_INVALID_ARGUMENT,
        "execute_new without out");
  OK(tessera_array_free(y2));
  OK(tessera_array_free(back2));
  OK(tessera_array_free(x));
  OK(tessera_array_free(y));
  OK(tessera_array_free(back));
  OK(tessera_fft_plan_free(p));
  OK(tessera_layout_free(in));
  OK(tessera_layout_free(out));
  OK(tessera_grid_free(grid));
}

/* Transforms along some axes (tessera_fft_along): axis 0 split, axes 1 and 2 held whole. With
 * one rank every axis is whole, and the transform along all of them is the DFT. */
static void along_axes(void) {
  const int64_t shape[3] = {6, 5, 4};
  tessera_grid grid;
  tessera_layout in;
  tessera_array x, r, y = {0}, back = {0}, spec = {0}, real_back = {0}, bad = {0};
  OK(tessera_grid_create(rt, 1, NULL, NULL, &grid));
  OK(tessera_layout_create(grid, 3, shape, NULL, NULL, NULL, NULL, &in));
  OK(tessera_array_create(in, TESSERA_C128, &x));
  OK(tessera_array_create(in, TESSERA_F64, &r));
  fill_input(x, 0);
  fill_input(r, 1);
  const int inner[2] = {2, -2}, every[3] = {0, 1, 2}, last[1] = {2};
  OK(tessera_fft_along(x, TESSERA_FFT_C2C, TESSERA_FFT_FORWARD, 2, inner, 0, TESSERA_NORM_ORTHO, &y));
  OK(tessera_fft_along(y, TESSERA_FFT_C2C, TESSERA_FFT_BACKWARD, 2, inner, 0, TESSERA_NORM_ORTHO, &back));
  check_input(back, 0, 1, 1e-12, "C2C along axes 1 and 2 and back");
  OK(tessera_fft_along(r, TESSERA_FFT_R2C, TESSERA_FFT_FORWARD, 1, last, 0, TESSERA_NORM_BACKWARD, &spec));
  OK(tessera_fft_along(spec, TESSERA_FFT_C2R, TESSERA_FFT_BACKWARD, 1, last, 4, TESSERA_NORM_BACKWARD, &real_back));
  check_input(real_back, 1, 1, 1e-12, "R2C along axis 2 and back");
  if (n_ranks == 1) {
    tessera_array whole = {0};
    OK(tessera_fft_along(x, TESSERA_FFT_C2C, TESSERA_FFT_FORWARD, 3, every, 0, TESSERA_NORM_NONE, &whole));
    check_spectrum(whole, shape, 0, 1, 1e-10 * 120, "C2C along every axis on one rank");
    OK(tessera_array_free(whole));
  } else {
    CHECK(tessera_fft_along(x, TESSERA_FFT_C2C, TESSERA_FFT_FORWARD, 3, every, 0, TESSERA_NORM_NONE, &bad) ==
              TESSERA_ERROR_INVALID_ARGUMENT, "fft_along a split axis");
  }
  CHECK(tessera_fft_along(r, TESSERA_FFT_C2C, TESSERA_FFT_FORWARD, 1, last, 0, TESSERA_NORM_NONE, &bad) ==
            TESSERA_ERROR_DTYPE_MISMATCH, "fft_along C2C of a real array");
  CHECK(tessera_fft_along(r, TESSERA_FFT_R2C, TESSERA_FFT_BACKWARD, 1, last, 0, TESSERA_NORM_NONE, &bad) ==
            TESSERA_ERROR_INVALID_ARGUMENT, "fft_along R2C backward");
  CHECK(tessera_fft_along(spec, TESSERA_FFT_C2R, TESSERA_FFT_BACKWARD, 1, last, 9, TESSERA_NORM_NONE, &bad) ==
            TESSERA_ERROR_INVALID_ARGUMENT, "fft_along C2R to 9 reals from 3 values");
  CHECK(tessera_fft_along(x, TESSERA_FFT_C2C, TESSERA_FFT_FORWARD, 0, inner, 0, TESSERA_NORM_NONE, &bad) ==
            TESSERA_ERROR_INVALID_ARGUMENT, "fft_along without axes");
  const tessera_array arrays[] = {x, r, y, back, spec, real_back};
  for (int i = 0; i < 6; ++i) OK(tessera_array_free(arrays[i]));
  OK(tessera_layout_free(in));
  OK(tessera_grid_free(grid));
}

/* u = sin(2 pi x / L0) cos(4 pi y / L1) sin(6 pi z / L2) on the box of sides L = {1, 2, 3} (the
 * grid point g at x = L g / n), whose Laplacian is -3 (2 pi)^2 u: or that f when `lap`. */
static const double kSides[3] = {1, 2, 3};
static double box_wave(const int64_t* g, const int64_t* shape, int lap) {
  double u = 1;
  for (int a = 0; a < 3; ++a) {
    const double ph = 2 * kPi * (double)(a + 1) * (double)g[a] / (double)shape[a];
    u *= a == 1 ? cos(ph) : sin(ph);
  }
  return lap ? -3 * (2 * kPi) * (2 * kPi) * u : u;
}
/* box_wave over a's block, in the block's order (*n elements; the caller frees it). */
static double* box_wave_of_block(tessera_array a, const int64_t* shape, int lap, int64_t* n) {
  tessera_layout l;
  int64_t lo[3], hi[3], g[3];
  OK(tessera_array_layout(a, &l));
  OK(tessera_layout_info(l, NULL, NULL, lo, hi, NULL));
  OK(tessera_layout_free(l));
  *n = box_size(3, lo, hi);
  double* v = malloc((size_t)(*n ? *n : 1) * sizeof(double));
  memcpy(g, lo, sizeof g);
  for (int64_t i = 0; i < *n; ++i, next_index(3, g, lo, hi)) v[i] = box_wave(g, shape, lap);
  return v;
}
static void fill_box_wave(tessera_array a, const int64_t* shape, int lap) {
  int64_t n;
  double* v = box_wave_of_block(a, shape, lap, &n);
  OK(tessera_array_write(a, v, n));
  free(v);
}
static void check_box_wave(tessera_array a, const int64_t* shape, int lap, double tol, const char* what) {
  int64_t n;
  double* want = box_wave_of_block(a, shape, lap, &n);
  double* got = malloc((size_t)(n ? n : 1) * sizeof(double));
  OK(tessera_array_read(a, got, n));
  double err = 0;
  for (int64_t i = 0; i < n; ++i) err = fmax(err, fabs(got[i] - want[i]));
  CHECK(err <= tol, "%s: error %g (tolerance %g)", what, err, tol);
  free(got);
  free(want);
}

/* tessera_fft_apply_spectral: the inverse Laplacian of f gives u, the Laplacian of u gives f, on
 * a box that is not 2 pi (a first axis of 256: one GPU's one-kernel round trip); bad kinds and
 * lengths are refused. */
static void spectral(void) {
  const int64_t shape[3] = {256, 6, 8};
  tessera_grid grid;
  tessera_layout in;
  tessera_fft_plan p;
  tessera_array f, u, got = {0};
  OK(tessera_grid_create(rt, 1, NULL, NULL, &grid));
  OK(tessera_layout_create(grid, 3, shape, NULL, NULL, NULL, NULL, &in));
  OK(tessera_fft_plan_create(in, TESSERA_F64, TESSERA_FFT_R2C, TESSERA_DECOMP_AUTO, 0, &p));
  OK(tessera_array_create(in, TESSERA_F64, &f));
  OK(tessera_array_create(in, TESSERA_F64, &u));
  fill_box_wave(f, shape, 1);
  fill_box_wave(u, shape, 0);
  OK(tessera_fft_apply_spectral(p, f, TESSERA_SPECTRAL_INVERSE_LAPLACIAN, kSides, &got));
  check_box_wave(got, shape, 0, 1e-12, "inverse Laplacian");
  OK(tessera_array_free(got));
  OK(tessera_fft_apply_spectral(p, u, TESSERA_SPECTRAL_LAPLACIAN, kSides, &got));
  check_box_wave(got, shape, 1, 1e-9, "Laplacian");
  OK(tessera_array_free(got));
  got.id = 0;
  const double bad_sides[3] = {1, 0, 3};
  CHECK(tessera_fft_apply_spectral(p, f, TESSERA_SPECTRAL_LAPLACIAN, bad_sides, &got) ==
            TESSERA_ERROR_INVALID_ARGUMENT && strstr(tessera_last_error(), "lengths[1]"),
        "a zero box side: %s", tessera_last_error());
  CHECK(tessera_fft_apply_spectral(p, f, (tessera_fft_spectral)7, NULL, &got) == TESSERA_ERROR_INVALID_ARGUMENT,
        "an unknown kind");
  OK(tessera_array_free(f));
  OK(tessera_array_free(u));
  OK(tessera_fft_plan_free(p));
  OK(tessera_layout_free(in));
  OK(tessera_grid_free(grid));
}

void test_fft(void) {
  spectral();
  along_axes();
  c2c(3, TESSERA_C128, TESSERA_NORM_BACKWARD, 0);
  c2c(3, TESSERA_C128, TESSERA_NORM_NONE, 1);
  c2c(2, TESSERA_C64, TESSERA_NORM_FORWARD, 0);
  if (n_ranks == 1) c2c(1, TESSERA_C128, TESSERA_NORM_ORTHO, 0);  /* 1-D transforms need one rank */
  r2c(3, 0);
  r2c(2, 0);
  if (n_ranks > 1) r2c(3, 1);
}
