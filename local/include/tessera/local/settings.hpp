// Settings: every TESSERA_* environment variable, read once into one value, validated and
// printable. The Runtime (or the first use without one) reads the environment; Options structs of
// the layers above take their defaults from settings(). No other file of the library reads the
// environment. The README's settings table documents each field.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

/// How the exchange engine moves device blocks between ranks (TESSERA_TRANSPORT, or per call
/// ExchangeOptions::transport; see tessera/distributed/exchange.hpp). Host buffers always use MPI.
enum class Transport { automatic, nccl, nccl_window, ipc, mpi };
/// "auto", "nccl", "nccl-window", "ipc" or "mpi".
std::string transport_name(Transport t);
/// The transport of that name; nothing for an unknown one.
std::optional<Transport> transport_from_name(std::string_view name);

struct Settings {
  // TESSERA_DEVICE: "" (one GPU per node-local rank, else host), host, cpu, cuda or cuda:N.
  std::string device;
  // TESSERA_VERBOSE=1: rank 0 prints these settings when a Runtime starts.
  bool verbose = false;
  // TESSERA_NCCL=0: device buffers go through MPI instead of NCCL.
  bool nccl = true;
  // TESSERA_COMM_TIMEOUT: seconds before a collective is declared hung (> 0).
  double comm_timeout = 300.0;
  // TESSERA_CHECK=1: consistency mode (every distributed call is checked across ranks first).
  bool check = false;
  // TESSERA_POOL_RELEASE_THRESHOLD: bytes the CUDA memory pool keeps cached (default: all).
  std::uint64_t pool_release_threshold = UINT64_MAX;
  // TESSERA_EXCHANGE_CHUNKS: most chunks a piece of an exchange is cut into (redistribute, halos,
  // FFT transposes); 0 = automatic: on GPUs 8 (redistribute's best on 2 and 4 H200s), for the
  // FFT's transposes fft_chunks_for's rule; 1 on the host.
  int exchange_chunks = 0;
  // TESSERA_EXCHANGE_CHUNK_MIB: least size of a chunk in MiB (0 cuts every piece into the most).
  int exchange_chunk_mib = 16;
  // TESSERA_EXCHANGE_TAPER=1 (default): of 3 or more chunks, the first and last are half the size
  // of the others (the pipeline's fill and drain are shorter: the first pack or FFT chunk and the
  // last unpack, which nothing overlaps); 0: equal chunks.
  bool exchange_taper = true;
  // TESSERA_FFT_CHUNKS: pipeline depth of the FFT's transposes; 0 = TESSERA_EXCHANGE_CHUNKS if
  // set, else fft_chunks_for's rule.
  int fft_chunks = 0;
  // TESSERA_COPY_BLOCKS_PER_SM: blocks per SM of the row-copy (packing) kernel (>= 1).
  int copy_blocks_per_sm = 2;
  // TESSERA_REDUCE_BLOCKS_PER_SM: blocks (of 256 threads) per SM of the whole-array reduction (>= 1).
  int reduce_blocks_per_sm = 4;
  // TESSERA_COPY_ENGINE=1: packing by cudaMemcpy2DAsync (copy engines) instead of a kernel.
  bool copy_engine = false;
  // TESSERA_FFT_CALLBACKS=0: cuFFT plans apply FFT scales and spectral factors in a pass of their
  // own instead of in LTO store callbacks (for drivers without JIT linking, and for comparison).
  bool fft_callbacks = true;
  // TESSERA_FFT_PATIENT_JIT=1: cuFFT plans with a store callback are planned with cuFFT's patient
  // JIT (NVFFT_PLAN_PROPERTY_INT64_PATIENT_JIT): slower planning, kernels compiled for the size.
  bool fft_patient_jit = false;
  // TESSERA_FFT_AXIS_KERNEL: which GPU plans of outermost length 256, 512 or 1024 run on Tessera's
  // outermost-axis pass: packed 3-D plans (the pass plus a batched 2-D cuFFT) and 1-D c2c plans
  // down adjacent columns (the pass alone; the slab FFT's axis-0 stage). "all" (faster than cuFFT
  // on an H200), "scaled" (only those that carry a fixed scale, e.g. normalized backward
  // transforms: the scale rides on the pass's stores instead of a cuFFT callback), or "off".
  enum class FftAxisKernel : int { off, scaled, all };
  FftAxisKernel fft_axis_kernel = FftAxisKernel::all;
  // TESSERA_FFT_AXIS_TILE: bytes of a row a block of that pass takes, 64 or 128 (faster).
  int fft_axis_tile = 128;
  // TESSERA_MPIIO_COLLECTIVE=1 / =0: collective / independent MPI-IO calls for .npy; unset: chosen
  // by the MPI (independent under Open MPI 4, see the README).
  std::optional<bool> mpiio_collective;
  // TESSERA_TRANSPORT: auto (the group's: NCCL, or MPI where ranks share a GPU), nccl,
  // nccl-window, ipc (CUDA IPC + copy engines within a node) or mpi.
  Transport transport = Transport::automatic;
  // TESSERA_IO_THREADS: threads per rank of the Zarr chunk pipeline; 0 = the node's hardware
  // threads shared among its ranks.
  int io_threads = 0;
  // TESSERA_JIT: fused expressions on GPUs through the runtime kernel compiler (NVRTC). auto: in
  // plain C++ translation units (nvcc's compile-time executor where nvcc compiled the code); on:
  // everywhere (for comparison); off: plain C++ code on GPU arrays throws BackendUnavailable.
  enum class Jit : int { automatic, on, off };
  Jit jit = Jit::automatic;
  // TESSERA_KERNEL_CACHE_DIR: the runtime compiler's disk cache; default $XDG_CACHE_HOME/tessera/
  // kernels, else $HOME/.cache/tessera/kernels; empty (TESSERA_KERNEL_CACHE_DIR=) keeps kernels in memory.
  std::string kernel_cache_dir;
  // The launcher's rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID), -1 if none:
  // error messages use it before MPI is up.
  int launcher_rank = -1;

  /// Reads and validates every variable; throws InvalidArgument naming the variable, the value
  /// and what is accepted.
  static Settings from_environment();
  /// The same from any lookup (tests): `lookup(name)` returns the variable's value or nothing.
  static Settings parse(const std::function<std::optional<std::string>(std::string_view)>& lookup);
  /// The exchange's chunk count on a device of this kind (resolves 0 = automatic).
  int chunks_for(bool cuda) const { return exchange_chunks > 0 ? exchange_chunks : cuda ? 8 : 1; }
  /// The FFT transposes' chunk count for pieces of `pair_bytes` per pair of ranks (resolves 0:
  /// TESSERA_EXCHANGE_CHUNKS if set, else on GPUs 8 where chunks of 64 MiB or more remain, 4
  /// below: the best of 4 and 8 on 2 and 4 H200s at 512^3 and 1024^3 c64; 1 on the host).
  int fft_chunks_for(bool cuda, std::uint64_t pair_bytes = 0) const {
    if (fft_chunks > 0) return fft_chunks;
    if (exchange_chunks > 0) return exchange_chunks;
    return !cuda ? 1 : pair_bytes >= (std::uint64_t{8} * 64 << 20) ? 8 : 4;
  }
  /// One "NAME=value" line per variable, with its meaning.
  std::string str() const;
};

/// The process's settings: those installed by the current Runtime, else read from the environment
/// on first use.
const Settings& settings();
/// Replaces the process's settings (a Runtime does this at start; tests do it to try values).
void set_settings(const Settings& s);

namespace detail {
// The value of an environment variable, for code that must save and restore one (tests).
std::optional<std::string> environment_value(std::string_view name);
// The launcher's rank without validating anything else (error messages use it; never throws).
int launcher_rank() noexcept;
}  // namespace detail

}  // namespace tessera
