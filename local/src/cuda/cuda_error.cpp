#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/local/cuda_check.hpp"
#include "tessera/local/error.hpp"

namespace tessera::detail {

bool is_sticky_cuda_error(int code) noexcept {
  switch (static_cast<cudaError_t>(code)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

void cuda_failure(int code, const char* name, const char* text, const char* expr,
                  const char* file, int line) {
  int device = -1;
  const std::string msg = std::string("CUDA call failed: ") + expr + " returned " + name + " (" +
                          text + ") at " + file + ":" + std::to_string(line);
  if (is_sticky_cuda_error(code)) {
    // The context is corrupted: every later call fails too, so stop here with the reason.
    std::fprintf(stderr, "tessera: fatal (sticky) %s (rank %d); aborting\n", msg.c_str(),
                 process_rank());
    std::fflush(stderr);
    std::abort();
  }
  (void)cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  if (cudaGetDevice(&device) != cudaSuccess) throw CudaError(msg, code);
  throw CudaError(msg, code, Device::cuda(device));
}

}  // namespace tessera::detail
