#include <cstdio>
#include <string>

#include "tessera/comm/error.hpp"

namespace tessera::detail {
void mpi_failure(int code, const char* expr, const char* file, int line) {
  char reason[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(code, reason, &len) != MPI_SUCCESS) std::snprintf(reason, sizeof reason, "code %d", code);
  throw MpiError(std::string("MPI call failed: ") + expr + ": " + reason + " at " + file + ":" +
                     std::to_string(line),
                 code);
}
}  // namespace tessera::detail
