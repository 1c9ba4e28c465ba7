// The distributed layer's settings: the consistency mode, the exchange engine (chunks, taper, transport), the FFT's
// transposes and the packing kernels (registered with tessera/local/config.hpp;
// docs/settings.md lists them).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/comm/transport.hpp"
#include "tessera/distributed/rule.hpp"
#include "tessera/local/config.hpp"

namespace tessera::distributed {

/// How the exchange engine moves device blocks between ranks (TESSERA_TRANSPORT, or per call
/// ExchangeOptions::transport): comm's one vocabulary (tessera/comm/transport.hpp).
using comm::Transport;
using comm::transport_from_name;
using comm::transport_name;

/// How choices (transport, chunks, decomposition, grids, panels) are made (TESSERA_TUNE, or per
/// call fft::Options::tune, ExchangeOptions::tune, MatmulOptions::tune): off = the fixed rule
/// (rule.hpp); wisdom = what the wisdom file knows for the problem, else the rule; measure = the
/// wisdom, else time the candidates when the plan is made and remember the winner (tune.hpp).
enum class Tune : int { off, wisdom, measure };
inline constexpr std::string_view tune_names[] = {"off", "wisdom", "measure"};
/// "off", "wisdom" or "measure".
inline const char* tune_name(Tune t) { return tune_names[static_cast<int>(t)].data(); }

struct Settings {
  // TESSERA_CHECK=1: consistency mode (every distributed call is checked across ranks first).
  bool check = false;
  // TESSERA_EXCHANGE_CHUNKS: most chunks a piece of an exchange is cut into (redistribute, halos,
  // FFT transposes); 0 = automatic: on GPUs 8, for the FFT's transposes fft_chunks_for's rule; 1 on the host.
  int exchange_chunks = 0;
  // TESSERA_EXCHANGE_CHUNK_MIB: least size of a chunk in MiB (0 cuts every piece into the most).
  int exchange_chunk_mib = 16;
  // TESSERA_EXCHANGE_TAPER=1 (default): of 3 or more chunks, the first and last are half the size
  // of the others (the pipeline's fill and drain are shorter); 0: equal chunks.
  bool exchange_taper = true;
  // TESSERA_FFT_CHUNKS: pipeline depth of the FFT's transposes; 0 = TESSERA_EXCHANGE_CHUNKS if
  // set, else fft_chunks_for's rule.
  int fft_chunks = 0;
  // TESSERA_COPY_BLOCKS_PER_SM: blocks per SM of the row-copy (packing) kernel (>= 1).
  int copy_blocks_per_sm = 2;
  // TESSERA_COPY_ENGINE=1: packing by cudaMemcpy2DAsync (copy engines) instead of a kernel.
  bool copy_engine = false;
  // TESSERA_TRANSPORT: see Transport.
  Transport transport = Transport::automatic;
  // TESSERA_TUNE: see Tune.
  Tune tune = Tune::wisdom;
  // TESSERA_TUNE_BUDGET_MS: most milliseconds one measured choice may spend timing candidates.
  int tune_budget_ms = 2000;
  // TESSERA_WISDOM: the wisdom file; unset: wisdom.json in TESSERA_KERNEL_CACHE_DIR; empty: none
  // (choices measured are remembered in memory only).
  std::optional<std::string> wisdom;

  /// Reads and validates this layer's variables (InvalidArgument naming a bad one).
  static Settings parse(const config::Lookup& lookup);
  static std::vector<config::Variable> variables();
  /// One "NAME=value" line per variable.
  std::string str() const;
  /// The wisdom file's path: TESSERA_WISDOM, else wisdom.json in the kernel cache directory ("": none).
  std::string wisdom_path() const;
  /// The exchange's chunk count on a device of this kind (resolves 0 = automatic).
  int chunks_for(bool cuda) const { return exchange_chunks > 0 ? exchange_chunks : rule::exchange_chunks(cuda); }
  /// The FFT transposes' chunk count for pieces of `pair_bytes` per pair of ranks (resolves 0:
  /// TESSERA_EXCHANGE_CHUNKS if set, else on GPUs 8 where chunks of 64 MiB or more remain, 4
  /// below; 1 on the host).
  int fft_chunks_for(bool cuda, std::uint64_t pair_bytes = 0) const {
    if (fft_chunks > 0) return fft_chunks;
    if (exchange_chunks > 0) return exchange_chunks;
    return rule::fft_chunks(cuda, pair_bytes);
  }
};

/// The distributed layer's settings: installed by the Runtime, else read on first use.
const Settings& settings();
/// Replaces them (benchmarks and tests try values this way).
void set_settings(const Settings& s);

}  // namespace tessera::distributed
