// The C API's internals: the handle registry, the objects behind handles, the type/rank dispatch
// and the guard that turns every exception into a status and a message.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "tessera/tessera.h"
#include "tessera/tessera.hpp"

namespace tessera::capi {

/// A handle that is zero, freed or of another kind.
class InvalidHandle : public Error { using Error::Error; };
/// Arrays whose element types do not fit the operation.
class DtypeMismatch : public Error { using Error::Error; };
/// An object still in use (a pending halo exchange, live handles at runtime_free).
class Busy : public Error { using Error::Error; };

enum class Kind : std::uint8_t { runtime = 1, grid, layout, array, halo, plan, writer, reader };
const char* kind_name(Kind k);

/// What every handle points at.
struct Object {
  virtual ~Object() = default;
};

/// Handles: id = kind (8 bits) | generation (24 bits) | slot (32 bits). Freeing bumps the slot's
/// generation, so a stale id never finds the slot's next object. Thread-safe.
std::uint64_t put(Kind k, std::shared_ptr<Object> obj);
std::shared_ptr<Object> find(Kind k, std::uint64_t id, const char* arg);  // throws InvalidHandle
std::shared_ptr<Object> take(Kind k, std::uint64_t id, const char* arg);  // removes; id 0: null
std::int64_t live_handles();
/// Exported DLPack tensors not yet deleted (they hold arrays); adds `delta` and returns the count.
std::int64_t live_exports(int delta = 0);

template <class T>
std::shared_ptr<T> get(Kind k, std::uint64_t id, const char* arg) {
  return std::static_pointer_cast<T>(find(k, id, arg));
}

/// Runs f, returning TESSERA_SUCCESS, or the exception's status with "op: message" saved as
/// this thread's last error.
tessera_status fail(const char* op);  // call inside a catch (...) block
template <class F>
tessera_status guard(const char* op, F&& f) noexcept {
  try {
    f();
    return TESSERA_SUCCESS;
  } catch (...) {
    return fail(op);
  }
}
/// Throws InvalidArgument if p is null.
inline void need(const void* p, const char* what) {
  if (!p) throw InvalidArgument(std::string(what) + " is NULL");
}

// ---- objects ----
/// The live runtime's device (arrays and plans are made there); InvalidHandle if there is none.
Device runtime_device();
/// The device of memory of this kind: host, or the runtime's GPU (BackendUnavailable without one).
Device memory_device(tessera_memory kind);

struct GridObj : Object {
  distributed::ProcessGrid grid;
  explicit GridObj(distributed::ProcessGrid g) : grid(std::move(g)) {}
};

struct LayoutObj : Object {
  std::variant<std::monostate, distributed::Layout<1>, distributed::Layout<2>, distributed::Layout<3>,
               distributed::Layout<4>>
      v;
  int ndim = 0;
  template <int R> const distributed::Layout<R>& get() const { return std::get<distributed::Layout<R>>(v); }
  template <int R> explicit LayoutObj(distributed::Layout<R> l) : v(std::move(l)), ndim(R) {}
};

/// An array of any element type and rank; ArrayT<T, R> holds the distributed::Array.
struct ArrayBase : Object {
  tessera_dtype dtype{};
  int ndim = 0;
  tessera_memory memory = TESSERA_MEMORY_HOST;
  Device device;                   // where the shard lives
  std::unique_ptr<Stream> stream;  // the caller's stream (borrowed), if adopted with one
  std::shared_ptr<void> owner;     // what keeps adopted memory alive (an imported DLPack tensor)
  int pending_halos = 0;
};
template <class T, int R>
struct ArrayT : ArrayBase {
  distributed::Array<T, R> a;  // declared last: destroyed before the stream and owner it uses
};

// ---- dtype and rank dispatch ----
std::string dtype_name(tessera_dtype t);
bool is_complex_dtype(tessera_dtype t);
tessera_dtype dtype_of_value(DType t);
/// The element type of a tessera_dtype (InvalidArgument for a value that is none).
DType value_of_dtype(tessera_dtype t);

/// Calls f.template operator()<T, R>() for the element type of `t` and rank `ndim` (1..4).
template <class F>
decltype(auto) dispatch(tessera_dtype t, int ndim, F&& f) {
  auto by_rank = [&]<class T>() -> decltype(auto) {
    switch (ndim) {
      case 1: return f.template operator()<T, 1>();
      case 2: return f.template operator()<T, 2>();
      case 3: return f.template operator()<T, 3>();
      case 4: return f.template operator()<T, 4>();
    }
    throw InvalidArgument("ndim " + std::to_string(ndim) + " outside 1..4");
  };
  switch (t) {
    case TESSERA_F32: return by_rank.template operator()<float>();
    case TESSERA_F64: return by_rank.template operator()<double>();
    case TESSERA_C64: return by_rank.template operator()<complex64>();
    case TESSERA_C128: return by_rank.template operator()<complex128>();
    case TESSERA_I32: return by_rank.template operator()<std::int32_t>();
    case TESSERA_I64: return by_rank.template operator()<std::int64_t>();
    case TESSERA_BOOL: return by_rank.template operator()<bool>();
    case TESSERA_DTYPE_RANGE_: break;  // not a value
  }
  throw InvalidArgument("dtype " + std::to_string(static_cast<int>(t)) + " is not a tessera_dtype");
}

std::shared_ptr<ArrayBase> get_array(tessera_array h, const char* arg);
std::shared_ptr<LayoutObj> get_layout(tessera_layout h, const char* arg);
/// An array over the caller's buffer (tessera_array_adopt's checks and work).
std::shared_ptr<ArrayBase> adopt_buffer(const LayoutObj& l, tessera_dtype dtype, void* data, std::int64_t elements,
                                        tessera_memory kind, void* stream);
/// a's object as ArrayT<T, R> (the caller dispatched on a's dtype and rank).
template <class T, int R> distributed::Array<T, R>& typed(ArrayBase& a) { return static_cast<ArrayT<T, R>&>(a).a; }

/// The stream Tessera's own operations use on a's device.
const Stream& tessera_stream(const ArrayBase& a);
/// Before an operation on a: Tessera's stream waits for a's stream; after it, the reverse.
void before(const ArrayBase& a);
void after(const ArrayBase& a);

/// A new handle for `a`, an array an operation made on `like`'s device (on Tessera's stream).
template <class T, int R>
tessera_array wrap(distributed::Array<T, R> a, const ArrayBase& like) {
  auto obj = std::make_shared<ArrayT<T, R>>();
  obj->a = std::move(a);
  obj->dtype = dtype_of_value(dtype_v<T>), obj->ndim = R, obj->device = like.device;
  obj->memory = like.device.is_cuda() ? TESSERA_MEMORY_DEVICE : TESSERA_MEMORY_HOST;
  return tessera_array{put(Kind::array, obj)};
}

/// Checks that two arrays have the same dtype (DtypeMismatch) and device (DeviceMismatch).
void check_same_kind(const ArrayBase& a, const ArrayBase& b, const char* op);
}  // namespace tessera::capi
