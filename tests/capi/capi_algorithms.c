/* The C API's algorithms that make new arrays (sort, argsort, scans, reductions along an axis,
 * arg-reductions, matmul, take, histogram, flatnonzero), each against a serial reference on the
 * gathered data. */
#include "capi_test.h"

enum { N = 37 };

static double value(int64_t i) { return i % 3 == 0 ? 0.0 : sin(1.7 * (double)i); }

/* A new array of `shape` (split along axis 0) filled with f(flat index). */
static tessera_array make(int ndim, const int64_t* shape, double (*f)(int64_t), tessera_layout* lay) {
  tessera_grid g;
  tessera_array a;
  int64_t lo[2], hi[2];
  OK(tessera_grid_create(rt, 1, NULL, NULL, &g));
  OK(tessera_layout_create(g, ndim, shape, NULL, NULL, NULL, NULL, lay));
  OK(tessera_grid_free(g));
  OK(tessera_array_create(*lay, TESSERA_F64, &a));
  OK(tessera_layout_info(*lay, NULL, NULL, lo, hi, NULL));
  const int64_t n = box_size(ndim, lo, hi);
  double* host = malloc((size_t)(n ? n : 1) * sizeof(double));
  int64_t idx[2] = {lo[0], ndim > 1 ? lo[1] : 0};
  for (int64_t i = 0; i < n; ++i, next_index(ndim, idx, lo, hi)) host[i] = f(flat(ndim, shape, idx));
  OK(tessera_array_write(a, host, n));
  free(host);
  return a;
}

/* The whole array on rank 0 (NULL elsewhere), as doubles; frees a. */
static double* gathered(tessera_array a, int64_t* n_out) {
  tessera_layout l;
  tessera_dtype t;
  int64_t n;
  OK(tessera_array_layout(a, &l));
  OK(tessera_layout_sizes(l, NULL, &n));
  OK(tessera_array_info(a, NULL, &t, NULL));
  char* raw = my_rank == 0 ? malloc((size_t)(n ? n : 1) * dtype_bytes(t)) : NULL;
  OK(tessera_gather(a, 0, raw, my_rank == 0 ? n : 0, TESSERA_MEMORY_HOST));
  double* out = NULL;
  if (my_rank == 0) {
    out = malloc((size_t)(n ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; ++i) out[i] = creal(get_value(raw, t, i));
  }
  free(raw);
  OK(tessera_layout_free(l));
  OK(tessera_array_free(a));
  *n_out = n;
  return out;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double row_major_2x(int64_t i) { return (double)(i % 7) - 2.5 * (double)(i / 7); }

void test_algorithms(void) {
  const int64_t shape1[1] = {N};
  tessera_layout l1, l2, ln, li;
  tessera_array v = make(1, shape1, value, &l1), out;
  double ref[N];
  for (int64_t i = 0; i < N; ++i) ref[i] = value(i);
  int64_t n;

  OK(tessera_sort(v, 0, &out));
  double* s = gathered(out, &n);
  double sorted[N];
  memcpy(sorted, ref, sizeof ref);
  qsort(sorted, N, sizeof(double), by_value);
  for (int64_t i = 0; s && i < N; ++i) CHECK(s[i] == sorted[i], "sort[%lld] %g, want %g", (long long)i, s[i], sorted[i]);
  free(s);

  OK(tessera_sort(v, 1, &out));
  s = gathered(out, &n);
  for (int64_t i = 0; s && i < N; ++i) CHECK(ref[(int64_t)s[i]] == sorted[i], "argsort[%lld]", (long long)i);
  free(s);

  OK(tessera_scan(v, 0, 0, &out));
  s = gathered(out, &n);
  double acc = 0;
  for (int64_t i = 0; s && i < N; ++i) {
    acc += ref[i];
    CHECK(fabs(s[i] - acc) < 1e-12, "cumsum[%lld]", (long long)i);
  }
  free(s);

  int64_t at = -1;
  OK(tessera_argreduce(v, 1, &at));
  int64_t want = 0;
  for (int64_t i = 1; i < N; ++i) want = ref[i] > ref[want] ? i : want;
  CHECK(at == want, "argmax %lld, want %lld", (long long)at, (long long)want);

  int64_t counts[4];
  OK(tessera_histogram(v, 4, -1.0, 1.0, counts));
  int64_t ref_counts[4] = {0};
  for (int64_t i = 0; i < N; ++i) ref_counts[ref[i] >= 1.0 ? 3 : (int)((ref[i] + 1.0) / 0.5)]++;
  for (int b = 0; b < 4; ++b) CHECK(counts[b] == ref_counts[b], "histogram bin %d: %lld, want %lld", b,
                                    (long long)counts[b], (long long)ref_counts[b]);

  OK(tessera_flatnonzero(v, &out));
  s = gathered(out, &n);
  CHECK(n == N - (N + 2) / 3, "flatnonzero: %lld indices", (long long)n);
  for (int64_t i = 0; s && i < n; ++i) CHECK(((int64_t)s[i]) % 3 != 0, "flatnonzero[%lld] = %g", (long long)i, s[i]);
  free(s);

  /* take: the values at flat indices 36, 0, 5 */
  const int64_t three[1] = {3};
  tessera_grid g;
  tessera_array idx;
  OK(tessera_grid_create(rt, 1, NULL, NULL, &g));
  OK(tessera_layout_create(g, 1, three, NULL, NULL, NULL, NULL, &li));
  OK(tessera_grid_free(g));
  OK(tessera_array_create(li, TESSERA_I64, &idx));
  int64_t lo, hi;
  OK(tessera_layout_info(li, NULL, NULL, &lo, &hi, NULL));
  const int64_t picks[3] = {36, 0, 5};
  OK(tessera_array_write(idx, picks + lo, hi - lo));
  OK(tessera_take(v, idx, &out));
  s = gathered(out, &n);
  for (int64_t i = 0; s && i < 3; ++i) CHECK(s[i] == ref[picks[i]], "take[%lld]", (long long)i);
  free(s);
  OK(tessera_array_free(idx));

  /* a 7x5 matrix: sums along axis 1, argmin along axis 0, and (7x5)^T-free product (7x5)(5x7) */
  const int64_t shape2[2] = {7, 5}, shape3[2] = {5, 7};
  tessera_array m = make(2, shape2, row_major_2x, &l2), w = make(2, shape3, row_major_2x, &ln);
  OK(tessera_reduce_axis(m, TESSERA_SUM, 1, &out));
  s = gathered(out, &n);
  CHECK(n == 7, "sum along axis 1: %lld values", (long long)n);
  for (int64_t r = 0; s && r < 7; ++r) {
    double t = 0;
    for (int64_t c = 0; c < 5; ++c) t += row_major_2x(r * 5 + c);
    CHECK(fabs(s[r] - t) < 1e-12, "row sum %lld: %g, want %g", (long long)r, s[r], t);
  }
  free(s);
  OK(tessera_reduce_axis(m, TESSERA_ARGMIN, 0, &out));
  s = gathered(out, &n);
  for (int64_t c = 0; s && c < 5; ++c) {
    int64_t best = 0;
    for (int64_t r = 1; r < 7; ++r) best = row_major_2x(r * 5 + c) < row_major_2x(best * 5 + c) ? r : best;
    CHECK((int64_t)s[c] == best, "argmin along axis 0, column %lld: %g, want %lld", (long long)c, s[c], (long long)best);
  }
  free(s);
  OK(tessera_matmul(m, w, &out));
  s = gathered(out, &n);
  CHECK(n == 49, "matmul: %lld values", (long long)n);
  for (int64_t r = 0; s && r < 7; ++r)
    for (int64_t c = 0; c < 7; ++c) {
      double t = 0;
      for (int64_t k = 0; k < 5; ++k) t += row_major_2x(r * 5 + k) * row_major_2x(k * 7 + c);
      CHECK(fabs(s[r * 7 + c] - t) < 1e-9, "matmul[%lld,%lld]: %g, want %g", (long long)r, (long long)c, s[r * 7 + c], t);
    }
  free(s);

  /* ravel: the 7x5 matrix flattened row-major */
  OK(tessera_ravel(m, &out));
  s = gathered(out, &n);
  CHECK(n == 35, "ravel: %lld values", (long long)n);
  for (int64_t i = 0; s && i < 35; ++i) CHECK(s[i] == row_major_2x(i), "ravel[%lld]", (long long)i);
  free(s);

  /* compress: the matrix's elements where a bool mask (i % 4 == 0) is true */
  tessera_array mask;
  OK(tessera_array_create(l2, TESSERA_BOOL, &mask));
  int64_t lo2[2], hi2[2];
  OK(tessera_layout_info(l2, NULL, NULL, lo2, hi2, NULL));
  const int64_t nm = box_size(2, lo2, hi2);
  unsigned char* bits = malloc((size_t)(nm ? nm : 1));
  int64_t at2[2] = {lo2[0], lo2[1]};
  for (int64_t i = 0; i < nm; ++i, next_index(2, at2, lo2, hi2)) bits[i] = flat(2, shape2, at2) % 4 == 0;
  OK(tessera_array_write(mask, bits, nm));
  free(bits);
  OK(tessera_compress(mask, m, &out));
  s = gathered(out, &n);
  CHECK(n == 9, "compress: %lld values", (long long)n);
  for (int64_t i = 0; s && i < n; ++i) CHECK(s[i] == row_major_2x(4 * i), "compress[%lld]", (long long)i);
  free(s);
  OK(tessera_array_free(mask));

  /* put: v.flat[idx] = -7 for the three indices of `idx` */
  OK(tessera_array_create(li, TESSERA_I64, &idx));
  OK(tessera_array_write(idx, picks + lo, hi - lo));
  tessera_array sevens;
  OK(tessera_array_create(li, TESSERA_F64, &sevens));
  double minus7[3] = {-7, -7, -7};
  OK(tessera_array_write(sevens, minus7, hi - lo));
  OK(tessera_put(v, idx, sevens));
  OK(tessera_take(v, idx, &out));
  s = gathered(out, &n);
  for (int64_t i = 0; s && i < 3; ++i) CHECK(s[i] == -7, "put then take [%lld]: %g", (long long)i, s[i]);
  free(s);
  OK(tessera_array_free(sevens));
  OK(tessera_array_free(idx));

  /* bad inputs: an axis out of range, matmul of 1-D arrays, complex min */
  CHECK(tessera_reduce_axis(m, TESSERA_SUM, 2, &out) == TESSERA_ERROR_INVALID_ARGUMENT, "axis 2 of a 2-D array");
  CHECK(tessera_matmul(v, v, &out) == TESSERA_ERROR_SHAPE_MISMATCH, "matmul of 1-D arrays");
  CHECK(tessera_sort(v, 0, NULL) == TESSERA_ERROR_INVALID_ARGUMENT, "sort into NULL");
  OK(tessera_array_free(m));
  OK(tessera_array_free(w));
  OK(tessera_array_free(v));
  OK(tessera_layout_free(l1));
  OK(tessera_layout_free(l2));
  OK(tessera_layout_free(ln));
  OK(tessera_layout_free(li));
}
