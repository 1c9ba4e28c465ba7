// Moving data and reductions in the C API: redistribute, gather, scatter, reduce.
#include <cmath>

#include "handles.hpp"

using namespace tessera;
using namespace tessera::capi;

namespace {

// Buffer checks that only some ranks can make (root's buffer) are agreed over the group before
// the collective, so that a bad argument is an error on every rank instead of a hang.
void agree(const comm::ProcessGroup& g, const std::string& local_error) { g.agree<ShapeMismatch>(local_error); }

template <class T, int R>
std::string check_root_buffer(const distributed::Array<T, R>& a, int root, const void* buf, int64_t elements) {
  const auto& g = a.layout().grid().group();
  if (root < 0 || root >= g.size())
    throw InvalidArgument("root " + std::to_string(root) + " outside 0.." + std::to_string(g.size() - 1));
  if (g.rank() != root) return {};
  if (elements < a.global_size())
    return "buffer on root holds " + std::to_string(elements) + " elements, the global array " +
           local::shape_str(a.global_shape()) + " has " + std::to_string(a.global_size());
  if (!buf && a.global_size() > 0) return "buf is NULL on root";
  return {};
}

template <class T, int R>
void reduce(const distributed::Array<T, R>& a, tessera_reduce_op op, void* result) {
  switch (op) {
    case TESSERA_SUM: *static_cast<local::sum_t<T>*>(result) = distributed::sum(a); return;
    case TESSERA_PROD: *static_cast<local::sum_t<T>*>(result) = distributed::prod(a); return;
    case TESSERA_MIN:
    case TESSERA_MAX:
      if constexpr (is_complex_v<T>) {
        throw DtypeMismatch("min/max of a complex array (no ordering)");
      } else {
        *static_cast<T*>(result) = op == TESSERA_MIN ? distributed::min(a) : distributed::max(a);
      }
      return;
    case TESSERA_NORM2: {
      const local::real_t<T> s = distributed::sum_squares(a);
      if constexpr (std::is_integral_v<decltype(s)>)
        *static_cast<double*>(result) = std::sqrt(static_cast<double>(s));
      else
        *static_cast<local::real_t<T>*>(result) = std::sqrt(s);
      return;
    }
    case TESSERA_REDUCE_RANGE_: break;  // not a value
  }
  throw InvalidArgument("op " + std::to_string(static_cast<int>(op)) + " is not a tessera_reduce_op");
}

}  // namespace

extern "C" {

tessera_status tessera_redistribute(tessera_array src, tessera_array dst) {
  return guard("tessera_redistribute", [&] {
    auto s = get_array(src, "src");
    auto d = get_array(dst, "dst");
    check_same_kind(*s, *d, "tessera_redistribute");
    // Arrays on different devices (a caller's host buffer, an allocated device array): the data
    // is redistributed on the source's device, then copied across into the destination.
    dispatch(s->dtype, s->ndim, [&]<class T, int R>() {
      auto& to = typed<T, R>(*d);
      before(*s);
      before(*d);
      auto r = distributed::redistribute(typed<T, R>(*s), to.layout());
      local::copy(to.interior(), r.interior());
      after(*d);
    });
  });
}

tessera_status tessera_gather(tessera_array h, int root, void* buf, int64_t elements, tessera_memory kind) {
  return guard("tessera_gather", [&] {
    auto a = get_array(h, "a");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      const auto& arr = typed<T, R>(*a);
      const Device bd = memory_device(kind);
      agree(arr.layout().grid().group(), check_root_buffer(arr, root, buf, elements));
      before(*a);
      auto g = distributed::gather(arr, root);
      if (arr.layout().grid().group().rank() != root || g.size() == 0) return;
      local::copy(local::Array<T, R>::view(static_cast<T*>(buf), arr.global_shape(), bd), g);
      Stream::default_for(bd.is_cuda() ? bd : a->device).synchronize();
    });
  });
}

tessera_status tessera_scatter(tessera_array h, int root, const void* buf, int64_t elements, tessera_memory kind) {
  return guard("tessera_scatter", [&] {
    auto a = get_array(h, "a");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      auto& arr = typed<T, R>(*a);
      const Device bd = memory_device(kind);
      agree(arr.layout().grid().group(), check_root_buffer(arr, root, buf, elements));
      local::Array<T, R> global;
      if (arr.layout().grid().group().rank() == root)
        global = local::Array<T, R>::view(const_cast<T*>(static_cast<const T*>(buf)), arr.global_shape(), bd);
      before(*a);
      auto r = distributed::scatter(root, global, arr.layout(), a->device);
      local::copy(arr.interior(), r.interior());
      after(*a);
    });
  });
}

tessera_status tessera_reduce(tessera_array h, tessera_reduce_op op, void* result) {
  return guard("tessera_reduce", [&] {
    auto a = get_array(h, "a");
    need(result, "result");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() { reduce(typed<T, R>(*a), op, result); });
  });
}

}  // extern "C"
