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

// The loaded kernel `name` for memory-cache key `kernel_key` on `device`, its cubin from
// `image()` on a miss.
std::shared_ptr<const LoadedKernel> loaded_for(const std::string& kernel_key, const std::string& name, int device,
                                               Origin& origin,
                                               const std::function<std::vector<char>(int arch)>& image_for) {
  // Compiled and loaded outside the cache's lock; where two threads miss at once, one load wins.
  bool made = false;
  auto k = Loaded::current().get(std::make_pair(device, kernel_key), [&] {
    made = true;
    return std::make_shared<const LoadedKernel>(image_for(arch_of(device)), name);
  });
  if (!made) origin = Origin::memory;
  return k;
}
cudaKernel_t kernel_for(const std::string& kernel_key, const std::string& name, int device, Origin& origin,
                        const std::function<std::vector<char>(int arch)>& image_for) {
  return loaded_for(kernel_key, name, device, origin, image_for)->kernel;
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

// ---- Prepared: one kernel, one geometry, many launches ----

struct Prepared::State {
  std::shared_ptr<const LoadedKernel> loaded;
  // The parameter values in the generated signature's order (jit_ir.cpp params()); params
  // points at them, so State never moves (it lives behind a unique_ptr).
  void* out = nullptr;
  long long n = 0;
  Dims shape{}, ostr{};
  std::vector<const void*> ptrs;
  std::vector<Dims> strides;
  std::vector<std::array<unsigned char, 16>> scalars;
  std::vector<void*> params;
  long long blocks = 0;
  int threads = 0;
};

Prepared::Prepared(const Kernel& k, const Args& g, Device device) : state_(std::make_unique<State>()), device_(device) {
  if (!device.is_cuda()) throw InvalidArgument("jit::Prepared: " + device.str() + " is not a CUDA device");
  DeviceGuard guard(device);
  const std::string key = k.key(), name = kernel_name(key);
  Origin origin = Origin::memory;
  State& st = *state_;
  st.loaded = loaded_for(key, name, device.index(), origin, [&](int arch) {
    return cubin_for(k, name, arch, DiskCache(settings().kernel_cache_dir), &origin);
  });
  const int R = k.rank;
  st.n = g.n;
  for (int d = 0; d < R; ++d) st.shape.v[d] = g.shape[d], st.ostr.v[d] = g.out_strides[d];
  const std::size_t m = g.operands.size();
  st.ptrs.assign(m, nullptr);
  st.strides.assign(m, Dims{});
  for (std::size_t i = 0; i < m; ++i)
    for (int d = 0; d < R; ++d) st.strides[i].v[d] = g.operands[i].strides[d];
  st.scalars.assign(static_cast<std::size_t>(k.scalars()), {});
  st.params = {&st.out, &st.n};
  if (!k.linear) st.params.insert(st.params.end(), {&st.shape, &st.ostr});
  for (std::size_t i = 0; i < m; ++i) {
    st.params.push_back(&st.ptrs[i]);
    if (!k.linear) st.params.push_back(&st.strides[i]);
  }
  for (auto& sc : st.scalars) st.params.push_back(sc.data());
  // The launch shape of launch() above.
  st.threads = k.linear ? 256 : 512;
  const long long per_block = k.linear ? static_cast<long long>(st.threads) * k.unroll() : st.threads;
  st.blocks = (st.n + per_block - 1) / per_block;
  st.blocks = k.linear ? std::min(st.blocks, 1ll << 30) : std::min(st.blocks, 64ll * multiprocessors(device.index()));
}

Prepared::~Prepared() = default;

void Prepared::launch(void* out, const void* const* operands, std::size_t operand_count,
                      const std::array<unsigned char, 16>* scalars, std::size_t scalar_count, const Stream& s) {
  State& st = *state_;
  if (operand_count != st.ptrs.size() || scalar_count != st.scalars.size())
    throw InvalidArgument("jit::Prepared: " + std::to_string(operand_count) + " operands and " +
                              std::to_string(scalar_count) + " scalars for a kernel of " +
                              std::to_string(st.ptrs.size()) + " and " + std::to_string(st.scalars.size()),
                          device_);
  if (st.n == 0) return;
  st.out = out;
  for (std::size_t i = 0; i < operand_count; ++i) st.ptrs[i] = operands[i];
  for (std::size_t i = 0; i < scalar_count; ++i) st.scalars[i] = scalars[i];
  DeviceGuard guard(device_);
  TESSERA_CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(st.loaded->kernel),
                                      dim3(static_cast<unsigned>(st.blocks)), dim3(st.threads), st.params.data(), 0,
                                      static_cast<cudaStream_t>(s.native())));
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
