// The local layer's settings (devices, memory, local kernels, FFT plans, the runtime kernel
// compiler): read once into one value, validated and printable. Each layer above owns its own
// (comm/settings.hpp, distributed/settings.hpp, io/settings.hpp) through the registry of
// config.hpp; docs/settings.md documents every variable.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/local/config.hpp"

namespace tessera {

struct Settings {
  // TESSERA_DEVICE: "" (one GPU per node-local rank, else host), host, cpu, cuda or cuda:N.
  std::string device;
  // TESSERA_VERBOSE=1: rank 0 prints the settings when a Runtime starts.
  bool verbose = false;
  // TESSERA_POOL_RELEASE_THRESHOLD: bytes the CUDA memory pool keeps cached (default: all).
  std::uint64_t pool_release_threshold = UINT64_MAX;
  // TESSERA_REDUCE_BLOCKS_PER_SM: blocks (of 256 threads) per SM of the whole-array reduction (>= 1).
  int reduce_blocks_per_sm = 4;
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
  // TESSERA_FFT_PLANE_KERNEL: which GPU plans over square planes of 256, 512 or 1024 (packed 2-D
  // plans, the 2-D pass of split 3-D plans) run on Tessera's one-kernel 2-D FFT, which keeps each
  // plane in L2 between its rows and its columns (one pass over HBM where a batched 2-D cuFFT makes
  // two), instead of the 2-D cuFFT: "auto" (c2c in single precision, planes of 256, and of 512
  // where their 32-point FFTs go in halves: where it was faster on an H200,
  // docs/performance/fft.md), "on" (every plane it supports, r2c and c2r ones too), "off". 1 and 0
  // read as on and off.
  enum class FftPlaneKernel : int { off, automatic, on };
  FftPlaneKernel fft_plane_kernel = FftPlaneKernel::automatic;
  // TESSERA_FFT_HALVES: the axis pass and the plane kernel take their 32-point FFTs in two halves
  // through shared memory where a block's shared memory is 64 KiB or less (512-long axes): half the
  // registers a thread, so that two blocks share an SM (faster on an H200 in every measured plan);
  // 0 keeps all 32 values of a thread's FFT in registers, one block per SM.
  bool fft_halves = true;
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

  /// Reads and validates every variable of this layer; throws InvalidArgument naming the
  /// variable, the value and what is accepted.
  static Settings from_environment();
  /// The same from any lookup (tests): `lookup(name)` returns the variable's value or nothing.
  static Settings parse(const config::Lookup& lookup);
  /// This layer's variables, for the docs' table.
  static std::vector<config::Variable> variables();
  /// One "NAME=value" line per variable, with its meaning.
  std::string str() const;
};

/// The local layer's settings: those installed by the current Runtime, else read from the
/// environment on first use.
const Settings& settings();
/// Replaces them (a Runtime does this at start; tests do it to try values).
void set_settings(const Settings& s);

namespace detail {
// The launcher's rank without validating anything else (error messages use it; never throws).
int launcher_rank() noexcept;
}  // namespace detail

}  // namespace tessera
