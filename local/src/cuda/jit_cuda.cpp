// The kernel compiler's CUDA side (jit/compiler.hpp): NVRTC to a cubin for the device's
// architecture, loaded by the CUDA runtime's library API (cudaLibraryLoadData: no libcuda link,
// so the library still loads on machines without a driver) and launched on the given stream.
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <sstream>

#include "tessera/local/context_cache.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/expr/tree.hpp"  // detail::multiprocessor_count
#include "tessera/local/jit/compiler.hpp"
#include "tessera/local/settings.hpp"

#ifndef TESSERA_CUDA_CCCL_INCLUDE
#error "TESSERA_CUDA_CCCL_INCLUDE (the toolkit's libcu++ headers) must be defined by the build"
#endif

namespace tessera::local::jit {

namespace {
#define TESSERA_CHECK_NVRTC(call, what)                                                       \
  do {                                                                                        \
    const nvrtcResult r_ = (call);                                                            \
    if (r_ != NVRTC_SUCCESS) throw CompileError(std::string("NVRTC ") + #call + " for " + (what) + ": " + nvrtcGetErrorString(r_)); \
  } while (0)

// The generated line NVRTC's log points at ("kernel.cu(12): error ..."), for the message.
std::string offending_line(const std::string& source, const std::string& log) {
  const auto p = log.find("(");
  if (p == std::string::npos) return {};
  const int line = std::atoi(log.c_str() + p + 1);
  std::istringstream in(source);
  std::string s;
  for (int i = 1; std::getline(in, s); ++i)
    if (i == line) return "line " + std::to_string(line) + ": " + s;
  return {};
}
}  // namespace

bool nvrtc_available() noexcept { return true; }

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> nvrtc_options(int arch) {
  return {"--std=c++17", "--gpu-architecture=sm_" + std::to_string(arch), "-I" TESSERA_CUDA_CCCL_INCLUDE,
          "--device-as-default-execution-space"};
}

std::vector<char> compile_cubin(const std::string& source, const std::string& name, int arch) {
  nvrtcProgram prog;
  TESSERA_CHECK_NVRTC(nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr), name);
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&prog};
  const auto opts = nvrtc_options(arch);
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    std::size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    if (n) nvrtcGetProgramLog(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();  // n counts the NUL
    throw CompileError("NVRTC could not compile kernel " + name + " for sm_" + std::to_string(arch) + " (" +
                       nvrtcGetErrorString(r) + "): " + log + "\n" + offending_line(source, log));
  }
  std::size_t n = 0;
  TESSERA_CHECK_NVRTC(nvrtcGetCUBINSize(prog, &n), name);
  std::vector<char> cubin(n);
  TESSERA_CHECK_NVRTC(nvrtcGetCUBIN(prog, cubin.data()), name);
  return cubin;
}

namespace {
// A kernel loaded from its cubin; unloaded with the context that keeps it.
struct LoadedKernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  LoadedKernel(const std::vector<char>& image, const std::string& name) {
    TESSERA_CHECK_CUDA(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    if (const cudaError_t e = cudaLibraryGetKernel(&kernel, library, name.c_str()); e != cudaSuccess) {
      (void)cudaLibraryUnload(library);  // the destructor does not run for a throwing constructor
      TESSERA_CHECK_CUDA(e);
    }
  }
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  ~LoadedKernel() { (void)cudaLibraryUnload(library); }
};
// The kernels loaded in one context, per device and key.
struct LoadedTag;
using Loaded = ContextCache<LoadedTag, std::pair<int, std::string>, const LoadedKernel>;

int arch_of(int device) {
  int major = 0, minor = 0;
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}
int multiprocessors(int device) { return detail::multiprocessor_count(device); }

std::string kernel_name(const std::string& key) {
  char b[32];
  std::snprintf(b, sizeof b, "tessera_jit_%016llx", static_cast<unsigned long long>(fnv1a(key.data(), key.size())));
  return b;
}

// The kernel `name` for memory-cache key `kernel_key` on `device`, its cubin from `image()` on a miss.
cudaKernel_t kernel_for(const std::string& kernel_key, const std::string& name, int device, Origin& origin,
                        const std::function<std::vector<char>(int arch)>& image_for) {
  // Compiled and loaded outside the cache's lock; where two threads miss at once, one load wins.
  bool made = false;
  const auto k = Loaded::current().get(std::make_pair(device, kernel_key), [&] {
    made = true;
    return std::make_shared<const LoadedKernel>(image_for(arch_of(device)), name);
  });
  if (!made) origin = Origin::memory;
  return k->kernel;
}

struct Dims {
  long long v[6];
};
}  // namespace

Origin launch(const Kernel& k, const Args& a, Device device, const Stream& s) { return launch(k, k.key(), a, device, s); }

Origin launch(const Kernel& k, const std::string& key, const Args& a, Device device, const Stream& s) {
  if (!device.is_cuda()) throw InvalidArgument("jit::launch: " + device.str() + " is not a CUDA device");
  DeviceGuard guard(device);
  Origin origin = Origin::memory;
  const std::string name = kernel_name(key);
  const cudaKernel_t fn = kernel_for(key, name, device.index(), origin, [&](int arch) {
    return cubin_for(k, name, arch, DiskCache(settings().kernel_cache_dir), &origin);
  });
  if (a.n == 0) return origin;
  // Each parameter's value, in the generated signature's order (jit_ir.cpp params()).
  const int R = k.rank;
  Dims shape{}, ostr{};
  std::vector<Dims> strides(a.operands.size());
  std::vector<const void*> ptrs(a.operands.size());
  for (int d = 0; d < R; ++d) shape.v[d] = a.shape[d], ostr.v[d] = a.out_strides[d];
  long long n = a.n;
  void* out = a.out;
  std::vector<void*> params{&out, &n};
  if (!k.linear) params.insert(params.end(), {&shape, &ostr});
  for (std::size_t i = 0; i < a.operands.size(); ++i) {
    ptrs[i] = a.operands[i].ptr;
    for (int d = 0; d < R; ++d) strides[i].v[d] = a.operands[i].strides[d];
    params.push_back(&ptrs[i]);
    if (!k.linear) params.push_back(&strides[i]);
  }
  std::vector<std::array<unsigned char, 16>> scalars = a.scalars;
  for (auto& sc : scalars) params.push_back(sc.data());
  // Dims is passed by value with rank R: the kernel reads only its first R entries, and a struct
  // of R long longs has the layout of the first R of six.
  // Contiguous: one pass of 256-thread blocks. Strided: 512-thread blocks, at most 64 per
  // multiprocessor, each thread striding over the rest (measured: docs/performance/jit.md).
  const int threads = k.linear ? 256 : 512;
  const long long per_block = k.linear ? static_cast<long long>(threads) * k.unroll() : threads;
  long long blocks = (n + per_block - 1) / per_block;
  blocks = k.linear ? std::min(blocks, 1ll << 30) : std::min(blocks, 64ll * multiprocessors(device.index()));
  TESSERA_CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(fn), dim3(static_cast<unsigned>(blocks)),
                                      dim3(threads), params.data(), 0, static_cast<cudaStream_t>(s.native())));
  return origin;
}

namespace {
// Kernel `name` of `source`, from the caches or NVRTC.
cudaKernel_t source_kernel(const std::string& source, const std::string& name, Device device, Origin& origin) {
  return kernel_for("src:" + name + "\n" + source, name, device.index(), origin, [&](int arch) {
    return cubin_of_source(source, name, arch, DiskCache(settings().kernel_cache_dir), &origin);
  });
}
}  // namespace

int multiprocessor_count(Device device) { return multiprocessors(device.index()); }

Origin launch_source_grid(const std::string& source, const std::string& name, Device device, const Stream& s,
                          std::int64_t blocks, int threads,
                          const std::function<void(std::vector<void*>&, std::vector<std::vector<long long>>&)>& pack) {
  if (!device.is_cuda()) throw InvalidArgument("jit::launch_source: " + device.str() + " is not a CUDA device");
  DeviceGuard guard(device);
  Origin origin = Origin::memory;
  const cudaKernel_t fn = source_kernel(source, name, device, origin);
  if (blocks == 0) return origin;
  std::vector<void*> params;
  std::vector<std::vector<long long>> keep;
  pack(params, keep);
  TESSERA_CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(fn), dim3(static_cast<unsigned>(blocks)),
                                      dim3(threads), params.data(), 0, static_cast<cudaStream_t>(s.native())));
  return origin;
}

Origin launch_source(const std::string& source, const std::string& name, Device device, const Stream& s, std::int64_t n,
                     const std::function<void(std::vector<void*>&, std::vector<std::vector<long long>>&)>& pack) {
  constexpr int threads = 256;
  long long count = n;
  const long long blocks = std::min<long long>((n + threads - 1) / threads, 1ll << 30);
  return launch_source_grid(source, name, device, s, blocks, threads, [&](auto& params, auto& keep) {
    params.push_back(&count);
    pack(params, keep);
  });
}

}  // namespace tessera::local::jit
