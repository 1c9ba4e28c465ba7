/* Bad input through the C API: every case must return the expected status and a message that
 * names the operation, the problem and the rank; nothing may crash, and every handle made here is
 * freed again (tessera_live_handles() returns to 0; ASan checks the memory in CI). */
#include <mpi.h>

#include "capi_test.h"

int failures = 0, my_rank = 0, n_ranks = 1;
tessera_runtime rt = {0};
tessera_memory mem = TESSERA_MEMORY_HOST;
static int cases = 0;

#define EXPECT(call, status, word)                                                                  \
  do {                                                                                              \
    ++cases;                                                                                        \
    tessera_status st_ = (call);                                                                    \
    const char* m_ = tessera_last_error();                                                          \
    CHECK(st_ == (status), "%s -> %s, expected %s (%s)", #call, tessera_status_name(st_), #status, m_); \
    CHECK(st_ == TESSERA_SUCCESS || (strstr(m_, word) && strstr(m_, "rank")),                       \
          "%s: message '%s' lacks '%s' or the rank", #call, m_, word);                              \
  } while (0)

static void io_cases(tessera_grid grid, tessera_array a) {
  EXPECT(tessera_save_npy(a, NULL), TESSERA_ERROR_INVALID_ARGUMENT, "path is NULL");
  EXPECT(tessera_load_npy(a, "no/such/file.npy"), TESSERA_ERROR_IO, "no/such/file.npy");
  const int64_t zero_chunks[2] = {0, 4};
  EXPECT(tessera_save_zarr(a, "bad.zarr", zero_chunks, 0), TESSERA_ERROR_INVALID_ARGUMENT, "chunks[0] = 0");
  const int64_t chunks[2] = {2, 4}, shard[2] = {3, 4};
  EXPECT(tessera_save_zarr_ex(a, "bad.zarr", chunks, 3, "lz5", -1, NULL, 0), TESSERA_ERROR_INVALID_ARGUMENT, "codec 'lz5'");
  EXPECT(tessera_save_zarr_ex(a, "bad.zarr", chunks, 3, "blosc-lz4", 10, NULL, 0), TESSERA_ERROR_INVALID_ARGUMENT,
         "level 10");
  EXPECT(tessera_save_zarr_ex(a, "bad.zarr", chunks, 3, NULL, -1, shard, 0), TESSERA_ERROR_INVALID_ARGUMENT,
         "multiple of the chunks");
  EXPECT(tessera_save_zarr_ex(a, "bad.zarr", chunks, 2, NULL, -1, chunks, 0), TESSERA_ERROR_INVALID_ARGUMENT, "format 3");
  char npy[32];
  snprintf(npy, sizeof npy, "bad_np%d.npy", n_ranks);
  OK(tessera_save_npy(a, npy));
  tessera_layout l;
  tessera_array ints;
  OK(tessera_array_layout(a, &l));
  OK(tessera_array_create(l, TESSERA_I32, &ints));
  EXPECT(tessera_load_npy(ints, npy), TESSERA_ERROR_IO, npy);
  tessera_checkpoint_reader r;
  EXPECT(tessera_checkpoint_reader_create(grid, "no_such_checkpoint", &r), TESSERA_ERROR_IO, "no_such_checkpoint");
  OK(tessera_array_free(ints));
  OK(tessera_layout_free(l));
}

static void fft_cases(tessera_grid grid, tessera_layout l2, tessera_array a) {
  tessera_fft_plan p;
  EXPECT(tessera_fft_plan_create(l2, TESSERA_C128, TESSERA_FFT_R2C, TESSERA_DECOMP_AUTO, 0, &p),
         TESSERA_ERROR_DTYPE_MISMATCH, "real floating dtype");
  EXPECT(tessera_fft_plan_create(l2, TESSERA_F64, (tessera_fft_type)9, TESSERA_DECOMP_AUTO, 0, &p),
         TESSERA_ERROR_INVALID_ARGUMENT, "type 9");
  const int64_t s4[4] = {4, 4, 4, 4};
  tessera_layout l4;
  OK(tessera_layout_create(grid, 4, s4, NULL, NULL, NULL, NULL, &l4));
  EXPECT(tessera_fft_plan_create(l4, TESSERA_C128, TESSERA_FFT_C2C, TESSERA_DECOMP_AUTO, 0, &p),
         TESSERA_ERROR_INVALID_ARGUMENT, "1-3-D");
  OK(tessera_layout_free(l4));
  OK(tessera_fft_plan_create(l2, TESSERA_F64, TESSERA_FFT_R2C, TESSERA_DECOMP_AUTO, 0, &p));
  EXPECT(tessera_fft_execute(p, TESSERA_FFT_FORWARD, a, a, TESSERA_NORM_BACKWARD), TESSERA_ERROR_DTYPE_MISMATCH,
         "the plan takes f64 -> c128");
  tessera_layout out;
  tessera_array y, z;
  OK(tessera_fft_plan_layouts(p, NULL, &out));
  OK(tessera_array_create(out, TESSERA_C128, &y));
  OK(tessera_array_create(out, TESSERA_F64, &z));
  EXPECT(tessera_fft_execute(p, TESSERA_FFT_FORWARD, z, y, TESSERA_NORM_BACKWARD), TESSERA_ERROR_LAYOUT_MISMATCH,
         "the plan needs");
  EXPECT(tessera_fft_execute(p, (tessera_fft_direction)0, a, y, TESSERA_NORM_BACKWARD), TESSERA_ERROR_INVALID_ARGUMENT,
         "direction 0");
  EXPECT(tessera_fft_execute(p, TESSERA_FFT_FORWARD, a, y, (tessera_fft_norm)7), TESSERA_ERROR_INVALID_ARGUMENT,
         "norm 7");
  OK(tessera_fft_plan_free(p));
  EXPECT(tessera_fft_execute(p, TESSERA_FFT_FORWARD, a, y, TESSERA_NORM_BACKWARD), TESSERA_ERROR_INVALID_HANDLE,
         "freed");
  EXPECT(tessera_fft_plan_free(p), TESSERA_ERROR_INVALID_HANDLE, "freed");
  OK(tessera_array_free(y));
  OK(tessera_array_free(z));
  OK(tessera_layout_free(out));
}

static void array_cases(tessera_grid grid) {
  const int64_t s2[2] = {8, 6}, s2b[2] = {8, 5}, s1[1] = {48}, halo[2] = {1, 1};
  tessera_layout l2, l2b, l1;
  tessera_array a, b, c, d, tmp;
  OK(tessera_layout_create(grid, 2, s2, NULL, NULL, halo, NULL, &l2));
  OK(tessera_layout_create(grid, 2, s2b, NULL, NULL, NULL, NULL, &l2b));
  OK(tessera_layout_create(grid, 1, s1, NULL, NULL, NULL, NULL, &l1));
  int64_t shard;
  OK(tessera_layout_sizes(l2, &shard, NULL));
  double* buf = calloc((size_t)shard + 1, sizeof(double));
  EXPECT(tessera_array_create(l2, (tessera_dtype)17, &tmp), TESSERA_ERROR_INVALID_ARGUMENT, "dtype 17");
  EXPECT(tessera_array_adopt(l2, TESSERA_F64, buf, shard - 1, TESSERA_MEMORY_HOST, NULL, &tmp),
         TESSERA_ERROR_SHAPE_MISMATCH, "holds");
  EXPECT(tessera_array_adopt(l2, TESSERA_F64, NULL, shard, TESSERA_MEMORY_HOST, NULL, &tmp),
         TESSERA_ERROR_INVALID_ARGUMENT, "data is NULL");
  EXPECT(tessera_array_adopt(l2, TESSERA_F64, (char*)buf + 1, shard, TESSERA_MEMORY_HOST, NULL, &tmp),
         TESSERA_ERROR_INVALID_ARGUMENT, "aligned");
  EXPECT(tessera_array_adopt(l2, TESSERA_F64, buf, shard, (tessera_memory)5, NULL, &tmp),
         TESSERA_ERROR_INVALID_ARGUMENT, "memory kind 5");
  int is_cuda = 0;
  OK(tessera_runtime_device(rt, NULL, 0, &is_cuda));
  if (!is_cuda)
    EXPECT(tessera_array_adopt(l2, TESSERA_F64, buf, shard, TESSERA_MEMORY_DEVICE, NULL, &tmp),
           TESSERA_ERROR_BACKEND_UNAVAILABLE, "TESSERA_MEMORY_DEVICE");
  OK(tessera_array_adopt(l2, TESSERA_F64, buf, shard, TESSERA_MEMORY_HOST, NULL, &a));
  OK(tessera_array_create(l2b, TESSERA_F64, &b));
  OK(tessera_array_create(l2, TESSERA_I32, &c));
  OK(tessera_array_create(l1, TESSERA_F64, &d));
  EXPECT(tessera_redistribute(a, c), TESSERA_ERROR_DTYPE_MISMATCH, "f64 vs i32");
  EXPECT(tessera_redistribute(a, b), TESSERA_ERROR_SHAPE_MISMATCH, "[8,6]");
  EXPECT(tessera_redistribute(a, d), TESSERA_ERROR_SHAPE_MISMATCH, "2-D vs 1-D");
  double small[2];
  EXPECT(tessera_array_read(a, small, 2), TESSERA_ERROR_SHAPE_MISMATCH, "host buffer holds 2");
  EXPECT(tessera_gather(a, 0, small, 2, TESSERA_MEMORY_HOST), TESSERA_ERROR_SHAPE_MISMATCH, "tessera_gather");
  EXPECT(tessera_scatter(a, 0, NULL, 48, TESSERA_MEMORY_HOST), TESSERA_ERROR_SHAPE_MISMATCH, "tessera_scatter");
  EXPECT(tessera_gather(a, n_ranks, NULL, 0, TESSERA_MEMORY_HOST), TESSERA_ERROR_INVALID_ARGUMENT, "root");
  double r;
  EXPECT(tessera_reduce(a, (tessera_reduce_op)11, &r), TESSERA_ERROR_INVALID_ARGUMENT, "op 11");
  EXPECT(tessera_reduce(a, TESSERA_SUM, NULL), TESSERA_ERROR_INVALID_ARGUMENT, "result is NULL");
  tessera_array z;
  OK(tessera_array_create(l2, TESSERA_C128, &z));
  EXPECT(tessera_reduce(z, TESSERA_MAX, &r), TESSERA_ERROR_DTYPE_MISMATCH, "complex");
  OK(tessera_array_free(z));
  tessera_halo h;
  OK(tessera_halo_exchange_begin(a, &h));
  EXPECT(tessera_array_free(a), TESSERA_ERROR_BUSY, "pending halo exchange");
  EXPECT(tessera_halo_exchange(a), TESSERA_ERROR_BUSY, "pending");
  OK(tessera_halo_exchange_end(h));
  EXPECT(tessera_halo_exchange_end(h), TESSERA_ERROR_INVALID_HANDLE, "freed");
  fft_cases(grid, l2b, b);
  io_cases(grid, b);
  OK(tessera_array_free(a));
  EXPECT(tessera_array_info(a, NULL, NULL, NULL), TESSERA_ERROR_INVALID_HANDLE, "freed");
  EXPECT(tessera_array_free(a), TESSERA_ERROR_INVALID_HANDLE, "freed");
  EXPECT(tessera_halo_exchange(a), TESSERA_ERROR_INVALID_HANDLE, "freed");
  OK(tessera_layout_free(l1));
  EXPECT(tessera_array_create(l1, TESSERA_F64, &tmp), TESSERA_ERROR_INVALID_HANDLE, "freed");
  EXPECT(tessera_array_create((tessera_layout){b.id}, TESSERA_F64, &tmp), TESSERA_ERROR_INVALID_HANDLE,
         "is a tessera_array handle, not a tessera_layout");
  OK(tessera_array_free(b));
  OK(tessera_array_free(c));
  OK(tessera_array_free(d));
  OK(tessera_layout_free(l2));
  OK(tessera_layout_free(l2b));
  free(buf);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
  (void)test_memory;
  EXPECT(tessera_runtime_create(MPI_COMM_WORLD, NULL, NULL), TESSERA_ERROR_INVALID_ARGUMENT, "out is NULL");
  EXPECT(tessera_runtime_create(MPI_COMM_WORLD, "tpu:0", &rt), TESSERA_ERROR_INVALID_ARGUMENT, "tpu:0");
  EXPECT(tessera_runtime_create(MPI_COMM_NULL, NULL, &rt), TESSERA_ERROR_INVALID_ARGUMENT, "MPI_COMM_NULL");
  OK(tessera_runtime_create(MPI_COMM_WORLD, NULL, &rt));
  tessera_runtime rt2;
  EXPECT(tessera_runtime_create(MPI_COMM_WORLD, NULL, &rt2), TESSERA_ERROR_BUSY, "one per process");
  tessera_grid grid, g2;
  EXPECT(tessera_grid_create((tessera_runtime){0}, 1, NULL, NULL, &grid), TESSERA_ERROR_INVALID_HANDLE, "null handle");
  EXPECT(tessera_grid_create(rt, 0, NULL, NULL, &grid), TESSERA_ERROR_INVALID_ARGUMENT, "ndims 0");
  OK(tessera_grid_create(rt, 1, NULL, NULL, &grid));
  const int64_t s[2] = {8, 6}, neg[2] = {8, -6};
  tessera_layout l;
  EXPECT(tessera_layout_create(grid, 5, s, NULL, NULL, NULL, NULL, &l), TESSERA_ERROR_INVALID_ARGUMENT, "ndim 5");
  EXPECT(tessera_layout_create(grid, 2, neg, NULL, NULL, NULL, NULL, &l), TESSERA_ERROR_INVALID_ARGUMENT, "negative");
  EXPECT(tessera_layout_create(grid, 2, NULL, NULL, NULL, NULL, NULL, &l), TESSERA_ERROR_INVALID_ARGUMENT, "shape is NULL");
  const int split[2] = {3, -1};
  EXPECT(tessera_layout_create(grid, 2, s, split, NULL, NULL, NULL, &l), TESSERA_ERROR_INVALID_ARGUMENT, "grid axis 3");
  int64_t offsets[8] = {0};
  for (int i = 0; i <= n_ranks; ++i) offsets[i] = 8 - i;  /* decreasing */
  offsets[n_ranks + 1] = 0, offsets[n_ranks + 2] = 6;
  EXPECT(tessera_layout_create(grid, 2, s, NULL, offsets, NULL, NULL, &l), TESSERA_ERROR_INVALID_ARGUMENT, "offsets");
  EXPECT(tessera_layout_create((tessera_grid){rt.id}, 2, s, NULL, NULL, NULL, NULL, &l), TESSERA_ERROR_INVALID_HANDLE,
         "tessera_runtime handle");
  void* p = NULL;
  EXPECT(tessera_free(rt, TESSERA_MEMORY_HOST, &p), TESSERA_ERROR_INVALID_ARGUMENT, "not returned by tessera_malloc");
  EXPECT(tessera_memcpy(rt, &p, (tessera_memory)3, &p, TESSERA_MEMORY_HOST, 8), TESSERA_ERROR_INVALID_ARGUMENT,
         "memory kind 3");
  OK(tessera_grid_create(rt, 1, NULL, NULL, &g2));
  EXPECT(tessera_runtime_free(rt), TESSERA_ERROR_BUSY, "2 other handle(s)");
  OK(tessera_grid_free(g2));
  array_cases(grid);
  OK(tessera_grid_free(grid));
  CHECK(tessera_live_handles() == 1, "%lld handles alive (only the runtime should be)", (long long)tessera_live_handles());
  OK(tessera_runtime_free(rt));
  EXPECT(tessera_runtime_rank(rt, NULL, NULL), TESSERA_ERROR_INVALID_HANDLE, "freed");
  CHECK(tessera_live_handles() == 0, "%lld handles alive at the end", (long long)tessera_live_handles());
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (my_rank == 0) printf("capi bad input: %d cases, %d failed checks\n", cases, total);
  MPI_Finalize();
  return total == 0 && cases >= 20 ? 0 : 1;
}
