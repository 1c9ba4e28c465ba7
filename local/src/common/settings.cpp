// The local layer's settings (settings.hpp), registered with the registry of config.hpp.
#include "tessera/local/settings.hpp"

#include <charconv>
#include <sstream>

#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"

namespace tessera {
namespace {
using config::Lookup;

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

// Settings::FftAxisKernel's and Settings::Jit's values in order.
constexpr std::string_view kAxisKernelNames[] = {"off", "scaled", "all"};
constexpr std::string_view kJitNames[] = {"auto", "on", "off"};
constexpr std::string_view kPlaneKernelNames[] = {"off", "auto", "on"};

// TESSERA_FFT_PLANE_KERNEL: off, auto or on; 0 and 1 (it was a switch) read as off and on.
Settings::FftPlaneKernel parse_plane_kernel(const Lookup& get, Settings::FftPlaneKernel fallback) {
  using Mode = Settings::FftPlaneKernel;
  const auto v = get("TESSERA_FFT_PLANE_KERNEL");
  if (v && *v == "0") return Mode::off;
  if (v && *v == "1") return Mode::on;
  return static_cast<Mode>(
      config::parse_choice(get, "TESSERA_FFT_PLANE_KERNEL", kPlaneKernelNames, static_cast<int>(fallback)));
}

std::string default_kernel_cache_dir(const Lookup& get) {
  if (auto x = get("XDG_CACHE_HOME"); x && !x->empty()) return *x + "/tessera/kernels";
  if (auto h = get("HOME"); h && !h->empty()) return *h + "/.cache/tessera/kernels";
  return "";
}


[[maybe_unused]] const bool registered = (config::layer<Settings>("local"), true);
}  // namespace

namespace detail {
int launcher_rank() noexcept {
  try {
    return rank_from(config::environment_value);
  } catch (...) {
    return -1;
  }
}
}  // namespace detail

std::vector<config::Variable> Settings::variables() {
  return {
      {"TESSERA_DEVICE", "", "host, cpu, cuda or cuda:N",
       "the rank's device; empty: cuda:(node-local rank % GPUs), else host"},
      {"TESSERA_VERBOSE", "0", "0 or 1", "1: rank 0 prints the settings at start"},
      {"TESSERA_POOL_RELEASE_THRESHOLD", "all", "a byte count", "bytes the CUDA memory pool keeps cached after frees"},
      {"TESSERA_REDUCE_BLOCKS_PER_SM", "4", "an integer >= 1", "blocks (256 threads) per SM of the whole-array GPU reduction"},
      {"TESSERA_FFT_CALLBACKS", "1", "0 or 1",
       "0: cuFFT plans apply FFT scales and spectral factors in a pass of their own, not in LTO store callbacks"},
      {"TESSERA_FFT_PATIENT_JIT", "0", "0 or 1",
       "1: cuFFT plans with a store callback use cuFFT's patient JIT (longer planning, kernels compiled for the size)"},
      {"TESSERA_FFT_AXIS_KERNEL", "all", "all, scaled or off",
       "which GPU plans of outermost length 256, 512, 1024 run on Tessera's axis pass (packed 3-D: the pass + a 2-D "
       "cuFFT; 1-D down adjacent columns: the pass alone): all, those with a fixed scale, or none"},
      {"TESSERA_FFT_AXIS_TILE", "128", "64 or 128", "bytes of a row each block of that pass takes"},
      {"TESSERA_FFT_PLANE_KERNEL", "auto", "auto, on or off (1, 0)",
       "which GPU plans over square planes of 256, 512 or 1024 (packed 2-D plans, the 2-D pass of split 3-D plans) "
       "run on Tessera's one-kernel 2-D FFT (each plane kept in L2 between its rows and columns: one HBM pass) "
       "instead of a batched 2-D cuFFT: auto (c2c in single precision, planes of 256, and of 512 with "
       "TESSERA_FFT_HALVES: where it is faster on an H200), on (all, r2c and c2r too), off"},
      {"TESSERA_FFT_HALVES", "1", "0 or 1",
       "1: the FFT axis pass and plane kernel take their 32-point transforms in two halves through shared memory "
       "where a block's shared memory is 64 KiB or less (axes of 512): half the registers a thread, two blocks per SM; "
       "0: all in registers, one block per SM"},
      {"TESSERA_JIT", "auto", "auto, on or off",
       "fused expressions on GPU arrays through the runtime kernel compiler (NVRTC): auto in code not compiled by nvcc "
       "(nvcc's compile-time executor elsewhere), on everywhere (for comparison), off (plain C++ code on GPU arrays "
       "throws BackendUnavailable)"},
      {"TESSERA_KERNEL_CACHE_DIR", "$XDG_CACHE_HOME/tessera/kernels, else ~/.cache/tessera/kernels", "a directory; empty: none",
       "the runtime compiler's disk cache (one file per kernel, written atomically, damaged files recompiled); empty: "
       "memory only"},
  };
}

Settings Settings::parse(const Lookup& get) {
  Settings s;
  if (auto d = get("TESSERA_DEVICE"); d && !d->empty()) {
    if (*d != "cuda") {
      try {
        (void)Device::parse(*d);
      } catch (const InvalidArgument&) {
        config::bad("TESSERA_DEVICE", *d, "host, cpu, cuda or cuda:N");
      }
    }
    s.device = *d;
  }
  s.verbose = config::parse_bool(get, "TESSERA_VERBOSE", s.verbose);
  s.pool_release_threshold =
      config::parse_count(get, "TESSERA_POOL_RELEASE_THRESHOLD", s.pool_release_threshold, "a byte count >= 0");
  s.reduce_blocks_per_sm =
      static_cast<int>(config::parse_int(get, "TESSERA_REDUCE_BLOCKS_PER_SM", s.reduce_blocks_per_sm, 1, "an integer >= 1"));
  s.fft_callbacks = config::parse_bool(get, "TESSERA_FFT_CALLBACKS", s.fft_callbacks);
  s.fft_patient_jit = config::parse_bool(get, "TESSERA_FFT_PATIENT_JIT", s.fft_patient_jit);
  s.fft_plane_kernel = parse_plane_kernel(get, s.fft_plane_kernel);
  s.fft_halves = config::parse_bool(get, "TESSERA_FFT_HALVES", s.fft_halves);
  s.fft_axis_kernel = static_cast<FftAxisKernel>(
      config::parse_choice(get, "TESSERA_FFT_AXIS_KERNEL", kAxisKernelNames, static_cast<int>(s.fft_axis_kernel)));
  s.jit = static_cast<Jit>(config::parse_choice(get, "TESSERA_JIT", kJitNames, static_cast<int>(s.jit)));
  if (auto v = get("TESSERA_KERNEL_CACHE_DIR")) s.kernel_cache_dir = *v;
  else s.kernel_cache_dir = default_kernel_cache_dir(get);
  if (auto v = get("TESSERA_FFT_AXIS_TILE"); v && !v->empty()) {
    s.fft_axis_tile = static_cast<int>(config::parse_int(get, "TESSERA_FFT_AXIS_TILE", 0, 0, "64 or 128"));
    if (s.fft_axis_tile != 64 && s.fft_axis_tile != 128) config::bad("TESSERA_FFT_AXIS_TILE", *v, "64 or 128");
  }
  s.launcher_rank = rank_from(get);
  return s;
}

Settings Settings::from_environment() { return parse(config::environment_value); }

std::string Settings::str() const {
  std::ostringstream o;
  auto b = [](bool v) { return v ? "1" : "0"; };
  o << "TESSERA_DEVICE=" << device << "    (empty: one GPU per node-local rank, else host)\n"
    << "TESSERA_VERBOSE=" << b(verbose) << "\n"
    << "TESSERA_POOL_RELEASE_THRESHOLD=" << pool_release_threshold << "    (bytes)\n"
    << "TESSERA_REDUCE_BLOCKS_PER_SM=" << reduce_blocks_per_sm << "\n"
    << "TESSERA_FFT_CALLBACKS=" << b(fft_callbacks) << "\n"
    << "TESSERA_FFT_PATIENT_JIT=" << b(fft_patient_jit) << "\n"
    << "TESSERA_FFT_AXIS_KERNEL=" << kAxisKernelNames[static_cast<int>(fft_axis_kernel)]
    << "    (GPU plans on Tessera's outermost-axis pass: packed 3-D + 2-D cuFFT, 1-D down columns)\n"
    << "TESSERA_FFT_AXIS_TILE=" << fft_axis_tile << "    (bytes of a row per block of that pass)\n"
    << "TESSERA_FFT_PLANE_KERNEL=" << kPlaneKernelNames[static_cast<int>(fft_plane_kernel)]
    << "    (square planes on Tessera's one-kernel 2-D FFT: auto, on or off)\n"
    << "TESSERA_FFT_HALVES=" << b(fft_halves) << "    (32-point FFTs of the axis pass and plane kernel in halves)\n"
    << "TESSERA_JIT=" << kJitNames[static_cast<int>(jit)] << "    (auto: NVRTC for plain C++ code, on: everywhere, off)\n"
    << "TESSERA_KERNEL_CACHE_DIR=" << kernel_cache_dir << "    (empty: kernels in memory only)\n";
  return o.str();
}

const Settings& settings() { return config::layer<Settings>("local").get(); }
void set_settings(const Settings& s) { config::layer<Settings>("local").set(s); }

}  // namespace tessera
