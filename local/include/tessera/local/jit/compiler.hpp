// The runtime kernel compiler: IR (jit/ir.hpp) -> CUDA source -> NVRTC -> cubin -> a kernel
// loaded on the device (the CUDA runtime's library API, no driver library linked), cached in
// memory per Context and device (keyed by the IR's structure and types, not sizes or pointers)
// and on disk (one file per kernel under Settings::kernel_cache_dir, keyed by a hash of the
// generated source, the options, the architecture, the NVRTC and Tessera versions).
//
// The disk cache writes each file to a temporary name and renames it, so that ranks compiling the
// same kernel at once never see a partial file; a file that is truncated, corrupt or written for
// another key is recompiled and replaced, never trusted; a directory that cannot be made or
// written falls back to memory with one warning.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/jit/ir.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::local::jit {

/// Generated or user source that NVRTC rejected: names the kernel, carries NVRTC's log and the
/// offending generated line.
class CompileError : public Error { using Error::Error; };

/// True where this build has NVRTC (a CUDA build).
bool nvrtc_available() noexcept;
/// "13.0" (NVRTC's version), or "none".
std::string nvrtc_version();
/// The NVRTC options used for architecture sm_`arch`.
std::vector<std::string> nvrtc_options(int arch);
/// Compiles `source` for sm_`arch` into a cubin (no GPU needed). CompileError on a rejected
/// source (kernel `name`, NVRTC's log, the line it points at); BackendUnavailable without NVRTC.
std::vector<char> compile_cubin(const std::string& source, const std::string& name, int arch);

/// The disk cache of compiled kernels (see above). An empty directory disables it.
class DiskCache {
 public:
  explicit DiskCache(std::string dir);
  /// The cubin stored under `key` (the full text the hash was made of), if a valid file holds it.
  std::optional<std::vector<char>> load(const std::string& key) const;
  /// Stores `image` under `key` (atomically); false where the directory is unusable (warned once).
  bool store(const std::string& key, const std::vector<char>& image) const;
  /// The file that holds (or would hold) `key`.
  std::string path_of(const std::string& key) const;
  /// The files of the cache (kernel_*.cubin); removes them (returns how many) for clear().
  std::vector<std::string> list() const;
  std::size_t clear() const;
  const std::string& dir() const noexcept { return dir_; }

 private:
  std::string dir_;
};

/// The text a kernel's disk entry is keyed by: source, options, architecture, NVRTC and Tessera
/// versions. Its 64-bit FNV-1a hash names the file.
std::string disk_key(const std::string& source, int arch);
std::uint64_t fnv1a(const void* data, std::size_t n, std::uint64_t h = 1469598103934665603ull);

/// Where a kernel's cubin came from on its first use in this context (tests and TESSERA_VERBOSE).
enum class Origin { memory, disk, compiled };

/// A cubin of `source` (kernel `name`) on sm_`arch` from the disk cache, else compiled by
/// `compile` (default: compile_cubin) and stored. `origin`, if given, says which.
std::vector<char> cubin_of_source(const std::string& source, const std::string& name, int arch, const DiskCache& cache,
                                  Origin* origin = nullptr,
                                  const std::function<std::vector<char>(const std::string&, const std::string&, int)>&
                                      compile = {});
/// The same for kernel `k`'s generated source.
std::vector<char> cubin_for(const Kernel& k, const std::string& name, int arch, const DiskCache& cache,
                            Origin* origin = nullptr,
                            const std::function<std::vector<char>(const std::string&, const std::string&, int)>&
                                compile = {});

/// The arguments of one launch: the output, the element count, shape and strides, the operands
/// (pointer and strides in elements, 0 where an operand broadcasts) and the scalars' bytes.
struct Operand {
  const void* ptr = nullptr;
  std::array<std::int64_t, 6> strides{};
};
struct Args {
  void* out = nullptr;
  std::int64_t n = 0;
  std::array<std::int64_t, 6> shape{}, out_strides{};
  std::vector<Operand> operands;
  std::vector<std::array<unsigned char, 16>> scalars;  // each in its node's element type
};

/// Evaluates `k` with `args` on `device`'s stream `s`: the kernel from the context's memory cache,
/// else the disk cache, else NVRTC. BackendUnavailable without CUDA. Returns where it came from.
Origin launch(const Kernel& k, const Args& args, Device device, const Stream& s);
/// Launches the extern "C" kernel `name` of `source` (a grid-stride loop over n elements; cached
/// as generated kernels are) on `s`: its first parameter is n, `pack` appends pointers to the
/// others' values (and may keep storage for them in `keep`).
Origin launch_source(const std::string& source, const std::string& name, Device device, const Stream& s, std::int64_t n,
                     const std::function<void(std::vector<void*>&, std::vector<std::vector<long long>>&)>& pack);
/// The same with an explicit grid: `blocks` blocks of `threads` (pack appends every parameter).
Origin launch_source_grid(const std::string& source, const std::string& name, Device device, const Stream& s,
                          std::int64_t blocks, int threads,
                          const std::function<void(std::vector<void*>&, std::vector<std::vector<long long>>&)>& pack);
/// The device's multiprocessor count (for grids).
int multiprocessor_count(Device device);
/// The same with `key` == k.key() computed by the caller (a front end that knows it once per
/// expression type saves building it on every launch).
Origin launch(const Kernel& k, const std::string& key, const Args& args, Device device, const Stream& s);

/// A kernel made ready for many launches over one geometry (a front end that runs the same
/// expression again and again with new arrays, as the Python package does): compiled or found in
/// the caches once; each launch() then sets the new pointers and scalars and launches, with no
/// lookup. `geometry` gives the element count, shape and strides (its pointers are ignored).
/// It keeps its loaded kernel. Not thread-safe: one per thread.
class Prepared {
 public:
  Prepared(const Kernel& k, const Args& geometry, Device device);
  ~Prepared();
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  /// Launches on `s`: `operands` are the operand pointers in slot order, `scalars` the scalars'
  /// bytes in the node types (as Args holds them).
  void launch(void* out, const void* const* operands, std::size_t operand_count,
              const std::array<unsigned char, 16>* scalars, std::size_t scalar_count, const Stream& s);
  Device device() const noexcept { return device_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  Device device_;
};

}  // namespace tessera::local::jit
