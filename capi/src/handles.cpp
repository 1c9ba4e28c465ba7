// The handle registry, the last-error state and the exception-to-status mapping.
#include "handles.hpp"

#include "tessera/local/jit/compiler.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>
#include <vector>

namespace tessera::capi {
namespace {

struct Slot {
  std::uint32_t generation = 1;
  Kind kind{};
  std::shared_ptr<Object> obj;
};
struct Registry {
  std::mutex mu;
  std::vector<Slot> slots;
  std::vector<std::uint32_t> free_slots;
  std::int64_t live = 0;
};
Registry& registry() {
  static auto* r = new Registry();  // never destroyed: handles may be freed from atexit code
  return *r;
}

constexpr std::uint32_t kGenMask = 0xFFFFFF;
std::uint64_t make_id(Kind k, std::uint32_t gen, std::uint32_t slot) {
  return (std::uint64_t(k) << 56) | (std::uint64_t(gen & kGenMask) << 32) | slot;
}

thread_local std::string last_error;

[[noreturn]] void bad_handle(Kind k, std::uint64_t id, const char* arg, const char* why) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(id));
  throw InvalidHandle(std::string(arg) + " (a tessera_" + kind_name(k) + ", id " + hex + ") is " + why);
}

// Finds the slot of a live id; must hold the registry's lock.
Slot& locate(Registry& r, Kind k, std::uint64_t id, const char* arg) {
  if (id == 0) bad_handle(k, id, arg, "a null handle");
  const auto kind = static_cast<Kind>(id >> 56);
  if (kind != k)
    throw InvalidHandle(std::string(arg) + " is a tessera_" + kind_name(kind) + " handle, not a tessera_" +
                        kind_name(k));
  const auto slot = static_cast<std::uint32_t>(id);
  const auto gen = static_cast<std::uint32_t>(id >> 32) & kGenMask;
  if (slot >= r.slots.size()) bad_handle(k, id, arg, "not a handle this library made");
  Slot& s = r.slots[slot];
  if (!s.obj || s.generation != gen || s.kind != k) bad_handle(k, id, arg, "freed (or never valid)");
  return s;
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::runtime: return "runtime";
    case Kind::grid: return "grid";
    case Kind::layout: return "layout";
    case Kind::array: return "array";
    case Kind::halo: return "halo";
    case Kind::plan: return "fft_plan";
    case Kind::writer: return "checkpoint_writer";
    case Kind::reader: return "checkpoint_reader";
  }
  return "unknown";
}

std::uint64_t put(Kind k, std::shared_ptr<Object> obj) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::uint32_t slot;
  if (!r.free_slots.empty()) {
    slot = r.free_slots.back();
    r.free_slots.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(r.slots.size());
    r.slots.emplace_back();
  }
  Slot& s = r.slots[slot];
  s.kind = k;
  s.obj = std::move(obj);
  ++r.live;
  return make_id(k, s.generation, slot);
}

std::shared_ptr<Object> find(Kind k, std::uint64_t id, const char* arg) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return locate(r, k, id, arg).obj;
}

std::shared_ptr<Object> take(Kind k, std::uint64_t id, const char* arg) {
  if (id == 0) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  Slot& s = locate(r, k, id, arg);
  auto obj = std::move(s.obj);
  s.obj.reset();
  s.generation = (s.generation + 1) & kGenMask;
  if (s.generation == 0) s.generation = 1;
  r.free_slots.push_back(static_cast<std::uint32_t>(id));
  --r.live;
  return obj;  // destroyed by the caller, outside the lock
}

std::int64_t live_handles() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.live;
}

std::int64_t live_exports(int delta) {
  static std::atomic<std::int64_t> n{0};
  return n += delta;
}

tessera_status fail(const char* op) {
  tessera_status st = TESSERA_ERROR_INTERNAL;
  std::string msg;
  try {
    throw;
  } catch (const InvalidHandle& e) {
    st = TESSERA_ERROR_INVALID_HANDLE, msg = e.what();
  } catch (const DtypeMismatch& e) {
    st = TESSERA_ERROR_DTYPE_MISMATCH, msg = e.what();
  } catch (const Busy& e) {
    st = TESSERA_ERROR_BUSY, msg = e.what();
  } catch (const io::IoError& e) {
    st = TESSERA_ERROR_IO, msg = e.what();
  } catch (const distributed::ConsistencyError& e) {
    st = TESSERA_ERROR_CONSISTENCY, msg = e.what();
  } catch (const distributed::LayoutMismatch& e) {
    st = TESSERA_ERROR_LAYOUT_MISMATCH, msg = e.what();
  } catch (const ShapeMismatch& e) {
    st = TESSERA_ERROR_SHAPE_MISMATCH, msg = e.what();
  } catch (const DeviceMismatch& e) {
    st = TESSERA_ERROR_DEVICE_MISMATCH, msg = e.what();
  } catch (const OutOfMemory& e) {
    st = TESSERA_ERROR_OUT_OF_MEMORY, msg = e.what();
  } catch (const BackendUnavailable& e) {
    st = TESSERA_ERROR_BACKEND_UNAVAILABLE, msg = e.what();
  } catch (const CudaError& e) {
    st = TESSERA_ERROR_CUDA, msg = e.what();
  } catch (const MpiError& e) {
    st = TESSERA_ERROR_COMM, msg = e.what();
  } catch (const NcclError& e) {
    st = TESSERA_ERROR_COMM, msg = e.what();
  } catch (const CommError& e) {
    st = TESSERA_ERROR_COMM, msg = e.what();
  } catch (const local::jit::CompileError& e) {
    st = TESSERA_ERROR_COMPILE, msg = e.what();
  } catch (const InvalidArgument& e) {
    st = TESSERA_ERROR_INVALID_ARGUMENT, msg = e.what();
  } catch (const Error& e) {
    msg = e.what();
  } catch (const std::bad_alloc&) {
    st = TESSERA_ERROR_OUT_OF_MEMORY, msg = "out of host memory (rank " + std::to_string(process_rank()) + ")";
  } catch (const std::exception& e) {
    msg = std::string(e.what()) + " (rank " + std::to_string(process_rank()) + ")";
  } catch (...) {
    msg = "unknown exception (rank " + std::to_string(process_rank()) + ")";
  }
  try {
    last_error = std::string(op) + ": " + msg;
  } catch (...) {
    last_error.clear();  // no memory for the message: the status still says what happened
  }
  return st;
}

std::string dtype_name(tessera_dtype t) {
  switch (t) {
    case TESSERA_F32: return "f32";
    case TESSERA_F64: return "f64";
    case TESSERA_C64: return "c64";
    case TESSERA_C128: return "c128";
    case TESSERA_I32: return "i32";
    case TESSERA_I64: return "i64";
    case TESSERA_BOOL: return "bool";
    case TESSERA_DTYPE_RANGE_: break;  // not a value
  }
  return "dtype " + std::to_string(static_cast<int>(t));
}
bool is_complex_dtype(tessera_dtype t) { return t == TESSERA_C64 || t == TESSERA_C128; }

namespace {
// tessera_dtype and the library's DType, side by side (both directions read this one table).
constexpr std::pair<tessera_dtype, DType> kDtypes[] = {
    {TESSERA_F32, DType::float32},     {TESSERA_F64, DType::float64}, {TESSERA_C64, DType::complex64},
    {TESSERA_C128, DType::complex128}, {TESSERA_I32, DType::int32},   {TESSERA_I64, DType::int64},
    {TESSERA_BOOL, DType::boolean}};
}  // namespace

tessera_dtype dtype_of_value(DType t) {
  for (const auto& [code, value] : kDtypes)
    if (value == t) return code;
  throw InvalidArgument("element type " + std::to_string(static_cast<int>(t)) + " has no tessera_dtype");
}

DType value_of_dtype(tessera_dtype t) {
  for (const auto& [code, value] : kDtypes)
    if (code == t) return value;
  throw InvalidArgument("dtype " + std::to_string(static_cast<int>(t)) + " is not a tessera_dtype");
}

std::shared_ptr<ArrayBase> get_array(tessera_array h, const char* arg) { return get<ArrayBase>(Kind::array, h.id, arg); }
std::shared_ptr<LayoutObj> get_layout(tessera_layout h, const char* arg) {
  return get<LayoutObj>(Kind::layout, h.id, arg);
}

const Stream& tessera_stream(const ArrayBase& a) {
  return Stream::default_for(a.device);
}
void before(const ArrayBase& a) {
  if (a.stream) tessera_stream(a).wait_for(*a.stream);
}
void after(const ArrayBase& a) {
  if (a.stream) a.stream->wait_for(tessera_stream(a));
}

void check_same_kind(const ArrayBase& a, const ArrayBase& b, const char* op) {
  if (a.dtype != b.dtype)
    throw DtypeMismatch(std::string("dtype mismatch in ") + op + ": " + dtype_name(a.dtype) + " vs " +
                        dtype_name(b.dtype));
  if (a.ndim != b.ndim)
    throw ShapeMismatch(std::string("rank mismatch in ") + op + ": " + std::to_string(a.ndim) + "-D vs " +
                        std::to_string(b.ndim) + "-D");
}

}  // namespace tessera::capi

extern "C" {
const char* tessera_last_error(void) { return tessera::capi::last_error.c_str(); }
int64_t tessera_live_handles(void) { return tessera::capi::live_handles(); }
const char* tessera_status_name(tessera_status s) {
  switch (s) {
#define TESSERA_NAME(X) \
  case X: return #X;
    TESSERA_NAME(TESSERA_SUCCESS)
    TESSERA_NAME(TESSERA_ERROR_INVALID_ARGUMENT)
    TESSERA_NAME(TESSERA_ERROR_INVALID_HANDLE)
    TESSERA_NAME(TESSERA_ERROR_SHAPE_MISMATCH)
    TESSERA_NAME(TESSERA_ERROR_LAYOUT_MISMATCH)
    TESSERA_NAME(TESSERA_ERROR_DEVICE_MISMATCH)
    TESSERA_NAME(TESSERA_ERROR_DTYPE_MISMATCH)
    TESSERA_NAME(TESSERA_ERROR_OUT_OF_MEMORY)
    TESSERA_NAME(TESSERA_ERROR_BACKEND_UNAVAILABLE)
    TESSERA_NAME(TESSERA_ERROR_IO)
    TESSERA_NAME(TESSERA_ERROR_COMM)
    TESSERA_NAME(TESSERA_ERROR_CUDA)
    TESSERA_NAME(TESSERA_ERROR_CONSISTENCY)
    TESSERA_NAME(TESSERA_ERROR_BUSY)
    TESSERA_NAME(TESSERA_ERROR_COMPILE)
    TESSERA_NAME(TESSERA_ERROR_INTERNAL)
#undef TESSERA_NAME
  }
  return "TESSERA_ERROR_UNKNOWN_STATUS";
}
}
