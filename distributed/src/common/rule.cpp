// The fixed rule (rule.hpp). The measurements behind each number: docs/tuning.md, "The fixed rule".
#include "tessera/distributed/rule.hpp"

#include <mpi.h>

#include <algorithm>

namespace tessera::distributed::rule {

int exchange_chunks(bool cuda) { return cuda ? 8 : 1; }

int fft_chunks(bool cuda, std::uint64_t pair_bytes) {
  if (!cuda) return 1;
  return pair_bytes >= fft_deep_pair_bytes ? 8 : 4;
}

comm::Transport transport(const TransportFacts& f) {
  using comm::Transport;
  if (f.host || f.ranks < 2 || !f.one_node) return Transport::nccl;
  const auto p = static_cast<std::size_t>(f.ranks);
  if (f.global_bytes / (p * p) < ipc_min_pair_bytes) return Transport::nccl;
  if (f.shared_gpus) return Transport::ipc;  // their own is MPI through the host: 15x slower
  if (!f.own_gpus) return Transport::nccl;
  if (p == 2) return Transport::ipc;
  return f.symmetric_windows ? Transport::nccl_window : Transport::nccl;
}

bool fft_pencil(int dims, int ranks, local::index_t n0) { return dims == 3 && ranks > n0; }

local::index_t summa_panel(local::index_t k_block) { return std::min<local::index_t>(summa_max_panel, k_block); }

std::vector<int> summa_grid(int ranks) {
  int dims[2] = {0, 0};
  MPI_Dims_create(std::max(ranks, 1), 2, dims);
  return {dims[0], dims[1]};
}

}  // namespace tessera::distributed::rule
