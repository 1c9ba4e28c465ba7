#include <string>

#include "tessera/comm/nccl_check.hpp"

namespace tessera::detail {
void nccl_failure(int code, const char* reason, const char* last, const char* expr,
                  const char* file, int line) {
  std::string msg = std::string("NCCL call failed: ") + expr + ": " + reason;
  if (last && *last) msg += std::string(" [") + last + "]";
  throw NcclError(msg + " at " + file + ":" + std::to_string(line), code);
}
}  // namespace tessera::detail
