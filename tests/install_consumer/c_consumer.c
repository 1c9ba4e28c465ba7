/* A C program against an installed Tessera (tessera::c): a halo exchange and a sum on a 2-D
 * periodic layout, checked against the serial values. Exit code 0 when right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera/tessera.h>

#define TRY(call)                                                             \
  if ((call) != TESSERA_SUCCESS) {                                            \
    fprintf(stderr, "%s: %s\n", #call, tessera_last_error());                 \
    return 1;                                                                 \
  }

static int run(void) {
  tessera_runtime rt;
  tessera_grid grid;
  tessera_layout lay;
  tessera_array a;
  const int64_t shape[2] = {12, 10}, halo[2] = {1, 0};
  const int periodic[2] = {1, 1};
  TRY(tessera_runtime_create(MPI_COMM_WORLD, NULL, &rt));
  TRY(tessera_grid_create(rt, 1, NULL, NULL, &grid));
  TRY(tessera_layout_create(grid, 2, shape, NULL, NULL, halo, periodic, &lay));
  int64_t lo[2], hi[2], pad[2], n;
  TRY(tessera_layout_info(lay, NULL, NULL, lo, hi, pad));
  TRY(tessera_layout_sizes(lay, &n, NULL));
  double* u = calloc((size_t)n, sizeof(double));
  for (int64_t i = lo[0]; i < hi[0]; ++i)
    for (int64_t j = 0; j < 10; ++j) u[(i - lo[0] + 1) * 10 + j] = 10.0 * i + j;
  TRY(tessera_array_adopt(lay, TESSERA_F64, u, n, TESSERA_MEMORY_HOST, NULL, &a));
  TRY(tessera_halo_exchange(a));
  double sum;
  TRY(tessera_reduce(a, TESSERA_SUM, &sum));
  const int ok = u[3] == 10.0 * ((lo[0] + 11) % 12) + 3 && sum == 10.0 * 66 * 10 + 45 * 12;
  TRY(tessera_array_free(a));
  TRY(tessera_layout_free(lay));
  TRY(tessera_grid_free(grid));
  TRY(tessera_runtime_free(rt));
  free(u);
  printf("c_consumer: %s\n", ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run();
  MPI_Finalize();
  return rc;
}
