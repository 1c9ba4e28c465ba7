// matmul (SUMMA), batched matmul and matvec of linalg.hpp over the local GEMM of detail/gemm.hpp.
#include "tessera/distributed/linalg.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "../detail/algo_common.hpp"
#include "../detail/gemm.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/rule.hpp"
#include "tessera/distributed/tune.hpp"
#include "tessera/local/dtype.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/context_cache.hpp"

namespace tessera::distributed {
namespace {
using detail::GemmArgs;

using detail::grid_for;

// a on the blocks of `want` (halos allowed: the GEMMs skip them through the leading dimension).
template <class T, int R>
Array<T, R> on_layout(const Array<T, R>& a, const Layout<R>& want) {
  return a.layout().same_blocks(want) ? a : redistribute(a, want);
}

const char* op_str(Op op) { return op == Op::none ? "" : op == Op::trans ? "^T" : "^H"; }

template <class S>
std::string shapes(const S& a, Op oa, const S& b, Op ob) {
  return local::shape_str(a) + op_str(oa) + " @ " + local::shape_str(b) + op_str(ob);
}

void check_devices(const Device& a, const Device& b, const char* fn) {
  if (a != b) throw DeviceMismatch(std::string("device mismatch in distributed::") + fn + ": " + a.str() + " vs " + b.str(), a);
}

// The SUMMA steps: k cut at every block edge of op(a) (over grid columns) and op(b) (over grid
// rows), then into pieces of at most `panel`.
struct Panel {
  index_t x, w;  // global k range [x, x + w)
  int ca, rb;    // the grid column holding it in a, the grid row holding it in b
};
std::vector<Panel> panels_of(const std::vector<index_t>& oa, const std::vector<index_t>& ob, index_t panel) {
  std::vector<index_t> cuts(oa);
  cuts.insert(cuts.end(), ob.begin(), ob.end());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  auto block = [](const std::vector<index_t>& o, index_t x) {
    return static_cast<int>(std::upper_bound(o.begin(), o.end(), x) - o.begin()) - 1;
  };
  std::vector<Panel> out;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const index_t len = cuts[i + 1] - cuts[i];
    const index_t w = panel > 0 ? panel : rule::summa_panel(len);
    for (index_t x = cuts[i]; x < cuts[i + 1]; x += w)
      out.push_back({x, std::min(w, cuts[i + 1] - x), block(oa, x), block(ob, x)});
  }
  return out;
}

template <class T>
index_t ld_of(const local::Array<T, 2>& v) { return std::max<index_t>(1, v.strides()[0]); }
}  // namespace

namespace detail {
namespace {
struct GridTag;
// By the group's communicator handle and the axis count (a grid keeps its group alive).
using GridCache = ContextCache<GridTag, std::pair<MPI_Comm, int>, ProcessGrid>;
}  // namespace
ProcessGrid grid_for(const ProcessGrid& g, int ndims) {
  if (g.ndims() == ndims) return g;
  return *GridCache::current().get({g.group().mpi_comm(), ndims}, [&] {
    return std::make_shared<ProcessGrid>(ProcessGrid::balanced(g.group(), ndims));  // collective
  });
}
}  // namespace detail

std::string candidate_name(const MatmulOptions& o) {
  std::string s = o.grid.size() == 2 ? std::to_string(o.grid[0]) + "x" + std::to_string(o.grid[1]) : std::string("grid");
  return s + "/" + (o.panel > 0 ? std::to_string(o.panel) : std::string("auto"));
}
MatmulOptions matmul_candidate(const std::string& name) {
  const auto bad = [&] { return InvalidArgument("matmul: '" + name + "' is not a candidate name (RxC/panel)"); };
  const auto bar = name.find('/');
  if (bar == std::string::npos) throw bad();
  MatmulOptions o;
  o.tune = Tune::off;
  const std::string g = name.substr(0, bar), p = name.substr(bar + 1);
  if (g != "grid") {
    int r = 0, c = 0;
    char tail = 0;
    if (std::sscanf(g.c_str(), "%dx%d%c", &r, &c, &tail) != 2 || r < 1 || c < 1) throw bad();
    o.grid = {r, c};
  }
  if (p != "auto") {
    char* end = nullptr;
    const long long w = std::strtoll(p.c_str(), &end, 10);
    if (p.empty() || *end || w < 1) throw bad();
    o.panel = w;
  }
  return o;
}

namespace {
// The options a product runs with: `opt` where tuning is off, else the tuner's SUMMA grid (where
// a's grid is not 2-D and none is given) and panel width (where 0), measured on a and b.
template <class T>
MatmulOptions tuned(const Array<T, 2>& a, const Array<T, 2>& b, Op op_a, Op op_b, MatmulOptions opt) {
  const Tune mode = opt.tune.value_or(settings().tune);
  opt.tune = Tune::off;
  const auto& g = a.layout().grid();
  const int P = g.size();
  const bool free_grid = opt.grid.empty() && g.ndims() != 2;
  const bool free_panel = opt.panel == 0;
  if (mode == Tune::off || P < 2 || (!free_grid && !free_panel)) return opt;
  const bool ta = op_a != Op::none, tb = op_b != Op::none;
  const index_t m = a.global_shape()[ta], k = a.global_shape()[!ta], n = b.global_shape()[!tb];
  MatmulOptions rule = opt;
  if (rule.grid.empty()) rule.grid = g.ndims() == 2 ? g.dims() : rule::summa_grid(P);
  std::string fixed = a.layout().str() + op_str(op_a) + " @ " + b.layout().str() + op_str(op_b);
  if (!free_panel) fixed += ", panel " + std::to_string(opt.panel);
  if (!opt.grid.empty()) fixed += ", grid " + candidate_name(opt);
  const auto key = tune::key_for(g.group(), a.device(), "matmul", {m, k, n}, dtype_name(dtype_v<T>), fixed);
  std::vector<MatmulOptions> cands{rule};
  if (free_grid)
    for (int r = 1; r <= P && cands.size() < 4; ++r)
      if (P % r == 0 && std::vector<int>{r, P / r} != rule.grid) {
        MatmulOptions c = rule;
        c.grid = {r, P / r};
        cands.push_back(c);
      }
  if (free_panel) {
    // k is cut at a's and b's block edges (over grid columns and rows): about k / the larger extent
    // per cut, whose min(1024, .) is the rule's panel; the candidates are narrower.
    const index_t g = std::max(rule.grid[0], rule.grid[1]);
    const index_t kb = (k + g - 1) / g;
    for (index_t w : {rule::summa_panel(kb) / 4, rule::summa_panel(kb) / 2})
      if (w >= 16) {
        MatmulOptions c = rule;
        c.panel = w;
        cands.push_back(c);
      }
  }
  std::vector<std::string> names;
  for (const auto& c : cands) names.push_back(candidate_name(c));
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const auto report = tune::choose(g.group(), mode, key, names, [&] {
    std::vector<tune::Candidate> v;
    for (const auto& name : names)
      v.push_back({name, [&, name] {
                     (void)matmul(a, b, op_a, op_b, matmul_candidate(name));
                     Stream::default_for(a.device()).synchronize();
                   }});
    return v;
  });
  return matmul_candidate(report.choice());
}
}  // namespace

template <class T>
Array<T, 2> matmul(const Array<T, 2>& a, const Array<T, 2>& b, Op op_a, Op op_b, const MatmulOptions& options) {
  const Device d = a.device();
  check_devices(d, b.device(), "matmul");
  const auto agreed = check_call<T, 2>("matmul", a.layout(), d, "b", b.layout(), "op_a", op_a, "op_b", op_b,
                                       "panel", options.panel);
  const bool ta = op_a != Op::none, tb = op_b != Op::none;
  const auto& as = a.global_shape();
  const auto& bs = b.global_shape();
  const index_t m = as[ta], k = as[!ta], n = bs[!tb];
  if (k != bs[tb])
    throw ShapeMismatch("shape mismatch in distributed::matmul: " + shapes(as, op_a, bs, op_b), d);
  if (options.panel < 0) throw InvalidArgument("distributed::matmul: panel " + std::to_string(options.panel) + " < 0", d);
  if (!options.grid.empty() && (options.grid.size() != 2 || options.grid[0] < 1 || options.grid[1] < 1 ||
                                options.grid[0] * options.grid[1] != a.layout().grid().size()))
    throw InvalidArgument("distributed::matmul: grid " + candidate_name(options) + " is not a 2-D grid of " +
                              std::to_string(a.layout().grid().size()) + " ranks",
                          d);
  if (a.layout().grid().size() != b.layout().grid().size())
    throw LayoutMismatch("distributed::matmul: operands on " + a.layout().grid().str() + " and " + b.layout().grid().str());
  const Stream& s = Stream::default_for(d);
  if (a.layout().grid().size() == 1) {  // the whole product on this rank: one GEMM on the shards, any layout
    Array<T, 2> C(Layout<2>::block(a.layout().grid(), {m, n}), d);
    s.wait_for(a.stream());
    s.wait_for(b.stream());
    const auto Ai = a.interior(), Bi = b.interior();
    const auto Cl = C.local();
    if (m > 0 && n > 0 && k == 0) local::fill(Cl, T(0));
    if (m > 0 && n > 0 && k > 0)
      detail::gemm_kernel(GemmArgs{op_a, op_b, m, n, k, ld_of(Ai), ld_of(Bi), n}, Ai.data(), Bi.data(), Cl.data(), s);
    a.stream().wait_for(s);
    b.stream().wait_for(s);
    return C;
  }
  const MatmulOptions opt = tuned(a, b, op_a, op_b, options);
  const ProcessGrid g = a.layout().grid().ndims() == 2 || opt.grid.empty() ? grid_for(a.layout().grid(), 2)
                        : opt.grid == rule::summa_grid(a.layout().grid().size())
                            ? grid_for(a.layout().grid(), 2)
                            : ProcessGrid(a.layout().grid().group(), opt.grid);
  const Layout<2> la = ta ? Layout<2>(g, {k, m}, {1, 0}) : Layout<2>(g, {m, k}, {0, 1});
  const Layout<2> lb = tb ? Layout<2>(g, {n, k}, {1, 0}) : Layout<2>(g, {k, n}, {0, 1});
  const Array<T, 2> A = on_layout(a, la), B = on_layout(b, lb);
  Array<T, 2> C(Layout<2>(g, {m, n}, {0, 1}), d);
  s.wait_for(A.stream());
  s.wait_for(B.stream());
  const auto Ai = A.interior(), Bi = B.interior();
  const auto Cl = C.local();
  const index_t ml = Cl.shape(0), nl = Cl.shape(1), lda = ld_of(Ai), ldb = ld_of(Bi);
  GemmArgs ga{op_a, op_b, ml, nl, 0, lda, ldb, std::max<index_t>(1, nl)};
  if (ml > 0 && nl > 0 && k == 0) local::fill(Cl, T(0));
  const auto& oa = la.offsets(ta ? 0 : 1);  // a's k blocks, over grid axis 1
  const auto& ob = lb.offsets(tb ? 1 : 0);  // b's k blocks, over grid axis 0
  const auto panels = panels_of(oa, ob, opt.panel);
  index_t wmax = 0;
  for (const auto& p : panels) wmax = std::max(wmax, p.w);
  const auto& row = g.axis_group(1);  // this grid row: ranks ordered by their grid column
  const auto& col = g.axis_group(0);
  const Stream& cs = Context::current().stream(d, StreamRole::comm);
  local::Array<T, 1> bufa[2] = {local::Array<T, 1>({ml * wmax}, d), local::Array<T, 1>({ml * wmax}, d)};
  local::Array<T, 1> bufb[2] = {local::Array<T, 1>({wmax * nl}, d), local::Array<T, 1>({wmax * nl}, d)};
  std::vector<Event> arrived;
  struct Operands {
    const T *a, *b;
    index_t lda, ldb;
  };
  std::vector<Operands> src(panels.size());
  const int my_col = g.coords()[1], my_row = g.coords()[0];

  // Panel j into buffer j%2: the holder packs it on s (unless it is contiguous in its shard) and
  // broadcasts it on cs; the GEMM of panel j waits for arrived[j]. A grid axis of extent 1 needs
  // neither: the GEMM reads the shard in place through its leading dimension.
  auto issue = [&](std::size_t j) {
    const Panel& p = panels[j];
    Operands o{bufa[j % 2].data(), bufb[j % 2].data(), ta ? ml : p.w, tb ? p.w : nl};
    const index_t la0 = p.x - oa[p.ca], lb0 = p.x - ob[p.rb];
    const bool a_here = row.size() == 1, b_here = col.size() == 1;
    if (a_here) {
      if (ml > 0) o.a = Ai.data() + (ta ? la0 * lda : la0), o.lda = lda;
    } else if (my_col == p.ca && ml > 0) {
      T* pa = bufa[j % 2].data();
      if (ta && (lda == ml || p.w == 1)) o.a = Ai.data() + la0 * lda;  // rows of a {k,m} block: contiguous
      else if (!ta && lda == p.w && la0 == 0) o.a = Ai.data();
      else local::copy(local::Array<T, 2>::view(pa, ta ? Index<2>{p.w, ml} : Index<2>{ml, p.w}, d),
                       Ai.slice(ta ? 0 : 1, la0, la0 + p.w));
    }
    if (b_here) {
      if (nl > 0) o.b = Bi.data() + (tb ? lb0 : lb0 * ldb), o.ldb = ldb;
    } else if (my_row == p.rb && nl > 0) {
      T* pb = bufb[j % 2].data();
      if (!tb && (ldb == nl || p.w == 1)) o.b = Bi.data() + lb0 * ldb;
      else if (tb && ldb == p.w && lb0 == 0) o.b = Bi.data();
      else local::copy(local::Array<T, 2>::view(pb, tb ? Index<2>{nl, p.w} : Index<2>{p.w, nl}, d),
                       Bi.slice(tb ? 1 : 0, lb0, lb0 + p.w));
    }
    cs.wait_for(s);  // packing done, and every earlier GEMM that read buffer j%2
    T* ra = const_cast<T*>(o.a);  // the root sends from it, the others receive into it
    T* rb = const_cast<T*>(o.b);
    if (!a_here && ml > 0) row.broadcast(ra, ra, static_cast<std::size_t>(ml * p.w), dtype_v<T>, p.ca, cs);
    if (!b_here && nl > 0) col.broadcast(rb, rb, static_cast<std::size_t>(p.w * nl), dtype_v<T>, p.rb, cs);
    arrived.emplace_back(d);
    arrived.back().record(cs);
    src[j] = o;
  };

  if (!panels.empty()) issue(0);  // (none when k == 0)
  for (std::size_t j = 0; j < panels.size(); ++j) {
    if (j + 1 < panels.size()) issue(j + 1);  // its broadcast overlaps this GEMM
    arrived[j].wait_on(s);
    if (ml == 0 || nl == 0) continue;
    GemmArgs gj = ga;
    gj.k = panels[j].w;
    gj.lda = src[j].lda;
    gj.ldb = src[j].ldb;
    gj.accumulate = j > 0;
    detail::gemm_kernel(gj, src[j].a, src[j].b, Cl.data(), s);
  }
  a.stream().wait_for(s);  // a and b may be overwritten once the product has read them
  b.stream().wait_for(s);
  return C;
}

template <class T>
Array<T, 3> matmul(const Array<T, 3>& a, const Array<T, 3>& b, Op op_a, Op op_b) {
  const Device d = a.device();
  check_devices(d, b.device(), "matmul");
  const auto agreed = check_call<T, 3>("matmul", a.layout(), d, "b", b.layout(), "op_a", op_a, "op_b", op_b);
  const bool ta = op_a != Op::none, tb = op_b != Op::none;
  const auto& as = a.global_shape();
  const auto& bs = b.global_shape();
  const index_t nb = as[0], m = as[1 + ta], k = as[2 - ta], n = bs[2 - tb];
  if (k != bs[1 + tb] || nb != bs[0])
    throw ShapeMismatch("shape mismatch in distributed::matmul (batched): " + shapes(as, op_a, bs, op_b), d);
  const ProcessGrid g = grid_for(a.layout().grid(), 1);
  const Array<T, 3> A = on_layout(a, Layout<3>(g, as, {0, -1, -1}));
  const Array<T, 3> B = on_layout(b, Layout<3>(g, bs, {0, -1, -1}));
  Array<T, 3> C(Layout<3>(g, {nb, m, n}, {0, -1, -1}), d);
  const Stream& s = Stream::default_for(d);
  s.wait_for(A.stream());
  s.wait_for(B.stream());
  const auto Ai = A.interior(), Bi = B.interior();
  const auto Cl = C.local();
  const index_t bl = Cl.shape(0);
  if (bl > 0 && m > 0 && n > 0) {
    if (k == 0) {
      local::fill(Cl, T(0));
    } else {
      GemmArgs ga{op_a, op_b, m, n, k, std::max<index_t>(1, Ai.strides()[1]), std::max<index_t>(1, Bi.strides()[1]), n,
                  bl, Ai.strides()[0], Bi.strides()[0], m * n};
      detail::gemm_kernel(ga, Ai.data(), Bi.data(), Cl.data(), s);
    }
  }
  a.stream().wait_for(s);
  b.stream().wait_for(s);
  return C;
}

template <class T>
Array<T, 1> matvec(const Array<T, 2>& a, const Array<T, 1>& x) {
  const Device d = a.device();
  check_devices(d, x.device(), "matvec");
  const auto agreed = check_call<T, 2>("matvec", a.layout(), d, "x", x.layout());
  const index_t m = a.global_shape()[0], n = a.global_shape()[1];
  if (x.global_shape()[0] != n)
    throw ShapeMismatch("shape mismatch in distributed::matvec: " + local::shape_str(a.global_shape()) + " @ " +
                            local::shape_str(x.global_shape()),
                        d);
  const ProcessGrid g = grid_for(a.layout().grid(), 1);
  const Array<T, 2> A = on_layout(a, Layout<2>(g, {m, n}, {0, -1}));
  const local::Array<T, 1> xs = allgather(x);  // x whole on every rank
  Array<T, 1> y(Layout<1>(g, {m}, {0}), d);
  const Stream& s = Stream::default_for(d);
  s.wait_for(A.stream());
  const auto Ai = A.interior();
  const auto yl = y.local();
  const index_t ml = yl.shape(0);
  if (ml > 0 && n == 0) local::fill(yl, T(0));
  if (ml > 0 && n > 0)
    detail::gemm_kernel(GemmArgs{Op::none, Op::none, ml, 1, n, ld_of(Ai), 1, 1}, Ai.data(), xs.data(), yl.data(), s);
  a.stream().wait_for(s);
  return y;
}

#define TESSERA_LINALG(T)                                                                                        \
  template Array<T, 2> matmul<T>(const Array<T, 2>&, const Array<T, 2>&, Op, Op, const MatmulOptions&);          \
  template Array<T, 3> matmul<T>(const Array<T, 3>&, const Array<T, 3>&, Op, Op);                                 \
  template Array<T, 1> matvec<T>(const Array<T, 2>&, const Array<T, 1>&);
TESSERA_LINALG(float)
TESSERA_LINALG(double)
TESSERA_LINALG(complex64)
TESSERA_LINALG(complex128)
#undef TESSERA_LINALG

}  // namespace tessera::distributed
