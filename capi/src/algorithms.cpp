// Algorithms of the C API that make new arrays: sort and argsort, scans, reductions along an axis
// and arg-reductions, matmul, take, histograms and the indices of nonzero elements. Each result is
// a new array handle on the input's device, on the layout the C++ algorithm returns.
#include "handles.hpp"

using namespace tessera;
using namespace tessera::capi;

namespace {

template <class T> constexpr bool is_ordered_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> constexpr bool sortable_v = is_ordered_v<T> || std::is_floating_point_v<T>;

int checked_axis(int axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    throw InvalidArgument("axis " + std::to_string(axis) + " is out of bounds for an array of dimension " +
                          std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

/// f.template operator()<T, R>(x) on a's typed array x, after the work queued on a's stream.
template <class F>
void with_typed(ArrayBase& a, F&& f) {
  dispatch(a.dtype, a.ndim, [&]<class T, int R>() {
    before(a);
    f.template operator()<T, R>(typed<T, R>(a));
  });
}

[[noreturn]] void unsupported(const char* op, tessera_dtype t) {
  throw DtypeMismatch(std::string(op) + " of a " + dtype_name(t) + " array is not supported");
}

}  // namespace

extern "C" {

tessera_status tessera_sort(tessera_array h, int indices, tessera_array* out) {
  return guard("tessera_sort", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) {
      if constexpr (sortable_v<T>) {
        *out = indices ? wrap(distributed::argsort(x), *a) : wrap(distributed::sort(x), *a);
      } else {
        unsupported(indices ? "argsort" : "sort", a->dtype);
      }
    });
  });
}

tessera_status tessera_sort_axis(tessera_array h, int indices, int axis, tessera_array* out) {
  return guard("tessera_sort_axis", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    const int ax = checked_axis(axis, a->ndim);
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) {
      if constexpr (sortable_v<T>) {
        *out = indices ? wrap(distributed::argsort(x, ax), *a) : wrap(distributed::sort(x, ax), *a);
      } else {
        unsupported(indices ? "argsort" : "sort", a->dtype);
      }
    });
  });
}

tessera_status tessera_scan(tessera_array h, int product, int axis, tessera_array* out) {
  return guard("tessera_scan", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    const int ax = checked_axis(axis, a->ndim);
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) {
      *out = wrap(product ? distributed::cumprod(x, ax) : distributed::cumsum(x, ax), *a);
    });
  });
}

tessera_status tessera_reduce_axis(tessera_array h, tessera_reduce_op op, int axis, tessera_array* out) {
  return guard("tessera_reduce_axis", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    const int ax = checked_axis(axis, a->ndim);
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) {
      switch (op) {
        case TESSERA_SUM: *out = wrap(distributed::sum(x, ax), *a); return;
        case TESSERA_PROD: *out = wrap(distributed::prod(x, ax), *a); return;
        case TESSERA_MIN:
        case TESSERA_MAX:
        case TESSERA_ARGMIN:
        case TESSERA_ARGMAX:
          if constexpr (is_complex_v<T>) {
            throw DtypeMismatch("min/max/argmin/argmax of a complex array (no ordering)");
          } else {
            if (op == TESSERA_MIN) *out = wrap(distributed::min(x, ax), *a);
            if (op == TESSERA_MAX) *out = wrap(distributed::max(x, ax), *a);
            if (op == TESSERA_ARGMIN) *out = wrap(distributed::argmin(x, ax), *a);
            if (op == TESSERA_ARGMAX) *out = wrap(distributed::argmax(x, ax), *a);
          }
          return;
        default: break;
      }
      throw InvalidArgument("op " + std::to_string(static_cast<int>(op)) +
                            " is none of TESSERA_SUM, PROD, MIN, MAX, ARGMIN, ARGMAX");
    });
  });
}

tessera_status tessera_argreduce(tessera_array h, int is_max, int64_t* index) {
  return guard("tessera_argreduce", [&] {
    need(index, "index");
    auto a = get_array(h, "a");
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) {
      if constexpr (is_complex_v<T>)
        throw DtypeMismatch("argmin/argmax of a complex array (no ordering)");
      else
        *index = is_max ? distributed::argmax(x) : distributed::argmin(x);
    });
  });
}

tessera_status tessera_matmul(tessera_array ha, tessera_array hb, tessera_array* out) {
  return guard("tessera_matmul", [&] {
    need(out, "out");
    auto a = get_array(ha, "a");
    auto b = get_array(hb, "b");
    check_same_kind(*a, *b, "tessera_matmul");
    if (a->ndim != b->ndim || (a->ndim != 2 && a->ndim != 3))
      throw ShapeMismatch("tessera_matmul takes two 2-D (or two 3-D, batched) arrays, not " + std::to_string(a->ndim) +
                          "-D and " + std::to_string(b->ndim) + "-D");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      if constexpr ((std::is_floating_point_v<T> || is_complex_v<T>) && (R == 2 || R == 3)) {
        before(*a);
        before(*b);
        *out = wrap(distributed::matmul(typed<T, R>(*a), typed<T, R>(*b)), *a);
      } else {
        unsupported("matmul", a->dtype);
      }
    });
  });
}

tessera_status tessera_take(tessera_array h, tessera_array hidx, tessera_array* out) {
  return guard("tessera_take", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    auto idx = get_array(hidx, "idx");
    if (idx->dtype != TESSERA_I64 || idx->ndim != 1)
      throw DtypeMismatch("tessera_take: indices must be a 1-D i64 array, not " + std::to_string(idx->ndim) + "-D " +
                          dtype_name(idx->dtype));
    if (idx->device != a->device) throw DeviceMismatch("tessera_take: the array and its indices on different devices");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      before(*a);
      before(*idx);
      *out = wrap(distributed::take(typed<T, R>(*a), typed<std::int64_t, 1>(*idx)), *a);
    });
  });
}

tessera_status tessera_put(tessera_array h, tessera_array hidx, tessera_array hv) {
  return guard("tessera_put", [&] {
    auto a = get_array(h, "a");
    auto idx = get_array(hidx, "idx");
    auto v = get_array(hv, "v");
    if (idx->dtype != TESSERA_I64 || idx->ndim != 1)
      throw DtypeMismatch("tessera_put: indices must be a 1-D i64 array, not " + std::to_string(idx->ndim) + "-D " +
                          dtype_name(idx->dtype));
    if (v->dtype != a->dtype || v->ndim != 1)
      throw DtypeMismatch("tessera_put: values must be a 1-D " + dtype_name(a->dtype) + " array, not " +
                          std::to_string(v->ndim) + "-D " + dtype_name(v->dtype));
    if (idx->device != a->device || v->device != a->device)
      throw DeviceMismatch("tessera_put: the array, its indices and values on different devices");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      before(*a);
      before(*idx);
      before(*v);
      distributed::put(typed<T, R>(*a), typed<std::int64_t, 1>(*idx), typed<T, 1>(*v));
      after(*a);
    });
  });
}

tessera_status tessera_compress(tessera_array hmask, tessera_array h, tessera_array* out) {
  return guard("tessera_compress", [&] {
    need(out, "out");
    auto mask = get_array(hmask, "mask");
    auto a = get_array(h, "a");
    if (mask->dtype != TESSERA_BOOL || mask->ndim != a->ndim)
      throw DtypeMismatch("tessera_compress: the mask must be a bool array of a's rank, not " +
                          std::to_string(mask->ndim) + "-D " + dtype_name(mask->dtype));
    if (mask->device != a->device) throw DeviceMismatch("tessera_compress: the mask and the array on different devices");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      before(*mask);
      before(*a);
      *out = wrap(distributed::compress(typed<bool, R>(*mask), typed<T, R>(*a)), *a);
    });
  });
}

tessera_status tessera_ravel(tessera_array h, tessera_array* out) {
  return guard("tessera_ravel", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) { *out = wrap(distributed::ravel(x), *a); });
  });
}

tessera_status tessera_histogram(tessera_array h, int64_t bins, double lo, double hi, int64_t* counts) {
  return guard("tessera_histogram", [&] {
    need(counts, "counts");
    auto a = get_array(h, "a");
    if (bins < 1) throw InvalidArgument("bins " + std::to_string(bins) + " < 1");
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) {
      if constexpr (sortable_v<T>) {
        const auto c = distributed::histogram(x, bins, lo, hi);
        local::Array<std::int64_t, 1> host({bins}, Device::host());
        local::copy(host, c);
        std::copy(host.data(), host.data() + bins, counts);
      } else {
        unsupported("histogram", a->dtype);
      }
    });
  });
}

tessera_status tessera_flatnonzero(tessera_array h, tessera_array* out) {
  return guard("tessera_flatnonzero", [&] {
    need(out, "out");
    auto a = get_array(h, "a");
    with_typed(*a, [&]<class T, int R>(const distributed::Array<T, R>& x) { *out = wrap(distributed::flatnonzero(x), *a); });
  });
}

}  // extern "C"
