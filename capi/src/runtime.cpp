// Runtime, memory, grids and layouts of the C API.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "handles.hpp"
#include "tessera/config.hpp"

namespace tessera::capi {
namespace {

struct RuntimeObj : Object {
  std::unique_ptr<Runtime> rt;
  std::optional<comm::ProcessGroup> group;  // over the caller's communicator
  Device device;
  std::mutex mu;
  std::map<void*, std::unique_ptr<Buffer>> buffers;  // tessera_malloc'ed device memory
  std::map<void*, std::unique_ptr<Buffer>> host_buffers;
  ~RuntimeObj() override {
    buffers.clear();
    host_buffers.clear();
    group.reset();  // before the Runtime: the group's communicator needs MPI
  }
};

std::mutex g_mu;
std::uint64_t g_runtime = 0;  // the live runtime's id (one at a time)

std::shared_ptr<RuntimeObj> get_runtime(tessera_runtime h, const char* arg) {
  return get<RuntimeObj>(Kind::runtime, h.id, arg);
}

void create_runtime(MPI_Comm comm, const char* device, tessera_runtime* out) {
  need(out, "out");
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_runtime != 0)
      throw Busy("a tessera_runtime is alive already (one per process: free it before making another)");
  }
  auto obj = std::make_shared<RuntimeObj>();
  obj->rt = std::make_unique<Runtime>();  // initializes MPI unless the caller did
  if (comm == MPI_COMM_NULL) throw InvalidArgument("comm is MPI_COMM_NULL");
  obj->group.emplace(comm);
  obj->device = obj->rt->device();
  if (device && *device) {
    obj->device = Device::parse(device);
    if (obj->device.is_cuda() && std::string(device) == "cuda")
      obj->device = Device::cuda(obj->rt->device().is_cuda() ? obj->rt->device().index() : 0);
    check_device_usable(obj->device);
    make_current(obj->device);
    set_process_device(obj->device);
  }
  std::lock_guard<std::mutex> lock(g_mu);
  out->id = g_runtime = put(Kind::runtime, obj);
}

std::map<void*, std::unique_ptr<Buffer>>& buffers_of(RuntimeObj& r, tessera_memory kind) {
  if (kind != TESSERA_MEMORY_HOST && kind != TESSERA_MEMORY_DEVICE)
    throw InvalidArgument("memory kind " + std::to_string(int(kind)) + " is neither TESSERA_MEMORY_HOST nor _DEVICE");
  return kind == TESSERA_MEMORY_HOST ? r.host_buffers : r.buffers;
}

}  // namespace

Device runtime_device() {
  std::uint64_t id;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    id = g_runtime;
  }
  return get_runtime({id}, "the runtime (tessera_runtime_create first)")->device;
}

Device memory_device(tessera_memory kind) {
  if (kind == TESSERA_MEMORY_HOST) return Device::host();
  if (kind != TESSERA_MEMORY_DEVICE)
    throw InvalidArgument("memory kind " + std::to_string(int(kind)) + " is neither TESSERA_MEMORY_HOST nor _DEVICE");
  const Device d = runtime_device();
  if (!d.is_cuda())
    throw BackendUnavailable("TESSERA_MEMORY_DEVICE on a runtime whose device is host (no GPU, or a build "
                             "without CUDA)");
  return d;
}

}  // namespace tessera::capi

using namespace tessera;
using namespace tessera::capi;

extern "C" {

const char* tessera_version(int* major, int* minor, int* patch) {
  if (major) *major = TESSERA_CAPI_VERSION_MAJOR;
  if (minor) *minor = TESSERA_CAPI_VERSION_MINOR;
  if (patch) *patch = TESSERA_CAPI_VERSION_PATCH;
  return TESSERA_VERSION_STRING;
}

tessera_status tessera_runtime_create(MPI_Comm comm, const char* device, tessera_runtime* out) {
  return guard("tessera_runtime_create", [&] { create_runtime(comm, device, out); });
}

tessera_status tessera_runtime_create_world(const char* device, tessera_runtime* out) {
  return guard("tessera_runtime_create_world", [&] { create_runtime(MPI_COMM_WORLD, device, out); });
}

tessera_status tessera_runtime_create_f(MPI_Fint comm, const char* device, tessera_runtime* out) {
  return guard("tessera_runtime_create_f", [&] {
    if (!Runtime::mpi_initialized()) throw InvalidArgument("a Fortran communicator needs MPI initialized (call MPI_Init first)");
    create_runtime(MPI_Comm_f2c(comm), device, out);
  });
}

tessera_status tessera_runtime_free(tessera_runtime h) {
  return guard("tessera_runtime_free", [&] {
    if (h.id == 0) return;
    get_runtime(h, "rt");
    const auto others = live_handles() - 1;
    if (others > 0)
      throw Busy(std::to_string(others) + " other handle(s) still alive: free every grid, layout, array, plan and "
                 "checkpoint first");
    if (live_exports() > 0)
      throw Busy(std::to_string(live_exports()) + " exported DLPack tensor(s) not yet deleted");
    auto obj = take(Kind::runtime, h.id, "rt");
    std::lock_guard<std::mutex> lock(g_mu);
    g_runtime = 0;
  });
}

tessera_status tessera_runtime_rank(tessera_runtime h, int* rank, int* size) {
  return guard("tessera_runtime_rank", [&] {
    auto r = get_runtime(h, "rt");
    if (rank) *rank = r->group->rank();
    if (size) *size = r->group->size();
  });
}

tessera_status tessera_runtime_device(tessera_runtime h, char* buf, size_t len, int* is_cuda) {
  return guard("tessera_runtime_device", [&] {
    auto r = get_runtime(h, "rt");
    if (buf && len > 0) {
      const std::string s = r->device.str();
      const std::size_t n = std::min(len - 1, s.size());
      std::memcpy(buf, s.data(), n);
      buf[n] = '\0';
    }
    if (is_cuda) *is_cuda = r->device.is_cuda();
  });
}

tessera_status tessera_runtime_synchronize(tessera_runtime h) {
  return guard("tessera_runtime_synchronize", [&] { Stream::default_for(get_runtime(h, "rt")->device).synchronize(); });
}

tessera_status tessera_malloc(tessera_runtime h, tessera_memory kind, size_t bytes, void** ptr) {
  return guard("tessera_malloc", [&] {
    need(ptr, "ptr");
    auto r = get_runtime(h, "rt");
    auto& bufs = buffers_of(*r, kind);
    const Device d = memory_device(kind);
    auto b = std::make_unique<Buffer>(std::max<size_t>(bytes, 1), d);
    Stream::default_for(d).synchronize();  // usable on any stream of the caller's
    std::lock_guard<std::mutex> lock(r->mu);
    *ptr = b->data();
    bufs.emplace(b->data(), std::move(b));
  });
}

tessera_status tessera_free(tessera_runtime h, tessera_memory kind, void* ptr) {
  return guard("tessera_free", [&] {
    if (!ptr) return;
    auto r = get_runtime(h, "rt");
    auto& bufs = buffers_of(*r, kind);
    std::unique_ptr<Buffer> b;
    {
      std::lock_guard<std::mutex> lock(r->mu);
      auto it = bufs.find(ptr);
      if (it == bufs.end())
        throw InvalidArgument("pointer " + std::to_string(reinterpret_cast<std::uintptr_t>(ptr)) +
                              " was not returned by tessera_malloc with this memory kind (or was freed)");
      b = std::move(it->second);
      bufs.erase(it);
    }
  });
}

tessera_status tessera_memcpy(tessera_runtime h, void* dst, tessera_memory dst_kind, const void* src,
                              tessera_memory src_kind, size_t bytes) {
  return guard("tessera_memcpy", [&] {
    get_runtime(h, "rt");
    if (bytes == 0) return;
    need(dst, "dst");
    need(src, "src");
    const Device dd = memory_device(dst_kind), sd = memory_device(src_kind);
    const Device on = sd.is_cuda() ? sd : dd;
    detail::memcpy_any(dst, dd, src, sd, bytes, Stream::default_for(on));
    Stream::default_for(on).synchronize();
  });
}

tessera_status tessera_grid_create(tessera_runtime h, int ndims, const int* dims, const int* periodic,
                                   tessera_grid* out) {
  return guard("tessera_grid_create", [&] {
    need(out, "out");
    auto r = get_runtime(h, "rt");
    if (ndims < 1 || ndims > 8) throw InvalidArgument("ndims " + std::to_string(ndims) + " outside 1..8");
    std::vector<int> d(ndims, 0);
    std::vector<bool> p(ndims, false);
    for (int i = 0; i < ndims; ++i) {
      if (dims) d[i] = dims[i];
      if (periodic) p[i] = periodic[i] != 0;
    }
    out->id = put(Kind::grid, std::make_shared<GridObj>(distributed::ProcessGrid(*r->group, d, p)));
  });
}

tessera_status tessera_grid_free(tessera_grid g) {
  return guard("tessera_grid_free", [&] { take(Kind::grid, g.id, "grid"); });
}

tessera_status tessera_grid_info(tessera_grid g, int* ndims, int* dims, int* coords) {
  return guard("tessera_grid_info", [&] {
    const auto& grid = get<GridObj>(Kind::grid, g.id, "grid")->grid;
    if (ndims) *ndims = grid.ndims();
    for (int i = 0; i < grid.ndims(); ++i) {
      if (dims) dims[i] = grid.dims()[i];
      if (coords) coords[i] = grid.coords()[i];
    }
  });
}

}  // extern "C"
