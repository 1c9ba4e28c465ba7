/* Files through the C API: .npy and Zarr round trips onto another layout, and a checkpoint with
 * metadata read back onto other layouts. Paths are relative to the test's working directory. */
#include "capi_test.h"

void test_io(void) {
  const int64_t shape[3] = {9, 8, 7};
  const int64_t halo[3] = {1, 1, 1};
  const int64_t chunks[3] = {4, 3, 7};
  char npy[64], zarr[64], ckpt[64];
  snprintf(npy, sizeof npy, "capi_np%d.npy", n_ranks);
  snprintf(zarr, sizeof zarr, "capi_np%d.zarr", n_ranks);
  snprintf(ckpt, sizeof ckpt, "capi_np%d_ckpt", n_ranks);
  tessera_grid grid, line;
  tessera_layout blocks, slabs;
  OK(tessera_grid_create(rt, 3, NULL, NULL, &grid));
  OK(tessera_grid_create(rt, 1, NULL, NULL, &line));
  OK(tessera_layout_create(grid, 3, shape, NULL, NULL, halo, NULL, &blocks));
  OK(tessera_layout_create(line, 3, shape, NULL, NULL, NULL, NULL, &slabs));
  tessera_array u, v, w, k;
  OK(tessera_array_create(blocks, TESSERA_F64, &u));
  OK(tessera_array_create(blocks, TESSERA_I32, &v));
  fill_fval(u, 1.0);
  fill_fval(v, 3.0);

  OK(tessera_save_npy(u, npy));
  OK(tessera_array_create(slabs, TESSERA_F64, &w));
  OK(tessera_load_npy(w, npy));
  check_gathered(w, 1.0, 0, ".npy round trip");
  OK(tessera_save_zarr(v, zarr, chunks, 1));
  OK(tessera_array_create(slabs, TESSERA_I32, &k));
  OK(tessera_load_zarr(k, zarr));
  check_gathered(k, 3.0, 0, "Zarr round trip");
  /* Zarr v3, sharded (shards of 2 x 2 x 1 chunks), Blosc-zstd at level 3, durable. */
  const int64_t shard[3] = {8, 6, 7};
  snprintf(zarr, sizeof zarr, "capi_np%d_v3.zarr", n_ranks);
  OK(tessera_save_zarr_ex(u, zarr, chunks, 3, "blosc-zstd", 3, shard, 1));
  OK(tessera_load_zarr(w, zarr));
  check_gathered(w, 1.0, 0, "Zarr v3 sharded round trip");

  tessera_checkpoint_writer cw;
  OK(tessera_checkpoint_writer_create(grid, ckpt, &cw));
  OK(tessera_checkpoint_set_step(cw, 42));
  OK(tessera_checkpoint_set_time(cw, 0.25));
  OK(tessera_checkpoint_set_attribute(cw, "scheme", "rk4"));
  OK(tessera_checkpoint_add(cw, "u", u));
  OK(tessera_checkpoint_add(cw, "v", v));
  OK(tessera_checkpoint_commit(cw));
  OK(tessera_checkpoint_writer_free(cw));
  tessera_checkpoint_reader cr;
  OK(tessera_checkpoint_reader_create(line, ckpt, &cr));
  int64_t step = 0;
  double time = 0;
  char scheme[16] = "";
  OK(tessera_checkpoint_info(cr, &step, &time));
  OK(tessera_checkpoint_get_attribute(cr, "scheme", scheme, sizeof scheme));
  CHECK(step == 42 && time == 0.25 && !strcmp(scheme, "rk4"), "checkpoint step %lld time %g scheme '%s'",
        (long long)step, time, scheme);
  OK(tessera_checkpoint_load(cr, "u", w));
  OK(tessera_checkpoint_load(cr, "v", k));
  check_gathered(w, 1.0, 0, "checkpoint u");
  check_gathered(k, 3.0, 0, "checkpoint v");
  OK(tessera_checkpoint_reader_free(cr));
  OK(tessera_array_free(u));
  OK(tessera_array_free(v));
  OK(tessera_array_free(w));
  OK(tessera_array_free(k));
  OK(tessera_layout_free(blocks));
  OK(tessera_layout_free(slabs));
  OK(tessera_grid_free(grid));
  OK(tessera_grid_free(line));
  /* The XDMF sidecar (local: rank 0 writes it and reads it back). */
  if (my_rank == 0) {
    const int64_t shape[3] = {4, 5, 6};
    OK(tessera_write_xdmf("capi_u.xmf", "capi_u.h5", "fields/u", 3, shape, TESSERA_F64, 0.5));
    FILE* f = fopen("capi_u.xmf", "r");
    char text[4096] = {0};
    CHECK(f != NULL, "capi_u.xmf was not written");
    if (f) {
      fread(text, 1, sizeof text - 1, f);
      fclose(f);
    }
    CHECK(strstr(text, "Dimensions=\"4 5 6\"") != NULL, "xmf dimensions: %s", text);
    CHECK(strstr(text, ">capi_u.h5:/fields/u<") != NULL, "xmf dataset path: %s", text);
    CHECK(strstr(text, "Precision=\"8\"") != NULL, "xmf precision: %s", text);
    CHECK(tessera_write_xdmf("capi_v.xmf", "v.h5", "v", 1, shape, TESSERA_F64, 1.0) == TESSERA_ERROR_INVALID_ARGUMENT,
          "a 1-D XDMF grid");
    CHECK(tessera_write_xdmf("capi_v.xmf", "v.h5", "v", 3, shape, TESSERA_C64, 1.0) == TESSERA_ERROR_IO,
          "an XDMF grid of complex values");
    CHECK(tessera_write_xdmf("capi_v.xmf", "v.h5", "v", 3, shape, TESSERA_F64, 0.0) == TESSERA_ERROR_INVALID_ARGUMENT,
          "spacing 0");
  }
}
