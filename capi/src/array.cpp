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

// The box start[d], start[d]+step[d], ... < stop[d] of a's block along every axis, in the block's
// indices; a box may reach into the halos (-halo <= start <= stop <= extent + halo). Null: the block.
template <class T, int R>
local::Array<T, R> box_of(const distributed::Array<T, R>& a, const int64_t* start, const int64_t* stop,
                          const int64_t* step) {
  if (!start && !stop && !step) return a.interior();
  need(start, "start"), need(stop, "stop"), need(step, "step");
  local::Array<T, R> v = a.local();
  const auto& halo = a.layout().halo();
  for (int d = 0; d < R; ++d) {
    const int64_t h = halo[d], n = v.shape(d) - 2 * h;
    if (step[d] <= 0 || start[d] < -h || stop[d] < start[d] || stop[d] > n + h)
      throw InvalidArgument("box " + std::to_string(start[d]) + ":" + std::to_string(stop[d]) + ":" +
                                std::to_string(step[d]) + " of axis " + std::to_string(d) + " is outside the block's " +
                                std::to_string(n) + " elements and halo " + std::to_string(h) + " (or step <= 0)",
                            a.device());
    v = v.slice(d, start[d] + h, stop[d] + h, step[d]);
  }
  return v;
}

// Copies a box of h's interior to (to_host) or from a contiguous row-major host buffer.
tessera_status copy_with_host(const char* op, tessera_array h, const int64_t* start, const int64_t* stop,
                              const int64_t* step, void* host, int64_t elements, bool to_host) {
  return guard(op, [&] {
    auto a = get_array(h, "a");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      const auto in = box_of(typed<T, R>(*a), start, stop, step);
      check_count(elements, in.size(), "host buffer", a.get());
      if (in.size() == 0) return;
      need(host, "host");
      before(*a);
      const auto buffer = local::Array<T, R>::view(static_cast<T*>(host), in.shape(), Device::host());
      if (to_host) local::copy(buffer, in);
      else local::copy(in, buffer);
      tessera_stream(*a).synchronize();  // the host buffer may be read or reused at once
      if (!to_host) after(*a);
    });
  });
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
  return copy_with_host("tessera_array_read", h, nullptr, nullptr, nullptr, host, elements, true);
}

tessera_status tessera_array_write(tessera_array h, const void* host, int64_t elements) {
  return copy_with_host("tessera_array_write", h, nullptr, nullptr, nullptr, const_cast<void*>(host), elements, false);
}

tessera_status tessera_array_read_box(tessera_array h, const int64_t* start, const int64_t* stop, const int64_t* step,
                                      void* host, int64_t elements) {
  return copy_with_host("tessera_array_read_box", h, start, stop, step, host, elements, true);
}

tessera_status tessera_array_write_box(tessera_array h, const int64_t* start, const int64_t* stop, const int64_t* step,
                                       const void* host, int64_t elements) {
  return copy_with_host("tessera_array_write_box", h, start, stop, step, const_cast<void*>(host), elements, false);
}

tessera_status tessera_array_copy_box(tessera_array dst, tessera_array src, const int64_t* start, const int64_t* stop,
                                      const int64_t* step) {
  return guard("tessera_array_copy_box", [&] {
    auto d = get_array(dst, "dst");
    auto s = get_array(src, "src");
    check_same_kind(*d, *s, "tessera_array_copy_box");
    if (d->ndim != s->ndim)
      throw ShapeMismatch("tessera_array_copy_box: dst is " + std::to_string(d->ndim) + "-D, src " +
                              std::to_string(s->ndim) + "-D",
                          d->device);
    dispatch(d->dtype, d->ndim, [&]<class T, int R>() {
      const auto from = box_of(typed<T, R>(*s), start, stop, step);
      before(*s), before(*d);
      local::copy(typed<T, R>(*d).interior(), from);
      after(*d), after(*s);
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
