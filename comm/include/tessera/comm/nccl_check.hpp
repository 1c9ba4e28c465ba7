// TESSERA_CHECK_NCCL(call): throws NcclError with the call, NCCL's reason and last error text,
// the rank and file:line. Include only in builds with NCCL (TESSERA_HAVE_NCCL).
#pragma once
#include <nccl.h>

#include "tessera/comm/error.hpp"

namespace tessera::detail {
[[noreturn]] void nccl_failure(int code, const char* reason, const char* last, const char* expr,
                               const char* file, int line);
}

/// Throws NcclError if `call` fails (ncclInProgress is not a failure).
#define TESSERA_CHECK_NCCL(call)                                                           \
  do {                                                                                     \
    const ncclResult_t tessera_nr_ = (call);                                               \
    if (tessera_nr_ != ncclSuccess && tessera_nr_ != ncclInProgress)                       \
      ::tessera::detail::nccl_failure(static_cast<int>(tessera_nr_),                       \
                                      ncclGetErrorString(tessera_nr_),                     \
                                      ncclGetLastError(nullptr), #call, __FILE__, __LINE__); \
  } while (0)
