// The distributed layer's settings (distributed/settings.hpp), registered with config.hpp's registry.
#include "tessera/distributed/settings.hpp"

#include <sstream>

#include "tessera/local/settings.hpp"

namespace tessera::distributed {
namespace {
[[maybe_unused]] const bool registered = (config::layer<Settings>("distributed"), true);
}  // namespace


std::vector<config::Variable> Settings::variables() {
  return {
      {"TESSERA_CHECK", "0", "0 or 1", "1: consistency mode (every distributed call checked across ranks first)"},
      {"TESSERA_EXCHANGE_CHUNKS", "0", "an integer >= 0", "most chunks per piece of an exchange; 0: 8 on GPUs, 1 on host"},
      {"TESSERA_EXCHANGE_CHUNK_MIB", "16", "an integer >= 0", "least chunk size in MiB (0: always the most chunks)"},
      {"TESSERA_EXCHANGE_TAPER", "1", "0 or 1", "1: the first and last of 3 or more chunks half the others' size; 0: equal chunks"},
      {"TESSERA_FFT_CHUNKS", "0", "an integer >= 0",
       "pipeline depth of the FFT transposes; 0: TESSERA_EXCHANGE_CHUNKS if set, else on GPUs 8 from 512 MiB per pair of "
       "ranks, 4 below"},
      {"TESSERA_COPY_BLOCKS_PER_SM", "2", "an integer >= 1", "blocks per SM of the packing kernel (room for NCCL's kernels)"},
      {"TESSERA_COPY_ENGINE", "0", "0 or 1", "1: pack with copy engines (cudaMemcpy2DAsync) instead of a kernel"},
      {"TESSERA_TRANSPORT", "auto", "auto, nccl, nccl-window, ipc or mpi",
       "how the exchange moves device blocks (see Exchange transports in runtime-and-collectives.md)"},
      {"TESSERA_TUNE", "wisdom", "off, wisdom or measure",
       "how transports, chunks, FFT decompositions and SUMMA grids are chosen: the fixed rule, the wisdom file "
       "(else the rule), or measured at plan time and remembered (see tuning.md)"},
      {"TESSERA_TUNE_BUDGET_MS", "2000", "an integer >= 0", "most milliseconds one measured choice spends timing candidates"},
      {"TESSERA_WISDOM", "TESSERA_KERNEL_CACHE_DIR/wisdom.json", "a file path; empty: none",
       "the wisdom file (measured choices, keyed by machine, problem and versions); empty: remembered in memory only"},
  };
}

Settings Settings::parse(const config::Lookup& get) {
  Settings s;
  s.check = config::parse_bool(get, "TESSERA_CHECK", s.check);
  s.exchange_chunks = static_cast<int>(
      config::parse_int(get, "TESSERA_EXCHANGE_CHUNKS", s.exchange_chunks, 0, "an integer >= 0 (0: automatic)"));
  s.exchange_chunk_mib =
      static_cast<int>(config::parse_int(get, "TESSERA_EXCHANGE_CHUNK_MIB", s.exchange_chunk_mib, 0, "an integer >= 0"));
  s.exchange_taper = config::parse_bool(get, "TESSERA_EXCHANGE_TAPER", s.exchange_taper);
  s.fft_chunks =
      static_cast<int>(config::parse_int(get, "TESSERA_FFT_CHUNKS", s.fft_chunks, 0, "an integer >= 0 (0: the exchange's)"));
  s.copy_blocks_per_sm =
      static_cast<int>(config::parse_int(get, "TESSERA_COPY_BLOCKS_PER_SM", s.copy_blocks_per_sm, 1, "an integer >= 1"));
  s.copy_engine = config::parse_bool(get, "TESSERA_COPY_ENGINE", s.copy_engine);
  s.transport = static_cast<Transport>(
      config::parse_choice(get, "TESSERA_TRANSPORT", comm::transport_names, static_cast<int>(s.transport)));
  s.tune = static_cast<Tune>(config::parse_choice(get, "TESSERA_TUNE", tune_names, static_cast<int>(s.tune)));
  s.tune_budget_ms =
      static_cast<int>(config::parse_int(get, "TESSERA_TUNE_BUDGET_MS", s.tune_budget_ms, 0, "an integer >= 0"));
  if (auto v = get("TESSERA_WISDOM")) s.wisdom = *v;
  return s;
}

std::string Settings::wisdom_path() const {
  if (wisdom) return *wisdom;
  const std::string& dir = tessera::settings().kernel_cache_dir;
  return dir.empty() ? std::string() : dir + "/wisdom.json";
}

std::string Settings::str() const {
  std::ostringstream o;
  auto b = [](bool v) { return v ? "1" : "0"; };
  o << "TESSERA_CHECK=" << b(check) << "    (consistency mode)\n"
    << "TESSERA_EXCHANGE_CHUNKS=" << exchange_chunks << "    (0: 8 on GPUs, 1 on host)\n"
    << "TESSERA_EXCHANGE_CHUNK_MIB=" << exchange_chunk_mib << "\n"
    << "TESSERA_EXCHANGE_TAPER=" << b(exchange_taper) << "    (0: equal chunks; 1: half-size first and last)\n"
    << "TESSERA_FFT_CHUNKS=" << fft_chunks << "    (0: the exchange's if set, else 4 or 8 on GPUs by size)\n"
    << "TESSERA_COPY_BLOCKS_PER_SM=" << copy_blocks_per_sm << "\n"
    << "TESSERA_COPY_ENGINE=" << b(copy_engine) << "\n"
    << "TESSERA_TRANSPORT=" << transport_name(transport) << "    (auto, nccl, nccl-window, ipc, mpi)\n"
    << "TESSERA_TUNE=" << tune_name(tune) << "    (off, wisdom, measure)\n"
    << "TESSERA_TUNE_BUDGET_MS=" << tune_budget_ms << "\n"
    << "TESSERA_WISDOM=" << wisdom_path() << (wisdom ? "" : "    (in the kernel cache directory)") << "\n";
  return o.str();
}

const Settings& settings() { return config::layer<Settings>("distributed").get(); }
void set_settings(const Settings& s) { config::layer<Settings>("distributed").set(s); }

}  // namespace tessera::distributed
