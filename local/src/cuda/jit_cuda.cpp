// The kernel compiler's CUDA side (jit/compiler.hpp): NVRTC to a cubin for the device's
// architecture, loaded by the CUDA runtime's library API (cudaLibraryLoadData: no libcuda link,
// so the library still loads on machines without a driver) and launched on the given stream.
#include <cuda.h>  // the driver's types only: its entry points come through the runtime
#include <cudaTypedefs.h>
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
// The driver's cuKernelGetFunction and cuLaunchKernel, through the runtime (no libcuda link);
// null where the driver lacks them. The runtime's cudaLaunchKernel of a library kernel looks up
// the context's function on every call; launching that function directly is the cheaper per-call
// path of small kernels (docs/performance/python.md).
struct DriverLaunch {
  PFN_cuKernelGetFunction_v12000 get_function = nullptr;
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  PFN_cuGetErrorName_v6000 error_name = nullptr;
};
const DriverLaunch& driver_launch() {
  static const DriverLaunch d = [] {
    DriverLaunch r;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuKernelGetFunction", reinterpret_cast<void**>(&r.get_function), 12000,
                                         cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess)
      r.get_function = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", reinterpret_cast<void**>(&r.launch), 4000,
                                         cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess)
      r.launch = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuGetErrorName", reinterpret_cast<void**>(&r.error_name), 6000,
                                         cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess)
      r.error_name = nullptr;
    (void)cudaGetLastError();
    if (!r.get_function || !r.launch) r = {};
    return r;
  }();
  return d;
}

// A kernel loaded from its cubin (with the current context's function of it where the driver
// gives one); unloaded with the context that keeps it.
struct LoadedKernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  CUfunction function = nullptr;
  LoadedKernel(const std::vector<char>& image, const std::string& name) {
    TESSERA_CHECK_CUDA(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    if (const cudaError_t e = cudaLibraryGetKernel(&kernel, library, name.c_str()); e != cudaSuccess) {
      (void)cudaLibraryUnload(library);  // the destructor does not run for a throwing constructor
      TESSERA_CHECK_CUDA(e);
    }
    if (const auto& d = driver_launch(); d.get_function &&
        d.get_function(&function, reinterpret_cast<CUkernel>(kernel)) != CUDA_SUCCESS)
      function = nullptr;  // cudaLaunchKernel then
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

// One launch of a generated kernel: its parameter values in the generated signature's order
// (jit_ir.cpp params()) and its grid. `params` points into the frame: it never moves.
// Dims is passed by value with rank R: the kernel reads only its first R entries, and a struct of
// R long longs has the layout of the first R of six.
struct Frame {
  void* out = nullptr;
  long long n = 0;
  Dims shape{}, ostr{};
  std::vector<const void*> ptrs;
  std::vector<Dims> strides;
  std::vector<std::array<unsigned char, 16>> scalars;
  std::vector<void*> params;
  long long blocks = 0;
  int threads = 0;
  int device_index = 0;

  Frame(const Kernel& k, const Args& a, int device) : out(a.out), n(a.n), scalars(a.scalars), device_index(device) {
    const int R = k.rank;
    for (int d = 0; d < R; ++d) shape.v[d] = a.shape[d], ostr.v[d] = a.out_strides[d];
    const std::size_t m = a.operands.size();
    ptrs.resize(m);
    strides.resize(m);
    params = {&out, &n};
    if (!k.linear) params.insert(params.end(), {&shape, &ostr});
    for (std::size_t i = 0; i < m; ++i) {
      ptrs[i] = a.operands[i].ptr;
      for (int d = 0; d < R; ++d) strides[i].v[d] = a.operands[i].strides[d];
      params.push_back(&ptrs[i]);
      if (!k.linear) params.push_back(&strides[i]);
    }
    scalars.resize(static_cast<std::size_t>(k.scalars()));
    for (auto& sc : scalars) params.push_back(sc.data());
    // Contiguous: one pass of 256-thread blocks. Strided: 512-thread blocks, at most 64 per
    // multiprocessor, each thread striding over the rest (measured: docs/performance/jit.md).
    threads = k.linear ? 256 : 512;
    const long long per_block = k.linear ? static_cast<long long>(threads) * k.unroll() : threads;
    blocks = (n + per_block - 1) / per_block;
    blocks = k.linear ? std::min(blocks, 1ll << 30) : std::min(blocks, 64ll * multiprocessors(device));
  }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  void launch(const LoadedKernel& k, const Stream& s) {
    if (n == 0) return;
    const auto stream = static_cast<cudaStream_t>(s.native());
    if (k.function) {
      if (const CUresult r = driver_launch().launch(k.function, static_cast<unsigned>(blocks), 1, 1,
                                                    static_cast<unsigned>(threads), 1, 1, 0, stream, params.data(),
                                                    nullptr);
          r != CUDA_SUCCESS) {
        const char* what = nullptr;
        if (driver_launch().error_name) driver_launch().error_name(r, &what);
        throw CudaError("cuLaunchKernel of generated kernel (" + std::to_string(blocks) + " blocks of " +
                            std::to_string(threads) + ") failed: " + (what ? what : "CUresult") + " (" +
                            std::to_string(static_cast<int>(r)) + ")",
                        static_cast<int>(r), Device::cuda(device_index));
      }
      return;
    }
    TESSERA_CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k.kernel), dim3(static_cast<unsigned>(blocks)),
                                        dim3(threads), params.data(), 0, stream));
  }
};
}  // namespace

Origin launch(const Kernel& k, const Args& a, Device device, const Stream& s) { return launch(k, k.key(), a, device, s); }

Origin launch(const Kernel& k, const std::string& key, const Args& a, Device device, const Stream& s) {
  if (!device.is_cuda()) throw InvalidArgument("jit::launch: " + device.str() + " is not a CUDA device");
  DeviceGuard guard(device);
  Origin origin = Origin::memory;
  const std::string name = kernel_name(key);
  const auto loaded = loaded_for(key, name, device.index(), origin, [&](int arch) {
    return cubin_for(k, name, arch, DiskCache(settings().kernel_cache_dir), &origin);
  });
  Frame(k, a, device.index()).launch(*loaded, s);
  return origin;
}

// ---- Prepared: one kernel, one geometry, many launches ----

struct Prepared::State {
  std::shared_ptr<const LoadedKernel> loaded;
  Frame frame;
  State(const Kernel& k, const Args& g, int device) : frame(k, g, device) {}
};

Prepared::Prepared(const Kernel& k, const Args& g, Device device) : device_(device) {
  if (!device.is_cuda()) throw InvalidArgument("jit::Prepared: " + device.str() + " is not a CUDA device");
  DeviceGuard guard(device);
  const std::string key = k.key(), name = kernel_name(key);
  Origin origin = Origin::memory;
  state_ = std::make_unique<State>(k, g, device.index());
  state_->loaded = loaded_for(key, name, device.index(), origin, [&](int arch) {
    return cubin_for(k, name, arch, DiskCache(settings().kernel_cache_dir), &origin);
  });
}

Prepared::~Prepared() = default;

void Prepared::launch(void* out, const void* const* operands, std::size_t operand_count,
                      const std::array<unsigned char, 16>* scalars, std::size_t scalar_count, const Stream& s) {
  Frame& f = state_->frame;
  if (operand_count != f.ptrs.size() || scalar_count != f.scalars.size())
    throw InvalidArgument("jit::Prepared: " + std::to_string(operand_count) + " operands and " +
                              std::to_string(scalar_count) + " scalars for a kernel of " +
                              std::to_string(f.ptrs.size()) + " and " + std::to_string(f.scalars.size()),
                          device_);
  f.out = out;
  std::copy(operands, operands + operand_count, f.ptrs.begin());
  std::copy(scalars, scalars + scalar_count, f.scalars.begin());
  // The device was checked when the kernel was made: only switch where another is current.
  int current = -1;
  TESSERA_CHECK_CUDA(cudaGetDevice(&current));
  if (current == device_.index()) return f.launch(*state_->loaded, s);
  DeviceGuard guard(device_);
  f.launch(*state_->loaded, s);
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
