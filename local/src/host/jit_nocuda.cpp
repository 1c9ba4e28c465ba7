// The kernel compiler in a build without CUDA: the IR, generator and disk cache work (they are
// plain C++), compiling and launching need NVRTC and a GPU.
#include "tessera/local/jit/compiler.hpp"

namespace tessera::local::jit {

bool nvrtc_available() noexcept { return false; }
std::string nvrtc_version() { return "none"; }
std::vector<std::string> nvrtc_options(int arch) { return {"--gpu-architecture=sm_" + std::to_string(arch)}; }

std::vector<char> compile_cubin(const std::string&, const std::string& name, int) {
  throw BackendUnavailable("jit: kernel " + name + " needs NVRTC, and this Tessera was built without CUDA");
}

Origin launch(const Kernel& k, const Args& a, Device device, const Stream& s) { return launch(k, k.key(), a, device, s); }

Origin launch(const Kernel& k, const std::string&, const Args&, Device device, const Stream&) {
  throw BackendUnavailable("jit: a fused kernel (" + k.key() + ") on " + device.str() +
                           " needs a CUDA build of Tessera");
}

Origin launch_source(const std::string&, const std::string& name, Device device, const Stream&, std::int64_t,
                     const std::function<void(std::vector<void*>&, std::vector<std::vector<long long>>&)>&) {
  throw BackendUnavailable("jit: kernel " + name + " on " + device.str() + " needs a CUDA build of Tessera");
}

Origin launch_source_grid(const std::string&, const std::string& name, Device device, const Stream&, std::int64_t, int,
                          const std::function<void(std::vector<void*>&, std::vector<std::vector<long long>>&)>&) {
  throw BackendUnavailable("jit: kernel " + name + " on " + device.str() + " needs a CUDA build of Tessera");
}
struct Prepared::State {};
Prepared::Prepared(const Kernel& k, const Args&, Device device) : device_(device) {
  throw BackendUnavailable("jit: a fused kernel (" + k.key() + ") on " + device.str() + " needs a CUDA build of Tessera");
}
Prepared::~Prepared() = default;
void Prepared::launch(void*, const void* const*, std::size_t, const std::array<unsigned char, 16>*, std::size_t,
                      const Stream&) {
  throw BackendUnavailable("jit: " + device_.str() + ": launching needs a CUDA build of Tessera");
}

int multiprocessor_count(Device device) {
  throw BackendUnavailable("jit: " + device.str() + " has no multiprocessors in a build without CUDA");
}

}  // namespace tessera::local::jit
