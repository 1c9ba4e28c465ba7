// The one place that reads the environment (a test greps the sources for others).
#include <algorithm>
#include "tessera/local/settings.hpp"

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <iterator>
#include <sstream>
#include <string_view>

#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
namespace {
using Lookup = std::function<std::optional<std::string>(std::string_view)>;

[[noreturn]] void bad(std::string_view name, const std::string& value, const char* accepted) {
  throw InvalidArgument("invalid setting " + std::string(name) + "='" + value + "': expected " + accepted);
}

bool parse_bool(const Lookup& get, std::string_view name, bool fallback) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  if (*v == "1" || *v == "true" || *v == "on" || *v == "yes") return true;
  if (*v == "0" || *v == "false" || *v == "off" || *v == "no") return false;
  bad(name, *v, "0, 1, true, false, on, off, yes or no");
}

template <class I>
I parse_int(const Lookup& get, std::string_view name, I fallback, I least, const char* accepted) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  I out{};
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size() || out < least) bad(name, *v, accepted);
  return out;
}

double parse_seconds(const Lookup& get, std::string_view name, double fallback) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (end != v->c_str() + v->size() || !(d > 0) || d > 1e9) bad(name, *v, "a number of seconds > 0");
  return d;
}

int rank_from(const Lookup& get) {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (auto v = get(var); v && !v->empty()) {
      int r = -1;
      auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), r);
      if (ec == std::errc() && p == v->data() + v->size() && r >= 0) return r;
    }
  }
  return -1;
}

// Settings::FftAxisKernel's values in order.
constexpr std::string_view kAxisKernelNames[] = {"off", "scaled", "all"};
constexpr std::string_view kJitNames[] = {"auto", "on", "off"};

std::string default_kernel_cache_dir(const std::function<std::optional<std::string>(std::string_view)>& get) {
  if (auto x = get("XDG_CACHE_HOME"); x && !x->empty()) return *x + "/tessera/kernels";
  if (auto h = get("HOME"); h && !h->empty()) return *h + "/.cache/tessera/kernels";
  return "";
}

std::mutex& mu() { static std::mutex m; return m; }
// Every Settings ever installed stays alive: settings() hands out references.
std::deque<Settings>& installed() { static auto* d = new std::deque<Settings>(); return *d; }
std::atomic<const Settings*> current{nullptr};
}  // namespace

namespace detail {
std::optional<std::string> environment_value(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}
int launcher_rank() noexcept {
  try {
    return rank_from(environment_value);
  } catch (...) {
    return -1;
  }
}
}  // namespace detail

Settings Settings::parse(const Lookup& get) {
  Settings s;
  if (auto d = get("TESSERA_DEVICE"); d && !d->empty()) {
    if (*d != "cuda") {
      try {
        (void)Device::parse(*d);
      } catch (const InvalidArgument&) {
        bad("TESSERA_DEVICE", *d, "host, cpu, cuda or cuda:N");
      }
    }
    s.device = *d;
  }
  s.verbose = parse_bool(get, "TESSERA_VERBOSE", s.verbose);
  s.nccl = parse_bool(get, "TESSERA_NCCL", s.nccl);
  s.comm_timeout = parse_seconds(get, "TESSERA_COMM_TIMEOUT", s.comm_timeout);
  s.check = parse_bool(get, "TESSERA_CHECK", s.check);
  s.pool_release_threshold = parse_int<std::uint64_t>(get, "TESSERA_POOL_RELEASE_THRESHOLD", s.pool_release_threshold,
                                                      0, "a byte count >= 0");
  s.exchange_chunks = parse_int(get, "TESSERA_EXCHANGE_CHUNKS", s.exchange_chunks, 0, "an integer >= 0 (0: automatic)");
  s.exchange_chunk_mib = parse_int(get, "TESSERA_EXCHANGE_CHUNK_MIB", s.exchange_chunk_mib, 0, "an integer >= 0");
  s.exchange_taper = parse_bool(get, "TESSERA_EXCHANGE_TAPER", s.exchange_taper);
  s.fft_chunks = parse_int(get, "TESSERA_FFT_CHUNKS", s.fft_chunks, 0, "an integer >= 0 (0: the exchange's)");
  s.copy_blocks_per_sm = parse_int(get, "TESSERA_COPY_BLOCKS_PER_SM", s.copy_blocks_per_sm, 1, "an integer >= 1");
  s.reduce_blocks_per_sm =
      parse_int(get, "TESSERA_REDUCE_BLOCKS_PER_SM", s.reduce_blocks_per_sm, 1, "an integer >= 1");
  s.copy_engine = parse_bool(get, "TESSERA_COPY_ENGINE", s.copy_engine);
  s.fft_callbacks = parse_bool(get, "TESSERA_FFT_CALLBACKS", s.fft_callbacks);
  s.fft_patient_jit = parse_bool(get, "TESSERA_FFT_PATIENT_JIT", s.fft_patient_jit);
  if (auto v = get("TESSERA_FFT_AXIS_KERNEL"); v && !v->empty()) {
    const auto* const end = std::end(kAxisKernelNames);
    const auto* const name = std::find(std::begin(kAxisKernelNames), end, std::string_view(*v));
    if (name == end) bad("TESSERA_FFT_AXIS_KERNEL", *v, "off, scaled or all");
    s.fft_axis_kernel = static_cast<Settings::FftAxisKernel>(name - std::begin(kAxisKernelNames));
  }
  if (auto v = get("TESSERA_JIT"); v && !v->empty()) {
    const auto* const end = std::end(kJitNames);
    const auto* const name = std::find(std::begin(kJitNames), end, std::string_view(*v));
    if (name == end) bad("TESSERA_JIT", *v, "auto, on or off");
    s.jit = static_cast<Settings::Jit>(name - std::begin(kJitNames));
  }
  if (auto v = get("TESSERA_KERNEL_CACHE_DIR")) s.kernel_cache_dir = *v;
  else s.kernel_cache_dir = default_kernel_cache_dir(get);
  if (auto v = get("TESSERA_FFT_AXIS_TILE"); v && !v->empty()) {
    s.fft_axis_tile = parse_int(get, "TESSERA_FFT_AXIS_TILE", 0, 0, "64 or 128");
    if (s.fft_axis_tile != 64 && s.fft_axis_tile != 128) bad("TESSERA_FFT_AXIS_TILE", *v, "64 or 128");
  }
  if (auto v = get("TESSERA_MPIIO_COLLECTIVE"); v && !v->empty())
    s.mpiio_collective = parse_bool(get, "TESSERA_MPIIO_COLLECTIVE", false);
  if (auto v = get("TESSERA_TRANSPORT"); v && !v->empty()) {
    const auto t = transport_from_name(*v);
    if (!t) bad("TESSERA_TRANSPORT", *v, "auto, nccl, nccl-window, ipc or mpi");
    s.transport = *t;
  }
  s.io_threads = parse_int(get, "TESSERA_IO_THREADS", s.io_threads, 0, "an integer >= 0 (0: from the hardware)");
  s.launcher_rank = rank_from(get);
  return s;
}

std::optional<Transport> transport_from_name(std::string_view name) {
  for (Transport t : {Transport::automatic, Transport::nccl, Transport::nccl_window, Transport::ipc, Transport::mpi})
    if (transport_name(t) == name) return t;
  return std::nullopt;
}

std::string transport_name(Transport t) {
  switch (t) {
    case Transport::automatic: return "auto";
    case Transport::nccl: return "nccl";
    case Transport::nccl_window: return "nccl-window";
    case Transport::ipc: return "ipc";
    case Transport::mpi: return "mpi";
  }
  return "?";
}

Settings Settings::from_environment() { return parse(detail::environment_value); }

std::string Settings::str() const {
  std::ostringstream o;
  auto b = [](bool v) { return v ? "1" : "0"; };
  o << "TESSERA_DEVICE=" << device << "    (empty: one GPU per node-local rank, else host)\n"
    << "TESSERA_VERBOSE=" << b(verbose) << "\n"
    << "TESSERA_NCCL=" << b(nccl) << "    (0: device buffers through MPI)\n"
    << "TESSERA_COMM_TIMEOUT=" << comm_timeout << "    (seconds)\n"
    << "TESSERA_CHECK=" << b(check) << "    (consistency mode)\n"
    << "TESSERA_POOL_RELEASE_THRESHOLD=" << pool_release_threshold << "    (bytes)\n"
    << "TESSERA_EXCHANGE_CHUNKS=" << exchange_chunks << "    (0: 8 on GPUs, 1 on host)\n"
    << "TESSERA_EXCHANGE_CHUNK_MIB=" << exchange_chunk_mib << "\n"
    << "TESSERA_EXCHANGE_TAPER=" << b(exchange_taper) << "    (0: equal chunks; 1: half-size first and last)\n"
    << "TESSERA_FFT_CHUNKS=" << fft_chunks << "    (0: the exchange's if set, else 4 or 8 on GPUs by size)\n"
    << "TESSERA_COPY_BLOCKS_PER_SM=" << copy_blocks_per_sm << "\n"
    << "TESSERA_REDUCE_BLOCKS_PER_SM=" << reduce_blocks_per_sm << "\n"
    << "TESSERA_COPY_ENGINE=" << b(copy_engine) << "\n"
    << "TESSERA_FFT_CALLBACKS=" << b(fft_callbacks) << "\n"
    << "TESSERA_FFT_PATIENT_JIT=" << b(fft_patient_jit) << "\n"
    << "TESSERA_FFT_AXIS_KERNEL=" << kAxisKernelNames[static_cast<int>(fft_axis_kernel)]
    << "    (GPU plans on Tessera's outermost-axis pass: packed 3-D + 2-D cuFFT, 1-D down columns)\n"
    << "TESSERA_FFT_AXIS_TILE=" << fft_axis_tile << "    (bytes of a row per block of that pass)\n"
    << "TESSERA_MPIIO_COLLECTIVE=" << (mpiio_collective ? b(*mpiio_collective) : "") << "    (empty: by the MPI)\n"
    << "TESSERA_TRANSPORT=" << transport_name(transport) << "    (auto, nccl, nccl-window, ipc, mpi)\n"
    << "TESSERA_JIT=" << kJitNames[static_cast<int>(jit)] << "    (auto: NVRTC for plain C++ code, on: everywhere, off)\n"
    << "TESSERA_KERNEL_CACHE_DIR=" << kernel_cache_dir << "    (empty: kernels in memory only)\n"
    << "TESSERA_IO_THREADS=" << io_threads << "    (0: the cores the rank is bound to, else hardware threads / ranks on the node)\n";
  return o.str();
}

const Settings& settings() {
  if (const Settings* s = current.load(std::memory_order_acquire)) return *s;
  Settings fresh = Settings::from_environment();  // may throw; nothing is installed then
  std::lock_guard<std::mutex> lock(mu());
  if (const Settings* s = current.load(std::memory_order_acquire)) return *s;
  installed().push_back(std::move(fresh));
  current.store(&installed().back(), std::memory_order_release);
  return installed().back();
}

void set_settings(const Settings& s) {
  std::lock_guard<std::mutex> lock(mu());
  installed().push_back(s);
  current.store(&installed().back(), std::memory_order_release);
}

}  // namespace tessera
