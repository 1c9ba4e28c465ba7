// The CUDA device runtime: streams, events and memory (runtime API only; no kernels here).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "../detail/device_runtime.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/settings.hpp"

namespace tessera::detail {
std::size_t cuda_self_test(const Device& device, std::size_t n);  // self_test.cu

namespace cuda {
namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

struct ScopedDevice {
  int prev = -1;
  explicit ScopedDevice(int d) {
    TESSERA_CHECK_CUDA(cudaGetDevice(&prev));
    if (prev != d) TESSERA_CHECK_CUDA(cudaSetDevice(d));
  }
  ~ScopedDevice() {
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != prev) (void)cudaSetDevice(prev);
  }
};

// Configure each device's default pool once: keep freed memory (release threshold) so that
// stream-ordered allocations are reused instead of going back to the driver.
void configure_pool(int device) {
  static std::mutex mu;
  static std::vector<bool> done;
  std::lock_guard<std::mutex> lock(mu);
  if (device >= static_cast<int>(done.size())) done.resize(device + 1, false);
  if (done[device]) return;
  cudaMemPool_t pool;
  TESSERA_CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = settings().pool_release_threshold;
  TESSERA_CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  done[device] = true;
}
}  // namespace

void* stream_create(int device, bool high_priority) {
  ScopedDevice g(device);
  int least = 0, greatest = 0;  // numerically, greatest < least
  TESSERA_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s;
  TESSERA_CHECK_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high_priority ? greatest : least));
  return s;
}
void stream_destroy(int device, void* s) noexcept {
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) return;
  (void)cudaSetDevice(device);
  (void)cudaStreamDestroy(as_stream(s));
  (void)cudaSetDevice(prev);
}
void stream_synchronize(int device, void* s) {
  ScopedDevice g(device);
  TESSERA_CHECK_CUDA(cudaStreamSynchronize(as_stream(s)));
}
void* event_create(int device) {
  ScopedDevice g(device);
  cudaEvent_t e;
  TESSERA_CHECK_CUDA(cudaEventCreate(&e));
  return e;
}
void event_destroy(int, void* e) noexcept { (void)cudaEventDestroy(static_cast<cudaEvent_t>(e)); }
void event_record(int device, void* e, void* s) {
  ScopedDevice g(device);
  TESSERA_CHECK_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(e), as_stream(s)));
}
void stream_wait_event(int device, void* s, void* e) {
  ScopedDevice g(device);
  TESSERA_CHECK_CUDA(cudaStreamWaitEvent(as_stream(s), static_cast<cudaEvent_t>(e), 0));
}
void event_synchronize(void* e) { TESSERA_CHECK_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(e))); }
float event_elapsed_ms(void* start, void* end) {
  float ms = 0;
  TESSERA_CHECK_CUDA(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  return ms;
}
int current_device() {
  int d = 0;
  TESSERA_CHECK_CUDA(cudaGetDevice(&d));
  return d;
}
void set_current_device(int device) { TESSERA_CHECK_CUDA(cudaSetDevice(device)); }

void* malloc_async(std::size_t bytes, int device, void* stream) {
  ScopedDevice g(device);
  configure_pool(device);
  void* p = nullptr;
  if (bytes == 0) return nullptr;
  cudaError_t e = cudaMallocAsync(&p, bytes, as_stream(stream));
  if (e == cudaErrorMemoryAllocation) {
    // Give cached blocks back to the driver and try once more before failing.
    (void)cudaGetLastError();
    cudaMemPool_t pool;
    TESSERA_CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
    TESSERA_CHECK_CUDA(cudaDeviceSynchronize());
    TESSERA_CHECK_CUDA(cudaMemPoolTrimTo(pool, 0));
    e = cudaMallocAsync(&p, bytes, as_stream(stream));
  }
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    TESSERA_CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    throw OutOfMemory("out of memory: requested " + std::to_string(bytes) + " bytes, " +
                          std::to_string(free_b) + " bytes free of " + std::to_string(total_b),
                      Device::cuda(device));
  }
  TESSERA_CHECK_CUDA(e);
  return p;
}
void free_async(void* p, int device, void* stream) noexcept {
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) return;
  (void)cudaSetDevice(device);
  (void)cudaFreeAsync(p, as_stream(stream));
  (void)cudaSetDevice(prev);
}
void* malloc_pinned(std::size_t bytes) {
  void* p = nullptr;
  cudaError_t e = cudaMallocHost(&p, bytes == 0 ? 1 : bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw OutOfMemory("out of memory: cannot pin " + std::to_string(bytes) + " bytes of host memory",
                      Device::host());
  }
  TESSERA_CHECK_CUDA(e);
  return p;
}
void free_pinned(void* p) noexcept { (void)cudaFreeHost(p); }
void memcpy_async(void* dst, const void* src, std::size_t bytes, int device, void* stream) {
  ScopedDevice g(device);
  TESSERA_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, as_stream(stream)));
}

class CudaRuntime final : public DeviceRuntime {
 public:
  void* stream_create(int d, bool high) const override { return cuda::stream_create(d, high); }
  void stream_destroy(int d, void* s) const noexcept override { cuda::stream_destroy(d, s); }
  void stream_synchronize(int d, void* s) const override { cuda::stream_synchronize(d, s); }
  void* event_create(int d) const override { return cuda::event_create(d); }
  void event_destroy(void* e) const noexcept override { (void)cudaEventDestroy(static_cast<cudaEvent_t>(e)); }
  void event_record(int d, void* e, void* s) const override { cuda::event_record(d, e, s); }
  void stream_wait_event(int d, void* s, void* e) const override { cuda::stream_wait_event(d, s, e); }
  void event_synchronize(void* e) const override { cuda::event_synchronize(e); }
  float event_elapsed_ms(void* a, void* b) const override { return cuda::event_elapsed_ms(a, b); }
  int current_device() const override { return cuda::current_device(); }
  void set_current_device(int d) const override { cuda::set_current_device(d); }
  void* allocate(std::size_t bytes, int d, void* s) const override { return cuda::malloc_async(bytes, d, s); }
  void deallocate(void* p, int d, void* s) const noexcept override { cuda::free_async(p, d, s); }
  void* allocate_pinned(std::size_t bytes) const override { return cuda::malloc_pinned(bytes); }
  void free_pinned(void* p) const noexcept override { cuda::free_pinned(p); }
  void copy(void* dst, const void* src, std::size_t bytes, int d, void* s, bool sync) const override {
    cuda::memcpy_async(dst, src, bytes, d, s);
    if (sync) cuda::stream_synchronize(d, s);
  }
  std::size_t self_test(int d, std::size_t n) const override { return cuda_self_test(Device::cuda(d), n); }
};
}  // namespace cuda

const DeviceRuntime& cuda_runtime() {
  static const cuda::CudaRuntime r;
  return r;
}
}  // namespace tessera::detail

namespace tessera::local::detail {
int multiprocessor_count(int device) {
  static std::mutex mu;
  static std::vector<int> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (device >= static_cast<int>(cache.size())) cache.resize(device + 1, 0);
  if (cache[device] == 0)
    TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&cache[device], cudaDevAttrMultiProcessorCount, device));
  return cache[device];
}
}  // namespace tessera::local::detail
