// Layouts of the C API: a global shape of rank 1..4 over a grid.
#include <vector>

#include "handles.hpp"

using namespace tessera;
using namespace tessera::capi;

namespace {

template <int R>
std::shared_ptr<LayoutObj> make_layout(const distributed::ProcessGrid& grid, const int64_t* shape, const int* split,
                                       const int64_t* offsets, const int64_t* halo, const int* periodic) {
  distributed::Index<R> g{}, h{};
  typename distributed::Layout<R>::Split s{};
  std::optional<std::array<bool, R>> p;  // none given: the grid's periodicity
  if (periodic) p.emplace();
  for (int a = 0; a < R; ++a) {
    g[a] = shape[a];
    h[a] = halo ? halo[a] : 0;
    s[a] = split ? split[a] : (a < grid.ndims() ? a : -1);
    if (periodic) (*p)[a] = periodic[a] != 0;
  }
  if (!offsets) return std::make_shared<LayoutObj>(distributed::Layout<R>(grid, g, s, h, p));
  // Validate the split first: it decides how many offsets each axis has.
  distributed::Layout<R> check(grid, g, s, h, p);
  typename distributed::Layout<R>::Offsets o;
  const int64_t* at = offsets;
  for (int a = 0; a < R; ++a) {
    const int parts = s[a] < 0 ? 1 : grid.dims()[s[a]];
    o[a].assign(at, at + parts + 1);
    at += parts + 1;
  }
  return std::make_shared<LayoutObj>(distributed::Layout<R>(grid, g, s, std::move(o), h, p));
}

// Calls f(layout) with the Layout<R> of the object.
template <class F>
void with_layout(const LayoutObj& l, F&& f) {
  switch (l.ndim) {
    case 1: return f(l.get<1>());
    case 2: return f(l.get<2>());
    case 3: return f(l.get<3>());
    case 4: return f(l.get<4>());
  }
}

}  // namespace

extern "C" {

tessera_status tessera_layout_create(tessera_grid grid, int ndim, const int64_t* shape, const int* split,
                                     const int64_t* offsets, const int64_t* halo, const int* periodic,
                                     tessera_layout* out) {
  return guard("tessera_layout_create", [&] {
    need(out, "out");
    const auto& g = get<GridObj>(Kind::grid, grid.id, "grid")->grid;
    need(shape, "shape");
    std::shared_ptr<LayoutObj> l;
    switch (ndim) {
      case 1: l = make_layout<1>(g, shape, split, offsets, halo, periodic); break;
      case 2: l = make_layout<2>(g, shape, split, offsets, halo, periodic); break;
      case 3: l = make_layout<3>(g, shape, split, offsets, halo, periodic); break;
      case 4: l = make_layout<4>(g, shape, split, offsets, halo, periodic); break;
      default: throw InvalidArgument("ndim " + std::to_string(ndim) + " outside 1..4");
    }
    out->id = put(Kind::layout, l);
  });
}

tessera_status tessera_layout_free(tessera_layout l) {
  return guard("tessera_layout_free", [&] { take(Kind::layout, l.id, "layout"); });
}

tessera_status tessera_layout_info(tessera_layout h, int* ndim, int64_t* shape, int64_t* lo, int64_t* hi,
                                   int64_t* padded) {
  return guard("tessera_layout_info", [&] {
    auto l = get_layout(h, "layout");
    if (ndim) *ndim = l->ndim;
    with_layout(*l, [&](const auto& lay) {
      const auto box = lay.local_box();
      const auto pad = lay.padded_shape();
      for (std::size_t a = 0; a < box.lo.size(); ++a) {
        if (shape) shape[a] = lay.global_shape()[a];
        if (lo) lo[a] = box.lo[a];
        if (hi) hi[a] = box.hi[a];
        if (padded) padded[a] = pad[a];
      }
    });
  });
}

tessera_status tessera_layout_sizes(tessera_layout h, int64_t* shard, int64_t* global) {
  return guard("tessera_layout_sizes", [&] {
    auto l = get_layout(h, "layout");
    with_layout(*l, [&](const auto& lay) {
      if (shard) *shard = local::shape_size(lay.padded_shape());
      if (global) *global = lay.global_size();
    });
  });
}

}  // extern "C"
