// Arrays of the C API: allocated or adopted shards, their data, and halo exchange.
#include <cstdint>

#include "handles.hpp"

using namespace tessera;
using namespace tessera::capi;

namespace {

struct HaloBase : Object {
  std::shared_ptr<ArrayBase> arr;
  virtual void end() = 0;
};
template <class T, int R>
struct HaloT : HaloBase {
  // Behind a pointer: HaloExchange's destructor may throw; ours ends a forgotten exchange quietly.
  std::unique_ptr<distributed::HaloExchange<T, R>> h;
  void end() override { h->end(); }
  ~HaloT() override {
    try {
      if (h) h->end();
    } catch (...) {
    }
  }
};

void check_count(int64_t elements, int64_t needed, const char* what, const ArrayBase* a = nullptr) {
  if (elements < needed)
    throw ShapeMismatch(std::string(what) + " holds " + std::to_string(elements) + " elements, needs " +
                            std::to_string(needed) + (a ? " (" + std::to_string(a->ndim) + "-D " + dtype_name(a->dtype) + ")" : ""),
                        a ? a->device : Device::host());
}

}  // namespace

std::shared_ptr<ArrayBase> tessera::capi::adopt_buffer(const LayoutObj& l, tessera_dtype dtype, void* data,
                                                       int64_t elements, tessera_memory kind, void* stream) {
  const Device d = memory_device(kind);
  if (elements < 0) throw InvalidArgument("elements " + std::to_string(elements) + " is negative");
  std::shared_ptr<ArrayBase> obj = dispatch(dtype, l.ndim, [&]<class T, int R>() -> std::shared_ptr<ArrayBase> {
    const auto& lay = l.get<R>();
    const auto needed = local::shape_size(lay.padded_shape());
    check_count(elements, needed, ("buffer for shard " + local::shape_str(lay.padded_shape())).c_str());
    if (needed > 0) need(data, "data");
    if (reinterpret_cast<std::uintptr_t>(data) % alignof(T) != 0)
      throw InvalidArgument("data is not aligned to " + std::to_string(alignof(T)) + " bytes for " + dtype_name(dtype));
    auto a = std::make_shared<ArrayT<T, R>>();
    if (d.is_cuda()) {
      a->stream = std::make_unique<Stream>(Stream::borrow(d, stream));
      a->a = distributed::Array<T, R>::adopt(static_cast<T*>(data), lay, d, *a->stream);
    } else {
      a->a = distributed::Array<T, R>::adopt(static_cast<T*>(data), lay, d);
    }
    return a;
  });
  obj->dtype = dtype, obj->ndim = l.ndim, obj->device = d, obj->memory = kind;
  return obj;
}

extern "C" {

tessera_status tessera_array_create(tessera_layout lh, tessera_dtype dtype, tessera_array* out) {
  return guard("tessera_array_create", [&] {
    need(out, "out");
    auto l = get_layout(lh, "layout");
    const Device d = runtime_device();
    std::shared_ptr<ArrayBase> obj = dispatch(dtype, l->ndim, [&]<class T, int R>() -> std::shared_ptr<ArrayBase> {
      auto a = std::make_shared<ArrayT<T, R>>();
      a->a = distributed::Array<T, R>(l->get<R>(), d);
      local::fill(a->a.local(), T(0));
      return a;
    });
    obj->dtype = dtype, obj->ndim = l->ndim, obj->device = d;
    obj->memory = d.is_cuda() ? TESSERA_MEMORY_DEVICE : TESSERA_MEMORY_HOST;
    out->id = put(Kind::array, obj);
  });
}

tessera_status tessera_array_adopt(tessera_layout lh, tessera_dtype dtype, void* data, int64_t elements,
                                   tessera_memory kind, void* stream, tessera_array* out) {
  return guard("tessera_array_adopt", [&] {
    need(out, "out");
    out->id = put(Kind::array, adopt_buffer(*get_layout(lh, "layout"), dtype, data, elements, kind, stream));
  });
}

tessera_status tessera_array_free(tessera_array h) {
  return guard("tessera_array_free", [&] {
    if (h.id == 0) return;
    if (get_array(h, "a")->pending_halos > 0)
      throw Busy("array has a pending halo exchange: call tessera_halo_exchange_end first");
    take(Kind::array, h.id, "a");
  });
}

tessera_status tessera_array_info(tessera_array h, void** data, tessera_dtype* dtype, tessera_memory* kind) {
  return guard("tessera_array_info", [&] {
    auto a = get_array(h, "a");
    if (dtype) *dtype = a->dtype;
    if (kind) *kind = a->memory;
    if (data) *data = dispatch(a->dtype, a->ndim, [&]<class T, int R>() -> void* { return typed<T, R>(*a).local().data(); });
  });
}

tessera_status tessera_array_layout(tessera_array h, tessera_layout* out) {
  return guard("tessera_array_layout", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    out->id = dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      return put(Kind::layout, std::make_shared<LayoutObj>(typed<T, R>(*a).layout()));
    });
  });
}

tessera_status tessera_array_read(tessera_array h, void* host, int64_t elements) {
  return guard("tessera_array_read", [&] {
    auto a = get_array(h, "a");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      const auto in = typed<T, R>(*a).interior();
      check_count(elements, in.size(), "host buffer", a.get());
      if (in.size() == 0) return;
      need(host, "host");
      before(*a);
      local::copy(local::Array<T, R>::view(static_cast<T*>(host), in.shape(), Device::host()), in);
      tessera_stream(*a).synchronize();
    });
  });
}

tessera_status tessera_array_write(tessera_array h, const void* host, int64_t elements) {
  return guard("tessera_array_write", [&] {
    auto a = get_array(h, "a");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      const auto in = typed<T, R>(*a).interior();
      check_count(elements, in.size(), "host buffer", a.get());
      if (in.size() == 0) return;
      need(host, "host");
      before(*a);
      local::copy(in, local::Array<T, R>::view(const_cast<T*>(static_cast<const T*>(host)), in.shape(), Device::host()));
      tessera_stream(*a).synchronize();  // the host buffer may be reused at once
    });
  });
}

tessera_status tessera_array_synchronize(tessera_array h) {
  return guard("tessera_array_synchronize", [&] {
    auto a = get_array(h, "a");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() { typed<T, R>(*a).stream().synchronize(); });
  });
}

tessera_status tessera_halo_exchange(tessera_array h) {
  return guard("tessera_halo_exchange", [&] {
    auto a = get_array(h, "a");
    if (a->pending_halos > 0) throw Busy("array has a pending halo exchange");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() { distributed::exchange_halos(typed<T, R>(*a)); });
  });
}

tessera_status tessera_halo_exchange_begin(tessera_array h, tessera_halo* out) {
  return guard("tessera_halo_exchange_begin", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    if (a->pending_halos > 0) throw Busy("array has a pending halo exchange");
    std::shared_ptr<HaloBase> x = dispatch(a->dtype, a->ndim, [&]<class T, int R>() -> std::shared_ptr<HaloBase> {
      auto e = std::make_shared<HaloT<T, R>>();
      e->h = std::make_unique<distributed::HaloExchange<T, R>>(distributed::exchange_halos_begin(typed<T, R>(*a)));
      return e;
    });
    x->arr = a;
    out->id = put(Kind::halo, x);
    ++a->pending_halos;
  });
}

tessera_status tessera_halo_exchange_end(tessera_halo h) {
  return guard("tessera_halo_exchange_end", [&] {
    auto x = std::static_pointer_cast<HaloBase>(take(Kind::halo, h.id, "h"));
    if (!x) throw InvalidHandle("h (a tessera_halo) is a null handle");
    --x->arr->pending_halos;
    x->end();
  });
}

}  // extern "C"
