/* Helpers of the C API tests: checks that count failures, typed element access through doubles,
 * and the memory the arrays adopt (host, or the runtime's GPU with --device). */
#ifndef TESSERA_CAPI_TEST_H
#define TESSERA_CAPI_TEST_H
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera/tessera.h>

/* Defined in capi_main.c: failed checks, this rank, the rank count, the runtime, the memory the
 * arrays adopt. */
extern int failures, my_rank, n_ranks;
extern tessera_runtime rt;
extern tessera_memory mem;

void test_arrays(void);
void test_moves(void);
void test_boxes(void);
void test_fft(void);
void test_io(void);
void test_dlpack(void);
void test_algorithms(void);

#define CHECK(cond, ...)                                                \
  do {                                                                  \
    if (!(cond)) {                                                      \
      ++failures;                                                       \
      fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", my_rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                     \
      fprintf(stderr, "\n");                                            \
    }                                                                   \
  } while (0)
/* A call that must succeed; on failure prints the status and tessera_last_error(). */
#define OK(call)                                                        \
  do {                                                                  \
    tessera_status st_ = (call);                                        \
    CHECK(st_ == TESSERA_SUCCESS, "%s -> %s: %s", #call, tessera_status_name(st_), tessera_last_error()); \
  } while (0)

static inline size_t dtype_bytes(tessera_dtype t) {
  switch (t) {
    case TESSERA_F32: case TESSERA_I32: return 4;
    case TESSERA_F64: case TESSERA_C64: case TESSERA_I64: return 8;
    case TESSERA_C128: return 16;
  }
  return 0;
}
static inline int dtype_complex(tessera_dtype t) { return t == TESSERA_C64 || t == TESSERA_C128; }
static const tessera_dtype all_dtypes[6] __attribute__((unused)) = {TESSERA_F32, TESSERA_F64, TESSERA_C64, TESSERA_C128, TESSERA_I32, TESSERA_I64};

/* Element i of buf: re (and im for complex types). */
static inline void put_value(void* buf, tessera_dtype t, int64_t i, double re, double im) {
  switch (t) {
    case TESSERA_F32: ((float*)buf)[i] = (float)re; break;
    case TESSERA_F64: ((double*)buf)[i] = re; break;
    case TESSERA_C64: ((float*)buf)[2 * i] = (float)re, ((float*)buf)[2 * i + 1] = (float)im; break;
    case TESSERA_C128: ((double*)buf)[2 * i] = re, ((double*)buf)[2 * i + 1] = im; break;
    case TESSERA_I32: ((int32_t*)buf)[i] = (int32_t)re; break;
    case TESSERA_I64: ((int64_t*)buf)[i] = (int64_t)re; break;
  }
}
static inline double complex get_value(const void* buf, tessera_dtype t, int64_t i) {
  switch (t) {
    case TESSERA_F32: return ((const float*)buf)[i];
    case TESSERA_F64: return ((const double*)buf)[i];
    case TESSERA_C64: return ((const float*)buf)[2 * i] + I * ((const float*)buf)[2 * i + 1];
    case TESSERA_C128: return ((const double*)buf)[2 * i] + I * ((const double*)buf)[2 * i + 1];
    case TESSERA_I32: return ((const int32_t*)buf)[i];
    case TESSERA_I64: return (double)((const int64_t*)buf)[i];
  }
  return NAN;
}

/* Row-major flat index of idx in shape. */
static inline int64_t flat(int ndim, const int64_t* shape, const int64_t* idx) {
  int64_t f = 0;
  for (int a = 0; a < ndim; ++a) f = f * shape[a] + idx[a];
  return f;
}
/* Advances idx over the box [lo, hi); returns 0 when done. */
static inline int next_index(int ndim, int64_t* idx, const int64_t* lo, const int64_t* hi) {
  for (int a = ndim - 1; a >= 0; --a) {
    if (++idx[a] < hi[a]) return 1;
    idx[a] = lo[a];
  }
  return 0;
}
static inline int64_t box_size(int ndim, const int64_t* lo, const int64_t* hi) {
  int64_t n = 1;
  for (int a = 0; a < ndim; ++a) n *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;
  return n;
}

/* The memory kind the tests adopt: TESSERA_MEMORY_DEVICE with --device. */
static inline tessera_memory test_memory(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--device")) return TESSERA_MEMORY_DEVICE;
  return TESSERA_MEMORY_HOST;
}

/* Memory of the kind under test (tessera_malloc), and copies of it to/from the host. */
static inline void* test_alloc(size_t bytes) {
  void* p = NULL;
  OK(tessera_malloc(rt, mem, bytes, &p));
  return p;
}
static inline void test_free(void* p) { OK(tessera_free(rt, mem, p)); }
static inline void to_host(void* host, const void* src, size_t bytes) {
  OK(tessera_memcpy(rt, host, TESSERA_MEMORY_HOST, src, mem, bytes));
}
static inline void from_host(void* dst, const void* host, size_t bytes) {
  OK(tessera_memcpy(rt, dst, mem, host, TESSERA_MEMORY_HOST, bytes));
}
/* A value per global index, distinct and exact in float (extents below 16). */
static inline double fval(int ndim, const int64_t* g) {
  double v = 0;
  for (int a = 0; a < ndim; ++a) v = v * 16 + (double)g[a];
  return v + 1;
}
/* Fills a's interior with fval (re) and -fval/2 (im) through a host buffer. */
void fill_fval(tessera_array a, double scale);
/* Gathers a on rank 0 and checks every element against scale * fval; returns the failures. */
void check_gathered(tessera_array a, double scale, double tol, const char* what);
#endif
