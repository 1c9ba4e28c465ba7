#include <string>

#include "tessera/comm/error.hpp"

namespace tessera::comm::detail {
std::string mpi_error_text(int code) {
  char reason[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(code, reason, &len) != MPI_SUCCESS) return "code " + std::to_string(code);
  return std::string(reason, static_cast<std::size_t>(len));
}
}  // namespace tessera::comm::detail

namespace tessera::detail {
void mpi_failure(int code, const char* expr, const char* file, int line) {
  throw MpiError(std::string("MPI call failed: ") + expr + ": " + comm::detail::mpi_error_text(code) + " at " + file +
                     ":" + std::to_string(line),
                 code);
}
}  // namespace tessera::detail
