/* The C API's functional tests: every result is checked against a serial reference computed
 * from the global index. `--device` adopts memory on the runtime's GPU instead of the host.
 * Exit code: 0 when every check passed on every rank. */
#include <mpi.h>

#include "capi_test.h"

int failures = 0, my_rank = 0, n_ranks = 1;
tessera_runtime rt = {0};
tessera_memory mem = TESSERA_MEMORY_HOST;

void fill_fval(tessera_array a, double scale) {
  tessera_layout l;
  int ndim;
  int64_t lo[4], hi[4];
  tessera_dtype t;
  OK(tessera_array_layout(a, &l));
  OK(tessera_layout_info(l, &ndim, NULL, lo, hi, NULL));
  OK(tessera_array_info(a, NULL, &t, NULL));
  const int64_t n = box_size(ndim, lo, hi);
  char* host = malloc((size_t)(n > 0 ? n : 1) * dtype_bytes(t));
  int64_t g[4];
  memcpy(g, lo, sizeof g);
  for (int64_t i = 0; i < n; ++i, next_index(ndim, g, lo, hi))
    put_value(host, t, i, scale * fval(ndim, g), -scale * fval(ndim, g) / 2);
  OK(tessera_array_write(a, host, n));
  free(host);
  OK(tessera_layout_free(l));
}

void check_gathered(tessera_array a, double scale, double tol, const char* what) {
  tessera_layout l;
  int ndim;
  int64_t shape[4], n;
  tessera_dtype t;
  OK(tessera_array_layout(a, &l));
  OK(tessera_layout_info(l, &ndim, shape, NULL, NULL, NULL));
  OK(tessera_layout_sizes(l, NULL, &n));
  OK(tessera_array_info(a, NULL, &t, NULL));
  const size_t bytes = (size_t)n * dtype_bytes(t);
  void* dev = my_rank == 0 ? test_alloc(bytes) : NULL;
  OK(tessera_gather(a, 0, dev, my_rank == 0 ? n : 0, mem));
  if (my_rank == 0) {
    char* host = malloc(bytes);
    to_host(host, dev, bytes);
    int64_t lo[4] = {0}, g[4] = {0}, bad = 0;
    for (int64_t i = 0; i < n; ++i, next_index(ndim, g, lo, shape)) {
      const double f = scale * fval(ndim, g);
      const double complex want = f + (dtype_complex(t) ? -I * f / 2 : 0);
      if (cabs(get_value(host, t, i) - want) > tol * fabs(f) && bad++ < 3)
        CHECK(0, "%s: element %lld is %g%+gi, expected %g%+gi", what, (long long)i, creal(get_value(host, t, i)),
              cimag(get_value(host, t, i)), creal(want), cimag(want));
    }
    free(host);
    test_free(dev);
  }
  OK(tessera_layout_free(l));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
  mem = test_memory(argc, argv);
  /* Host mode names the host: a CUDA build's default device is this rank's GPU, whose arrays
   * would not be the host memory these checks read. */
  OK(tessera_runtime_create(MPI_COMM_WORLD, mem == TESSERA_MEMORY_DEVICE ? "cuda" : "host", &rt));
  if (failures == 0) {
    test_arrays();
    test_moves();
    test_boxes();
    test_fft();
    test_io();
    test_dlpack();
    test_algorithms();
    CHECK(tessera_live_handles() == 1, "%lld handles alive at the end (only the runtime should be)",
          (long long)tessera_live_handles());
    OK(tessera_runtime_free(rt));
    CHECK(tessera_live_handles() == 0, "%lld handles alive after tessera_runtime_free", (long long)tessera_live_handles());
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (my_rank == 0) printf("capi tests (%s memory, %d ranks): %d failed checks\n",
                           mem == TESSERA_MEMORY_DEVICE ? "device" : "host", n_ranks, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
