#include "tessera/local/error.hpp"

#include <atomic>
#include <cstdlib>

namespace tessera {
namespace {
std::atomic<int> g_rank{-2};  // -2: not set yet, look at the environment

int rank_from_environment() noexcept {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v);
  }
  return -1;
}

std::string with_context(const std::string& message, int rank, const Device* device) {
  std::string out = message + " (rank " + std::to_string(rank);
  if (device) out += ", " + device->str();
  return out + ")";
}
}  // namespace

int process_rank() noexcept {
  int r = g_rank.load(std::memory_order_relaxed);
  return r == -2 ? rank_from_environment() : r;
}

void set_process_rank(int rank) noexcept { g_rank.store(rank, std::memory_order_relaxed); }

Error::Error(const std::string& message)
    : std::runtime_error(with_context(message, process_rank(), nullptr)),
      message_(message),
      rank_(process_rank()) {}

Error::Error(const std::string& message, const Device& device)
    : std::runtime_error(with_context(message, process_rank(), &device)),
      message_(message),
      rank_(process_rank()) {}

}  // namespace tessera
