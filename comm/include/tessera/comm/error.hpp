// Errors of the comm layer and TESSERA_CHECK_MPI. Our communicators use MPI_ERRORS_RETURN, so a
// failed MPI call becomes an MpiError naming the call, MPI's reason, the rank and file:line.
#pragma once
#include <mpi.h>

#include <string>

#include "tessera/local/error.hpp"

namespace tessera {

/// A failed MPI call; code() is MPI's error code.
class MpiError : public Error {
 public:
  MpiError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A failed NCCL call; code() is the ncclResult_t.
class NcclError : public Error {
 public:
  NcclError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A collective that failed or timed out; names the operation, group size and elapsed time.
class CommError : public Error { using Error::Error; };

namespace detail {
[[noreturn]] void mpi_failure(int code, const char* expr, const char* file, int line);
}
}  // namespace tessera

/// Throws MpiError if `call` does not return MPI_SUCCESS.
#define TESSERA_CHECK_MPI(call)                                                         \
  do {                                                                                  \
    const int tessera_rc_ = (call);                                                     \
    if (tessera_rc_ != MPI_SUCCESS)                                                     \
      ::tessera::detail::mpi_failure(tessera_rc_, #call, __FILE__, __LINE__);          \
  } while (0)
