/* Adopted shards of every dtype and rank 1-4: halo exchange (blocking and split phase), gather,
 * reductions; then scatter, redistribute (balanced and explicit blocks) and min/max/norm2. */
#include "capi_test.h"

static const int64_t full_shape[4] = {7, 6, 5, 4};

/* Checks every cell of the shard (halos included, all axes periodic) against fval. */
static void check_shard(const void* host, tessera_dtype t, int ndim, const int64_t* shape, const int64_t* lo,
                        const int64_t* padded, const int64_t* halo, const char* what) {
  int64_t p[4] = {0}, zero[4] = {0};
  int64_t n = box_size(ndim, zero, padded), bad = 0;
  for (int64_t i = 0; i < n; ++i, next_index(ndim, p, zero, padded)) {
    int64_t g[4];
    for (int a = 0; a < ndim; ++a) g[a] = ((lo[a] + p[a] - halo[a]) % shape[a] + shape[a]) % shape[a];
    const double f = fval(ndim, g);
    const double complex want = f + (dtype_complex(t) ? -I * f / 2 : 0);
    if (cabs(get_value(host, t, i) - want) > 1e-6 * f && bad++ < 3)
      CHECK(0, "%s: shard cell %lld is %g, expected %g", what, (long long)i, creal(get_value(host, t, i)), creal(want));
  }
}

static void one_case(tessera_dtype t, int ndim) {
  char what[64];
  snprintf(what, sizeof what, "dtype %d, %d-D", (int)t, ndim);
  tessera_grid grid;
  tessera_layout lay;
  const int gdims = ndim < 2 ? ndim : 2;
  const int64_t halo[4] = {1, 1, 1, 1};
  const int periodic[4] = {1, 1, 1, 1};
  int64_t lo[4], hi[4], padded[4], shard;
  OK(tessera_grid_create(rt, gdims, NULL, NULL, &grid));
  OK(tessera_layout_create(grid, ndim, full_shape, NULL, NULL, halo, periodic, &lay));
  OK(tessera_layout_info(lay, NULL, NULL, lo, hi, padded));
  OK(tessera_layout_sizes(lay, &shard, NULL));
  const size_t bytes = (size_t)shard * dtype_bytes(t);
  void* buf = test_alloc(bytes);
  char* host = calloc((size_t)shard, dtype_bytes(t));
  from_host(buf, host, bytes);  /* halos 0 until the exchange */
  tessera_array a;
  OK(tessera_array_adopt(lay, t, buf, shard, mem, NULL, &a));
  fill_fval(a, 1.0);
  if (ndim % 2) {
    tessera_halo h;
    OK(tessera_halo_exchange_begin(a, &h));
    OK(tessera_halo_exchange_end(h));
  } else {
    OK(tessera_halo_exchange(a));
  }
  OK(tessera_array_synchronize(a));
  to_host(host, buf, bytes);
  check_shard(host, t, ndim, full_shape, lo, padded, halo, what);
  check_gathered(a, 1.0, 1e-6, what);

  /* The global sum against the serial one. */
  int64_t zero[4] = {0}, g[4] = {0};
  double complex want = 0;
  for (int64_t i = 0, n = box_size(ndim, zero, full_shape); i < n; ++i, next_index(ndim, g, zero, full_shape))
    want += fval(ndim, g) * (dtype_complex(t) ? 1 - I / 2 : 1);
  double complex got = 0;
  char res[16];
  OK(tessera_reduce(a, TESSERA_SUM, res));
  if (t == TESSERA_I32 || t == TESSERA_I64) got = (double)*(int64_t*)res;
  else got = get_value(res, t, 0);
  CHECK(cabs(got - want) <= 1e-5 * cabs(want), "%s: sum %g, expected %g", what, creal(got), creal(want));
  if (ndim == 1 && !dtype_complex(t)) {  /* 1 * 2 * ... * 7 */
    OK(tessera_reduce(a, TESSERA_PROD, res));
    got = t == TESSERA_I32 || t == TESSERA_I64 ? (double)*(int64_t*)res : get_value(res, t, 0);
    CHECK(creal(got) == 5040, "%s: prod %g, expected 5040", what, creal(got));
  }
  OK(tessera_array_free(a));
  test_free(buf);
  free(host);
  OK(tessera_layout_free(lay));
  OK(tessera_grid_free(grid));
}

void test_arrays(void) {
  for (int d = 0; d < 6; ++d)
    for (int ndim = 1; ndim <= 4; ++ndim) one_case(all_dtypes[d], ndim);
}

void test_moves(void) {
  const int64_t shape[3] = {9, 8, 7};
  tessera_grid grid, line;
  tessera_layout blocks, pencils, uneven;
  OK(tessera_grid_create(rt, 2, NULL, NULL, &grid));
  OK(tessera_grid_create(rt, 1, NULL, NULL, &line));
  OK(tessera_layout_create(grid, 3, shape, NULL, NULL, NULL, NULL, &blocks));
  const int split[3] = {-1, 0, 1};
  OK(tessera_layout_create(grid, 3, shape, split, NULL, NULL, NULL, &pencils));
  /* Explicit blocks on the 1-D grid: rank 0 holds nothing, the others share axis 0. */
  int64_t offsets[5 + 2 + 2];
  int k = 0;
  offsets[k++] = 0;
  for (int r = 1; r <= n_ranks; ++r) offsets[k++] = n_ranks == 1 ? 9 : (r == 1 ? 0 : 9 * (r - 1) / (n_ranks - 1));
  offsets[k++] = 0, offsets[k++] = 8, offsets[k++] = 0, offsets[k++] = 7;
  const int split1[3] = {0, -1, -1};
  OK(tessera_layout_create(line, 3, shape, split1, offsets, NULL, NULL, &uneven));

  tessera_array a, b, c;
  OK(tessera_array_create(blocks, TESSERA_F64, &a));
  OK(tessera_array_create(pencils, TESSERA_F64, &b));
  OK(tessera_array_create(uneven, TESSERA_F64, &c));
  /* scatter from a global array on root (in memory of the kind under test) */
  const int64_t n = 9 * 8 * 7;
  double* global = malloc(n * sizeof(double));
  int64_t zero[3] = {0}, g[3] = {0};
  double mn = 1e300, mx = -1e300, ss = 0;
  for (int64_t i = 0; i < n; ++i, next_index(3, g, zero, shape)) {
    global[i] = 2 * fval(3, g);
    mn = fmin(mn, global[i]), mx = fmax(mx, global[i]), ss += global[i] * global[i];
  }
  void* dev = test_alloc(n * sizeof(double));
  from_host(dev, global, n * sizeof(double));
  OK(tessera_scatter(a, 0, my_rank == 0 ? dev : NULL, my_rank == 0 ? n : 0, mem));
  check_gathered(a, 2.0, 0, "scatter");
  OK(tessera_redistribute(a, b));
  check_gathered(b, 2.0, 0, "redistribute to pencils");
  OK(tessera_redistribute(b, c));
  check_gathered(c, 2.0, 0, "redistribute to explicit blocks");
  double r;
  OK(tessera_reduce(c, TESSERA_MIN, &r));
  CHECK(r == mn, "min %g, expected %g", r, mn);
  OK(tessera_reduce(c, TESSERA_MAX, &r));
  CHECK(r == mx, "max %g, expected %g", r, mx);
  OK(tessera_reduce(b, TESSERA_NORM2, &r));
  CHECK(fabs(r - sqrt(ss)) <= 1e-12 * sqrt(ss), "norm2 %.17g, expected %.17g", r, sqrt(ss));
  test_free(dev);
  free(global);
  OK(tessera_array_free(a));
  OK(tessera_array_free(b));
  OK(tessera_array_free(c));
  OK(tessera_layout_free(blocks));
  OK(tessera_layout_free(pencils));
  OK(tessera_layout_free(uneven));
  OK(tessera_grid_free(grid));
  OK(tessera_grid_free(line));
}

/* Boxes of a block: read, write and copy a strided box (halos included), against the values the
 * block was written with (10 * global row + column). */
void test_boxes(void) {
  const int64_t shape[2] = {10, 6}, halo[2] = {1, 1}, narrow[2] = {10, 3};
  const int split[2] = {0, -1};
  tessera_grid line;
  tessera_layout lay, half;
  OK(tessera_grid_create(rt, 1, NULL, NULL, &line));
  OK(tessera_layout_create(line, 2, shape, split, NULL, halo, NULL, &lay));
  OK(tessera_layout_create(line, 2, narrow, split, NULL, NULL, NULL, &half));
  int nd = 0;
  int64_t gs[2], lo[2], hi[2], pad[2];
  OK(tessera_layout_info(lay, &nd, gs, lo, hi, pad));
  const int64_t rows = hi[0] - lo[0];
  tessera_array a, b, f;
  OK(tessera_array_create(lay, TESSERA_F64, &a));
  OK(tessera_array_create(half, TESSERA_F64, &b));
  OK(tessera_array_create(half, TESSERA_F32, &f));
  double block[10 * 6], box[10 * 6];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < 6; ++j) block[i * 6 + j] = 10.0 * (double)(lo[0] + i) + (double)j;
  OK(tessera_array_write(a, block, rows * 6));
  /* every other column of the block, read to the host */
  const int64_t start[2] = {0, 1}, stop[2] = {rows, 6}, step[2] = {1, 2};
  OK(tessera_array_read_box(a, start, stop, step, box, rows * 3));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < 3; ++j)
      CHECK(box[i * 3 + j] == block[i * 6 + 1 + 2 * j], "read_box (%lld, %lld): %g", (long long)i, (long long)j,
            box[i * 3 + j]);
  /* columns 0, 2, 4 copied on the device into an array of the narrow shape */
  const int64_t start0[2] = {0, 0};
  OK(tessera_array_copy_box(b, a, start0, stop, step));
  OK(tessera_array_read(b, box, rows * 3));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < 3; ++j)
      CHECK(box[i * 3 + j] == block[i * 6 + 2 * j], "copy_box (%lld, %lld): %g", (long long)i, (long long)j,
            box[i * 3 + j]);
  /* -1 into the halo column left of the block and the block's column 5, then read with the halo */
  const int64_t hstart[2] = {0, -1}, hstop[2] = {rows, 6}, hstep[2] = {1, 6};
  double minus[2 * 10];
  for (int i = 0; i < 20; ++i) minus[i] = -1.0;
  OK(tessera_array_write_box(a, hstart, hstop, hstep, minus, rows * 2));
  double wide[10 * 7];
  const int64_t wstart[2] = {0, -1}, wstop[2] = {rows, 6}, one[2] = {1, 1};
  OK(tessera_array_read_box(a, wstart, wstop, one, wide, rows * 7));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < 7; ++j) {
      const double want = (j == 0 || j == 6) ? -1.0 : block[i * 6 + j - 1];
      CHECK(wide[i * 7 + j] == want, "write_box then read_box with the halo (%lld, %lld): %g, expected %g",
            (long long)i, (long long)j, wide[i * 7 + j], want);
    }
  /* bad boxes and arrays */
  const int64_t past[2] = {0, 0}, far[2] = {rows + 2, 6};
  CHECK(tessera_array_read_box(a, past, far, one, wide, 70) == TESSERA_ERROR_INVALID_ARGUMENT, "a box past the halo");
  const int64_t zero_step[2] = {1, 0};
  CHECK(tessera_array_read_box(a, past, stop, zero_step, wide, 70) == TESSERA_ERROR_INVALID_ARGUMENT, "step 0");
  CHECK(tessera_array_read_box(a, start, stop, step, box, 0) == (rows ? TESSERA_ERROR_SHAPE_MISMATCH : TESSERA_SUCCESS),
        "a host buffer smaller than the box");
  CHECK(tessera_array_copy_box(f, a, start0, stop, step) == TESSERA_ERROR_DTYPE_MISMATCH, "copy_box f64 -> f32");
  CHECK(tessera_array_copy_box(b, a, NULL, stop, step) == TESSERA_ERROR_INVALID_ARGUMENT, "a null start");
  OK(tessera_array_free(a));
  OK(tessera_array_free(b));
  OK(tessera_array_free(f));
  OK(tessera_layout_free(lay));
  OK(tessera_layout_free(half));
  OK(tessera_grid_free(line));
}
