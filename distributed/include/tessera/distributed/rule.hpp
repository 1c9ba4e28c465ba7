// The fixed rule: every choice Tessera makes when nothing was measured (TESSERA_TUNE=off, or no
// wisdom for the problem): the exchange's transport and chunk counts, the FFT's decomposition and
// pipeline depth, SUMMA's grid and panel width. One place, so that the autotuner (tune.hpp) has
// one fallback and docs/tuning.md one list to cite the measurements it rests on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/comm/transport.hpp"
#include "tessera/local/array.hpp"

namespace tessera::distributed::rule {

/// The exchange's most chunks per piece (TESSERA_EXCHANGE_CHUNKS=0): 8 on GPUs (redistribute of
/// 1024^3 c64 on 2 and 4 H200s: 8 best of 1, 2, 4, 8, 16), 1 on the host (MPI calls return when done).
int exchange_chunks(bool cuda);

/// The FFT transposes' pipeline depth (TESSERA_FFT_CHUNKS=0 and TESSERA_EXCHANGE_CHUNKS=0) for
/// pieces of `pair_bytes` per pair of ranks: on GPUs 8 from 512 MiB (1024^3 c64 on 2 and 4 H200s),
/// 4 below (512^3: 4 best of 1, 2, 4, 8); 1 on the host.
int fft_chunks(bool cuda, std::uint64_t pair_bytes);
/// The pair size from which the FFT's transposes take 8 chunks.
inline constexpr std::uint64_t fft_deep_pair_bytes = std::uint64_t{8} * 64 << 20;

/// What the `auto` transport depends on, all the same on every rank.
struct TransportFacts {
  bool host = true;               ///< host buffers (always MPI)
  int ranks = 1;                  ///< the group's size
  bool one_node = false;          ///< every rank of the group on one node
  bool own_gpus = false;          ///< device buffers go through NCCL (every rank has its own GPU)
  bool shared_gpus = false;       ///< ranks share GPUs (NCCL refused them; their own is MPI)
  bool symmetric_windows = false; ///< NCCL >= 2.27 registers symmetric windows
  std::size_t global_bytes = 0;   ///< bytes the exchange moves in all
};
/// Exchanges of at least this many bytes per pair of ranks leave the group's own transport.
inline constexpr std::size_t ipc_min_pair_bytes = std::size_t{1} << 20;
/// `auto`, on one node with at least ipc_min_pair_bytes per pair: one GPU per rank: ipc on 2
/// ranks, nccl-window on more (where NCCL has windows); ranks sharing GPUs (NCCL refuses them, the
/// group's own is MPI through host memory): ipc. Everything else the group's own (nccl; MPI
/// where NCCL is off or not built: ipc across GPUs needs peer access, not known here).
comm::Transport transport(const TransportFacts& f);

/// The FFT's automatic decomposition: a pencil for a 3-D array with more ranks than planes along
/// axis 0, else a slab.
bool fft_pencil(int dims, int ranks, local::index_t n0);

/// SUMMA's most k-columns per step where MatmulOptions::panel is 0: min(1024, the k block).
inline constexpr local::index_t summa_max_panel = 1024;
local::index_t summa_panel(local::index_t k_block);
/// SUMMA's grid where the operands' grid is not 2-D: MPI_Dims_create's balanced {rows, columns}.
std::vector<int> summa_grid(int ranks);

}  // namespace tessera::distributed::rule
