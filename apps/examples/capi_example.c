/* capi_example: the C API in a short program. Each rank adopts its own buffer (its block of a
 * 2-D periodic field plus one halo cell per side), Tessera fills the halos from the neighbours,
 * and the program checks a halo cell, the global sum and an FFT round trip. Exit code 1 on a
 * wrong result.   mpirun -np 4 capi_example */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera/tessera.h>

#define TRY(call)                                                                  \
  do {                                                                             \
    if ((call) != TESSERA_SUCCESS) {                                               \
      fprintf(stderr, "%s failed: %s\n", #call, tessera_last_error());             \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                \
    }                                                                              \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  tessera_runtime rt;
  tessera_grid grid;
  tessera_layout lay;
  tessera_array u;
  TRY(tessera_runtime_create(MPI_COMM_WORLD, NULL, &rt));
  int rank, size;
  TRY(tessera_runtime_rank(rt, &rank, &size));
  const int64_t shape[2] = {40, 30}, halo[2] = {1, 1};
  const int periodic[2] = {1, 1};
  TRY(tessera_grid_create(rt, 2, NULL, NULL, &grid));
  TRY(tessera_layout_create(grid, 2, shape, NULL, NULL, halo, periodic, &lay));
  int64_t lo[2], hi[2], pad[2], n;
  TRY(tessera_layout_info(lay, NULL, NULL, lo, hi, pad));
  TRY(tessera_layout_sizes(lay, &n, NULL));
  double* buf = calloc((size_t)n, sizeof(double)); /* the program's own memory */
  for (int64_t i = lo[0]; i < hi[0]; ++i)
    for (int64_t j = lo[1]; j < hi[1]; ++j) buf[(i - lo[0] + 1) * pad[1] + (j - lo[1] + 1)] = 100.0 * i + j;
  TRY(tessera_array_adopt(lay, TESSERA_F64, buf, n, TESSERA_MEMORY_HOST, NULL, &u));
  TRY(tessera_halo_exchange(u));
  /* The halo cell left of the block's first row holds global (lo0 - 1 mod 40, lo1). */
  const double left = buf[0 * pad[1] + 1], want_left = 100.0 * ((lo[0] + 39) % 40) + lo[1];
  double sum;
  TRY(tessera_reduce(u, TESSERA_SUM, &sum));
  const double want_sum = 100.0 * (39 * 40 / 2) * 30 + (29 * 30 / 2) * 40;

  /* FFT round trip: R2C forward, C2R backward (norm backward), back equals u. */
  tessera_fft_plan plan;
  tessera_layout in, out;
  tessera_array spec, back;
  tessera_layout plain;
  TRY(tessera_layout_create(grid, 2, shape, NULL, NULL, NULL, NULL, &plain));
  TRY(tessera_fft_plan_create(plain, TESSERA_F64, TESSERA_FFT_R2C, TESSERA_DECOMP_AUTO, 0, &plan));
  TRY(tessera_fft_plan_layouts(plan, &in, &out));
  TRY(tessera_array_create(in, TESSERA_F64, &back));
  TRY(tessera_array_create(out, TESSERA_C128, &spec));
  TRY(tessera_redistribute(u, back));
  TRY(tessera_fft_execute(plan, TESSERA_FFT_FORWARD, back, spec, TESSERA_NORM_BACKWARD));
  TRY(tessera_fft_execute(plan, TESSERA_FFT_BACKWARD, spec, back, TESSERA_NORM_BACKWARD));
  double back_sum;
  TRY(tessera_reduce(back, TESSERA_SUM, &back_sum));

  const int ok = left == want_left && fabs(sum - want_sum) < 1e-9 * want_sum && fabs(back_sum - want_sum) < 1e-9 * want_sum;
  if (rank == 0)
    printf("capi_example on %d ranks: sum %.1f (expected %.1f), after the FFT round trip %.6f: %s\n", size, sum,
           want_sum, back_sum, ok ? "OK" : "WRONG");
  TRY(tessera_array_free(spec));
  TRY(tessera_array_free(back));
  TRY(tessera_array_free(u));
  TRY(tessera_fft_plan_free(plan));
  TRY(tessera_layout_free(in));
  TRY(tessera_layout_free(out));
  TRY(tessera_layout_free(plain));
  TRY(tessera_layout_free(lay));
  TRY(tessera_grid_free(grid));
  TRY(tessera_runtime_free(rt));
  free(buf);
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
