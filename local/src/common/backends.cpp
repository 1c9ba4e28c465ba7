// The backend registry of the local layer: the one place that knows which backends were built.
// Everything else reaches a backend through these functions.
#include "../detail/device_runtime.hpp"
#include "../detail/random_kernels.hpp"
#include "tessera/config.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/fft_plan.hpp"

namespace tessera::detail {
namespace {
[[noreturn]] void unavailable(const char* what) {
  throw BackendUnavailable(std::string(what) + " on a CUDA device needs the CUDA backend, which this build lacks");
}
}  // namespace

const DeviceRuntime& device_runtime(DeviceKind kind) {
  if (kind == DeviceKind::host) return host_runtime();
#if TESSERA_HAVE_CUDA
  return cuda_runtime();
#else
  unavailable("device memory and streams");
#endif
}

bool pinning_available() {
#if TESSERA_HAVE_CUDA
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

const RandomKernels& random_kernels(DeviceKind kind) {
  if (kind == DeviceKind::host) return host_random();
#if TESSERA_HAVE_CUDA
  return cuda_random();
#else
  unavailable("random numbers");
#endif
}
}  // namespace tessera::detail

namespace tessera::local::fft::detail {
std::unique_ptr<PlanBackend> make_plan_backend(const PlanDesc& normalized) {
  if (normalized.device.is_host()) return make_fftw_plan(normalized);
#if TESSERA_HAVE_CUDA
  return make_cufft_plan(normalized);
#else
  throw BackendUnavailable("fft plan on " + normalized.device.str() + " needs the CUDA backend", normalized.device);
#endif
}
}  // namespace tessera::local::fft::detail
