// DLPack export and import of shards (tessera/tessera_dlpack.h).
#include "tessera/tessera_dlpack.h"

#include <vector>

#include "handles.hpp"

using namespace tessera;
using namespace tessera::capi;

namespace {

// What an exported tensor owns: the array object (so the shard outlives tessera_array_free) and
// the shape/stride storage the DLTensor points at.
struct Export {
  std::shared_ptr<ArrayBase> keep;
  std::vector<int64_t> shape, strides;
  DLManagedTensor t{};
};

void delete_export(DLManagedTensor* self) {
  auto* e = static_cast<Export*>(self->manager_ctx);
  delete e;
  live_exports(-1);
}

// DLPack's code for bool (kDLBool since DLPack 0.8; Debian's header predates it).
constexpr std::uint8_t kDLBoolCode = 6;

DLDataType dl_dtype(tessera_dtype t) {
  switch (t) {
    case TESSERA_F32: return {kDLFloat, 32, 1};
    case TESSERA_F64: return {kDLFloat, 64, 1};
    case TESSERA_C64: return {kDLComplex, 64, 1};
    case TESSERA_C128: return {kDLComplex, 128, 1};
    case TESSERA_I32: return {kDLInt, 32, 1};
    case TESSERA_I64: return {kDLInt, 64, 1};
    case TESSERA_BOOL: return {kDLBoolCode, 8, 1};
    case TESSERA_DTYPE_RANGE_: break;  // not a value
  }
  throw InvalidArgument("not a tessera_dtype");
}

tessera_dtype from_dl(DLDataType t) {
  for (tessera_dtype d : {TESSERA_F32, TESSERA_F64, TESSERA_C64, TESSERA_C128, TESSERA_I32, TESSERA_I64, TESSERA_BOOL}) {
    const DLDataType x = dl_dtype(d);
    if (x.code == t.code && x.bits == t.bits && t.lanes == 1) return d;
  }
  throw DtypeMismatch("DLPack dtype (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " +
                      std::to_string(t.lanes) + " lanes) is none of f32, f64, c64, c128, i32, i64, bool");
}

}  // namespace

extern "C" {

tessera_status tessera_array_to_dlpack(tessera_array h, int with_halos, DLManagedTensor** out) {
  return guard("tessera_array_to_dlpack", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    auto e = std::make_unique<Export>();
    e->keep = a;
    void* data = dispatch(a->dtype, a->ndim, [&]<class T, int R>() -> void* {
      const auto& arr = typed<T, R>(*a);
      const auto v = with_halos ? arr.local() : arr.interior();
      e->shape.assign(v.shape().begin(), v.shape().end());
      e->strides.assign(v.strides().begin(), v.strides().end());
      return v.data();
    });
    DLTensor& t = e->t.dl_tensor;
    t.data = data;
    t.device = a->device.is_cuda() ? DLDevice{kDLCUDA, a->device.index()} : DLDevice{kDLCPU, 0};
    t.ndim = a->ndim;
    t.dtype = dl_dtype(a->dtype);
    t.shape = e->shape.data();
    t.strides = e->strides.data();
    t.byte_offset = 0;
    e->t.manager_ctx = e.get();
    e->t.deleter = delete_export;
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() { typed<T, R>(*a).stream().synchronize(); });  // data ready
    *out = &e.release()->t;
    live_exports(+1);
  });
}

tessera_status tessera_array_from_dlpack(tessera_layout lh, DLManagedTensor* tensor, void* stream,
                                         tessera_array* out) {
  return guard("tessera_array_from_dlpack", [&] {
    need(out, "out");
    auto l = get_layout(lh, "layout");
    need(tensor, "tensor");
    const DLTensor& t = tensor->dl_tensor;
    const tessera_dtype dtype = from_dl(t.dtype);
    if (t.ndim != l->ndim)
      throw ShapeMismatch("DLPack tensor is " + std::to_string(t.ndim) + "-D, the layout " + std::to_string(l->ndim) + "-D");
    tessera_memory kind;
    if (t.device.device_type == kDLCPU) {
      kind = TESSERA_MEMORY_HOST;
    } else if (t.device.device_type == kDLCUDA) {
      kind = TESSERA_MEMORY_DEVICE;
      if (memory_device(kind).index() != t.device.device_id)
        throw DeviceMismatch("DLPack tensor on cuda:" + std::to_string(t.device.device_id) + ", the runtime on " +
                             memory_device(kind).str());
    } else {
      throw DeviceMismatch("DLPack device type " + std::to_string(t.device.device_type) + " is neither CPU nor CUDA");
    }
    std::vector<int64_t> padded(l->ndim);
    tessera_layout_info(lh, nullptr, nullptr, nullptr, nullptr, padded.data());
    int64_t n = 1, stride = 1;
    for (int a = l->ndim - 1; a >= 0; --a) {
      if (t.shape[a] != padded[a])
        throw ShapeMismatch("DLPack tensor shape differs from the padded shard shape on axis " + std::to_string(a) +
                            ": " + std::to_string(t.shape[a]) + " vs " + std::to_string(padded[a]));
      if (t.strides && t.shape[a] != 1 && t.strides[a] != stride)
        throw InvalidArgument("DLPack tensor is not compact row-major (axis " + std::to_string(a) + " stride " +
                              std::to_string(t.strides[a]) + ", expected " + std::to_string(stride) + ")");
      stride *= t.shape[a];
      n *= t.shape[a];
    }
    auto obj = adopt_buffer(*l, dtype, static_cast<char*>(t.data) + t.byte_offset, n, kind, stream);
    obj->owner = std::shared_ptr<void>(tensor, [](void* p) {
      auto* m = static_cast<DLManagedTensor*>(p);
      if (m->deleter) m->deleter(m);
    });
    out->id = put(Kind::array, obj);
  });
}

}  // extern "C"
