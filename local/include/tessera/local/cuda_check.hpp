// TESSERA_CHECK_CUDA(call): throws CudaError naming the call, its error, the rank and file:line;
// a sticky error (the context is lost: illegal address, launch failure, ...) aborts the process,
// since no later CUDA call in it can succeed. Include only where <cuda_runtime_api.h> is available.
#pragma once
#include <cuda_runtime_api.h>

namespace tessera::detail {
/// True for errors after which the CUDA context is unusable.
bool is_sticky_cuda_error(int code) noexcept;
[[noreturn]] void cuda_failure(int code, const char* name, const char* text, const char* expr,
                               const char* file, int line);
}  // namespace tessera::detail

/// Throws CudaError if `call` fails; aborts if the error is sticky.
#define TESSERA_CHECK_CUDA(call)                                                          \
  do {                                                                                    \
    const cudaError_t tessera_err_ = (call);                                              \
    if (tessera_err_ != cudaSuccess)                                                      \
      ::tessera::detail::cuda_failure(static_cast<int>(tessera_err_),                     \
                                      cudaGetErrorName(tessera_err_),                     \
                                      cudaGetErrorString(tessera_err_), #call, __FILE__, \
                                      __LINE__);                                          \
  } while (0)
