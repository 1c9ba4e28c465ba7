// cuFFT LTO store callbacks of store-multiplying plans (fft_plan.hpp, PlanDesc::store_multiply).
// Not part of the library's objects: CMake compiles this file alone to LTO-IR (-dlto -fatbin)
// and embeds the fatbin, which cufftXtSetJITCallback links into cuFFT's own kernels when a plan
// is made. The scale and the spectral factor are applied as cuFFT writes its output: no pass.
// Three kinds: tessera_store_* (scale and spectral factor), the lighter tessera_scale_* (cuFFT
// inlines the callback into its kernels and refuses one that costs its kernel too many resources)
// and tessera_const_*, a scale fixed by the plan that no store loads from memory.
// C++ linkage, on purpose: cuFFT declares the callback by the name it is given with its own
// signature, so it looks for the C++-mangled symbol; an extern "C" one is not found and planning
// fails with CUFFT_INTERNAL_ERROR.
#include <cufftXt.h>

#include "fft_store.hpp"

using tessera::local::fft::detail::StoreParams;
using tessera::local::fft::detail::store_factor;

__device__ void tessera_store_c(void* out, unsigned long long off, cufftComplex e, void* info, void*) {
  const float f = static_cast<float>(store_factor(*static_cast<const StoreParams*>(info), off));
  static_cast<cufftComplex*>(out)[off] = make_cuComplex(e.x * f, e.y * f);
}

__device__ void tessera_store_z(void* out, unsigned long long off, cufftDoubleComplex e, void* info,
                                           void*) {
  const double f = store_factor(*static_cast<const StoreParams*>(info), off);
  static_cast<cufftDoubleComplex*>(out)[off] = make_cuDoubleComplex(e.x * f, e.y * f);
}

__device__ void tessera_store_r(void* out, unsigned long long off, cufftReal e, void* info, void*) {
  static_cast<cufftReal*>(out)[off] = e * static_cast<float>(store_factor(*static_cast<const StoreParams*>(info), off));
}

__device__ void tessera_store_d(void* out, unsigned long long off, cufftDoubleReal e, void* info, void*) {
  static_cast<cufftDoubleReal*>(out)[off] = e * store_factor(*static_cast<const StoreParams*>(info), off);
}

// Scale only (PlanDesc::store_spectral false): the factor is the first field of the parameters.
__device__ void tessera_scale_c(void* out, unsigned long long off, cufftComplex e, void* info, void*) {
  const float f = static_cast<float>(static_cast<const StoreParams*>(info)->scale);
  static_cast<cufftComplex*>(out)[off] = make_cuComplex(e.x * f, e.y * f);
}

__device__ void tessera_scale_z(void* out, unsigned long long off, cufftDoubleComplex e, void* info,
                                           void*) {
  const double f = static_cast<const StoreParams*>(info)->scale;
  static_cast<cufftDoubleComplex*>(out)[off] = make_cuDoubleComplex(e.x * f, e.y * f);
}

__device__ void tessera_scale_r(void* out, unsigned long long off, cufftReal e, void* info, void*) {
  static_cast<cufftReal*>(out)[off] = e * static_cast<float>(static_cast<const StoreParams*>(info)->scale);
}

__device__ void tessera_scale_d(void* out, unsigned long long off, cufftDoubleReal e, void* info, void*) {
  static_cast<cufftDoubleReal*>(out)[off] = e * static_cast<const StoreParams*>(info)->scale;
}

// A fixed scale (PlanDesc::store_scale), carried in the parameter pointer's bits: a float's in the
// low 32 bits for single precision, a double's for double. No memory load per element (reading
// the scale through `info` on every store cost a backward FFT 4% at 512^3).
__device__ __forceinline__ float info_float(void* info) {
  return __uint_as_float(static_cast<unsigned>(reinterpret_cast<unsigned long long>(info)));
}
__device__ __forceinline__ double info_double(void* info) {
  return __longlong_as_double(static_cast<long long>(reinterpret_cast<unsigned long long>(info)));
}

__device__ void tessera_const_c(void* out, unsigned long long off, cufftComplex e, void* info, void*) {
  const float f = info_float(info);
  static_cast<cufftComplex*>(out)[off] = make_cuComplex(e.x * f, e.y * f);
}

__device__ void tessera_const_z(void* out, unsigned long long off, cufftDoubleComplex e, void* info, void*) {
  const double f = info_double(info);
  static_cast<cufftDoubleComplex*>(out)[off] = make_cuDoubleComplex(e.x * f, e.y * f);
}

__device__ void tessera_const_r(void* out, unsigned long long off, cufftReal e, void* info, void*) {
  static_cast<cufftReal*>(out)[off] = e * info_float(info);
}

__device__ void tessera_const_d(void* out, unsigned long long off, cufftDoubleReal e, void* info, void*) {
  static_cast<cufftDoubleReal*>(out)[off] = e * info_double(info);
}
