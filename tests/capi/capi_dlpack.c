/* DLPack: an exported shard (with and without halos) describes the array's own memory and
 * outlives tessera_array_free; an imported tensor is adopted without a copy and its deleter runs
 * when the array is freed. */
#include "capi_test.h"
#ifdef TESSERA_TEST_DLPACK
#include <tessera/tessera_dlpack.h>

static int deleted = 0;
static void count_delete(DLManagedTensor* t) {
  ++deleted;
  (void)t;
}

void test_dlpack(void) {
  const int64_t shape[2] = {6, 5}, halo[2] = {1, 2};
  tessera_grid grid;
  tessera_layout lay;
  int64_t lo[2], hi[2], padded[2], shard;
  OK(tessera_grid_create(rt, 1, NULL, NULL, &grid));
  OK(tessera_layout_create(grid, 2, shape, NULL, NULL, halo, NULL, &lay));
  OK(tessera_layout_info(lay, NULL, NULL, lo, hi, padded));
  OK(tessera_layout_sizes(lay, &shard, NULL));
  tessera_array a;
  OK(tessera_array_create(lay, TESSERA_F64, &a));
  fill_fval(a, 1.0);
  void* data;
  OK(tessera_array_info(a, &data, NULL, NULL));
  DLManagedTensor *whole = NULL, *inner = NULL;
  OK(tessera_array_to_dlpack(a, 1, &whole));
  OK(tessera_array_to_dlpack(a, 0, &inner));
  OK(tessera_array_free(a));  /* the tensors keep the shard */
  if (whole && inner) {
    const DLTensor* t = &inner->dl_tensor;
    CHECK(whole->dl_tensor.data == data, "exported data %p, shard %p", whole->dl_tensor.data, data);
    CHECK(t->ndim == 2 && t->shape[0] == hi[0] - lo[0] && t->shape[1] == hi[1] - lo[1], "interior shape");
    CHECK(t->strides[0] == padded[1] && t->strides[1] == 1, "interior strides %lld %lld", (long long)t->strides[0],
          (long long)t->strides[1]);
    CHECK(t->dtype.code == kDLFloat && t->dtype.bits == 64 && t->dtype.lanes == 1, "dtype");
    CHECK(t->device.device_type == (mem == TESSERA_MEMORY_DEVICE ? kDLCUDA : kDLCPU), "device type %d",
          (int)t->device.device_type);
    const size_t bytes = (size_t)shard * sizeof(double);
    double* host = malloc(bytes);
    to_host(host, whole->dl_tensor.data, bytes);
    for (int64_t i = lo[0]; i < hi[0]; ++i)
      for (int64_t j = lo[1]; j < hi[1]; ++j) {
        const int64_t g[2] = {i, j};
        const double got = host[(i - lo[0] + halo[0]) * padded[1] + (j - lo[1] + halo[1])];
        CHECK(got == fval(2, g), "exported element (%lld,%lld) is %g", (long long)i, (long long)j, got);
      }
    free(host);
    whole->deleter(whole);
    inner->deleter(inner);
  }

  /* Import: the caller's tensor over its own buffer becomes the shard. */
  double* buf = test_alloc((size_t)shard * sizeof(double));
  int64_t st[2] = {padded[1], 1};
  DLManagedTensor mt = {0};
  mt.dl_tensor.data = buf;
  mt.dl_tensor.device = (DLDevice){mem == TESSERA_MEMORY_DEVICE ? kDLCUDA : kDLCPU, 0};
  if (mem == TESSERA_MEMORY_DEVICE) {
    char name[32];
    OK(tessera_runtime_device(rt, name, sizeof name, NULL));
    mt.dl_tensor.device.device_id = atoi(name + 5);  /* "cuda:N" */
  }
  mt.dl_tensor.ndim = 2;
  mt.dl_tensor.dtype = (DLDataType){kDLFloat, 64, 1};
  mt.dl_tensor.shape = padded;
  mt.dl_tensor.strides = st;
  mt.deleter = count_delete;
  tessera_array b;
  OK(tessera_array_from_dlpack(lay, &mt, NULL, &b));
  void* bdata = NULL;
  OK(tessera_array_info(b, &bdata, NULL, NULL));
  CHECK(bdata == buf, "imported array data %p, tensor %p", bdata, (void*)buf);
  fill_fval(b, 2.0);
  check_gathered(b, 2.0, 0, "DLPack import");
  OK(tessera_array_free(b));
  CHECK(deleted == 1, "the imported tensor's deleter ran %d times", deleted);
  test_free(buf);
  OK(tessera_layout_free(lay));
  OK(tessera_grid_free(grid));
}
#else
void test_dlpack(void) {}  /* built without DLPack */
#endif
