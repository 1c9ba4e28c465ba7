// Distributed FFT plans (fft.hpp): stages of local FFTs along the axes a layout holds whole,
// joined by the chunked exchange engine (exchange.hpp), whose producer hook runs the local FFT
// of chunk k+1 while chunk k travels, and whose consumer hook runs the next stage's FFT of chunk
// k once it has landed (Engine::step). Fields of a batch are one leading axis of the buffers.
#include "tessera/distributed/settings.hpp"
#include "tessera/fft/fft.hpp"

#include <mpi.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numbers>
#include <optional>
#include <string>
#include <typeinfo>

#include "../detail/kernels.hpp"
#include "../detail/transport.hpp"
#include "fft1d.hpp"
#include "stages.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/distributed/rule.hpp"
#include "tessera/distributed/tune.hpp"
#include "tessera/local/context_cache.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/settings.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/fft_plan.hpp"

namespace tessera::fft {
namespace detail {
namespace lf = local::fft;
using distributed::Box;
using distributed::Index;
using distributed::ProcessGrid;

// What a local FFT pass does: its kind and direction, whether it must keep its input, and what
// its stores are multiplied by (normalization, a spectral factor; null: nothing).
struct Transform {
  lf::Kind kind = lf::Kind::c2c;
  lf::Direction dir = lf::Direction::forward;
  bool preserve_input = false;
  const lf::StoreMultiply* multiply = nullptr;
};
// The part of a block a pass covers: [begin, end) along `axis` (axis < 0: all of it).
struct Restriction {
  int axis = -1;
  index_t begin = 0, end = 0;
};
// One local FFT pass over row-major blocks: axes [first_axis, last_axis] of the logical sizes
// `logical`; the input and output blocks have the shapes `in_block`/`out_block` (equal but on the
// last axis of r2c/c2r).
template <class I, class O, int R>
struct LocalPass {
  const I* in;
  O* out;
  Index<R> in_block, out_block, logical;
  int first_axis, last_axis;
  Restriction part;
  Transform transform;
};

// Runs a local pass on d's stream `stream`; plans come from the local cache.
template <class I, class O, int R>
void local_pass(const LocalPass<I, O, R>& lp, Device d, const Stream& stream) {
  const I* in = lp.in;
  O* out = lp.out;
  const Index<R>&in_block = lp.in_block, &out_block = lp.out_block, &logical = lp.logical;
  const int first = lp.first_axis, last = lp.last_axis;
  int axis = lp.part.axis;
  const index_t begin = lp.part.begin, end = lp.part.end;
  const lf::Kind kind = lp.transform.kind;
  const lf::Direction dir = lp.transform.dir;
  const lf::StoreMultiply* mult = lp.transform.multiply;
  if (local::shape_size(logical) == 0 || (axis >= 0 && begin >= end)) return;
  lf::PlanDesc p;
  p.device = d;
  p.kind = kind;
  p.precision = lf::precision_of<typename RealOf<O>::type>();
  p.rank = last - first + 1;
  for (int k = 0; k < p.rank; ++k) p.n[k] = logical[first + k];
  p.in_place = static_cast<const void*>(in) == static_cast<const void*>(out);
  p.preserve_input = lp.transform.preserve_input;
  p.store_multiply = mult != nullptr;
  p.store_spectral = mult && mult->spectral != lf::StoreMultiply::Spectral::none;
  if (mult && !p.store_spectral) p.store_scale = mult->scale;  // a plan per scale: no load per store
  const index_t inner = prod<R>(logical, last + 1, R);
  const index_t in_outer = prod<R>(in_block, first, R), out_outer = prod<R>(out_block, first, R);
  auto exec = [&](index_t batch, index_t in_off, index_t out_off) {
    if (batch <= 0) return;
    p.batch = batch;
    // cuFFT rejects real data (r2c input, c2r output) not aligned to its complex type: a chunk of an
    // odd-sized block can start there, and then goes through an aligned buffer (both on `stream`,
    // the default stream, as the local copies are).
    constexpr std::size_t A = 2 * sizeof(typename RealOf<O>::type);
    auto odd = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % A != 0; };
    // The multiply's positions are the block's, wherever the output lands first.
    auto run = [&](const void* i, void* o) {
      const auto plan = lf::get_plan(p);
      if (!mult) return plan->execute(i, o, dir, stream);
      lf::StoreMultiply at_block = *mult;
      at_block.offset = out_off;
      plan->execute(i, o, dir, stream, at_block);
    };
    if (d.is_cuda() && kind == lf::Kind::r2c && odd(in + in_off)) {
      local::Array<I, 1> tmp(Index<1>{batch * in_outer}, d);
      local::copy(tmp, local::Array<I, 1>::view(const_cast<I*>(in) + in_off, Index<1>{batch * in_outer}, d));
      run(tmp.data(), out + out_off);
    } else if (d.is_cuda() && kind == lf::Kind::c2r && odd(out + out_off)) {
      local::Array<O, 1> tmp(Index<1>{batch * out_outer}, d);
      run(in + in_off, tmp.data());
      local::copy(local::Array<O, 1>::view(out + out_off, Index<1>{batch * out_outer}, d), tmp);
    } else {
      run(in + in_off, out + out_off);
    }
  };
  if (inner == 1) {  // packed transforms; the restriction is on an outer axis
    if (axis > last) axis = -1;  // the axes after `last` have extent 1: [begin, end) is all of it
    const index_t per = axis < 0 ? prod<R>(logical, 0, first) : (end - begin) * prod<R>(logical, axis + 1, first);
    const index_t start = axis < 0 ? 0 : begin * prod<R>(logical, axis + 1, first);
    const index_t loops = axis < 0 ? 1 : prod<R>(logical, 0, axis);
    const index_t step = axis < 0 ? 0 : prod<R>(logical, axis, first);
    for (index_t l = 0; l < loops; ++l) exec(per, (l * step + start) * in_outer, (l * step + start) * out_outer);
    return;
  }
  // Transforms across an inner block (c2c only): stride `inner`, batches adjacent.
  for (int k = 0; k < p.rank; ++k) p.inembed[k] = p.onembed[k] = logical[first + k];
  p.istride = p.ostride = inner;
  p.idist = p.odist = 1;
  const index_t outer = prod<R>(logical, 0, first);
  if (axis < 0 || axis < first) {
    const index_t lo = axis < 0 ? 0 : begin * prod<R>(logical, axis + 1, first);
    const index_t n = axis < 0 ? outer : (end - begin) * prod<R>(logical, axis + 1, first);
    const index_t loops = axis < 0 ? 1 : prod<R>(logical, 0, axis);
    const index_t step = axis < 0 ? 0 : prod<R>(logical, axis, first);
    for (index_t l = 0; l < loops; ++l)
      for (index_t o = lo; o < lo + n; ++o) exec(inner, (l * step + o) * in_outer, (l * step + o) * out_outer);
    return;
  }
  if (axis != last + 1) throw Error("fft: internal: chunk axis " + std::to_string(axis) + " not next to axes " +
                               std::to_string(first) + ".." + std::to_string(last), d);
  const index_t row = prod<R>(logical, axis + 1, R);
  for (index_t o = 0; o < outer; ++o) exec((end - begin) * row, o * in_outer + begin * row, o * out_outer + begin * row);
}

}  // namespace detail

// ---- the engine ----

template <class In, int R>
struct detail::Engine {
  using Real = typename RealOf<In>::type;
  using Out = std::complex<Real>;
  static constexpr bool real_input = !IsComplex<In>::value;
  struct Stage {
    Layout<R> layout;  // complex shape
    int s0, s1;        // axes transformed here
  };

  Layout<R> in, first;  // the caller's layout (backward returns it); stage 0's blocks on the input's (real) shape
  Layout<R> result;     // what forward returns: the last stage's layout, or the caller's blocks (same_layout_output)
  Device dev;
  Options opt;
  Decomposition decomp = Decomposition::slab;
  std::vector<Stage> stages;
  Index<R> n{};  // real-space (logical) global shape
  std::unique_ptr<Line<In>> line;  // 1-D over several ranks: all of the work (stages: its output layout)
  std::string described;           // Plan::describe(): how the options were chosen

  Engine(const Layout<R>& l, Device d, Options o) : in(l), first(l), result(l), dev(d), opt(o) {
    n = l.global_shape();
    const int P = l.grid().size();
    const StagePlan plan = make_stages(std::vector<index_t>(n.begin(), n.end()), P, o.decomposition, d);
    decomp = plan.decomposition;
    Index<R> nc = n;
    if (real_input) nc[R - 1] = n[R - 1] / 2 + 1;
    if constexpr (R == 1) {
      if (plan.stages.empty()) {  // over several ranks: the four-step / Bluestein transform of fft1d.hpp
        line = std::make_unique<Line<In>>(l, d, o.same_layout_output, depth(local::shape_size(n), 1));
        decomp = line->bluestein() ? Decomposition::bluestein : Decomposition::four_step;
        const Decomposition want = o.decomposition;
        if (want != Decomposition::automatic && want != decomp && want != Decomposition::slab)
          throw InvalidArgument(std::string("fft: a 1-D length ") + std::to_string(n[0]) + " over " + std::to_string(P) +
                                    " ranks runs " + line->method() + ", not the requested " + decomposition_name(want),
                                d);
        stages.push_back({line->output_layout(), 0, 0});
        first = line->input_layout();
        result = o.same_layout_output ? caller_blocks(line->output_layout().global_shape()) : last_stage();
        return;
      }
    }
    for (const StageShape& st : plan.stages)
      stages.push_back({layout_of(st, l.grid(), nc, o.grid), st.first_axis, st.last_axis});
    first = Layout<R>(stages[0].layout.grid(), n, stages[0].layout.split());
    result = o.same_layout_output ? caller_blocks(nc) : last_stage();
  }

  // A stage's layout on the complex shape `nc`: a 2-D stage on `grid` where given (Options::grid),
  // else the caller's grid where it has the stage's number of axes, else one made over the
  // caller's group (a line, or a balanced 2-D grid).
  static Layout<R> layout_of(const StageShape& st, const ProcessGrid& caller, const Index<R>& nc,
                             const std::vector<int>& grid) {
    typename Layout<R>::Split split;
    for (int a = 0; a < R; ++a) split[a] = st.split[a];
    if (st.grid_axes == 0) return Layout<R>(caller, nc, split);
    if (st.grid_axes == 2 && !grid.empty()) {
      if (caller.dims() == grid) return Layout<R>(caller, nc, split);
      return Layout<R>(ProcessGrid(caller.group(), grid), nc, split);
    }
    if (caller.ndims() == st.grid_axes) return Layout<R>(caller, nc, split);
    const ProcessGrid g = st.grid_axes == 1 ? ProcessGrid(caller.group()) : ProcessGrid::balanced(caller.group(), 2);
    return Layout<R>(g, nc, split);
  }

  // The caller's grid, splits and blocks on global shape `shape` (an axis whose length differs,
  // the last of an R2C spectrum, gets balanced blocks), without halos.
  Layout<R> caller_blocks(const Index<R>& shape) const {
    const Layout<R> balanced(in.grid(), shape, in.split());
    typename Layout<R>::Offsets off;
    for (int a = 0; a < R; ++a) off[a] = shape[a] == n[a] ? in.offsets(a) : balanced.offsets(a);
    return Layout<R>(in.grid(), shape, in.split(), off, {});
  }
  // `a` as an array of layout `l`: the same memory where the blocks agree and `l` has no halos,
  // else redistributed.
  template <class T>
  static Array<T, R> onto(const Array<T, R>& a, const Layout<R>& l) {
    if (a.layout() == l) return a;
    if (a.layout().same_blocks(l) && l.halo() == Index<R>{}) return Array<T, R>::wrap(l, a.interior());
    return distributed::redistribute(a, l);
  }

  // dst's block as the one-field buffer of stage layout `l` that the last pass writes: where dst
  // lies as `l` with a packed, non-empty interior apart from the input `src`; else empty (the
  // caller copies the result into dst).
  template <class T, class S>
  local::Array<T, R + 1> direct_output(Array<T, R>* dst, const Layout<R>& l, const S* src) const {
    if (!dst || !dst->layout().same_blocks(l) || !dst->interior().is_contiguous() || dst->interior().size() == 0 ||
        static_cast<const void*>(dst->interior().data()) == static_cast<const void*>(src))
      return {};
    Stream::default_for(dev).wait_for(dst->stream());
    return dst->interior().template reshape<R + 1>(batched<R + 1>(1, block(l)));
  }

  // The transposes' pipeline depth: Options::chunks, else the settings' rule on size * fields / P^2
  // elements (a pair's share of a slab transpose; from global sizes, so the same on every rank).
  int depth(index_t size, index_t fields) const {
    if (opt.chunks > 0) return opt.chunks;
    const auto P = static_cast<std::uint64_t>(in.grid().size());
    const auto pair = static_cast<std::uint64_t>(size * fields) * sizeof(Out) / (P * P);
    return distributed::settings().fft_chunks_for(dev.is_cuda(), pair);
  }

  const Layout<R>& out() const { return result; }
  const Layout<R>& last_stage() const { return stages.back().layout; }
  const comm::ProcessGroup& group() const { return stages[0].layout.grid().group(); }
  double count() const { return static_cast<double>(local::shape_size(n)); }

  static Index<R> block(const Layout<R>& l) { return l.local_box().shape(); }
  template <int B> static Index<B> batched(index_t f, const Index<R>& s) {
    Index<B> r{};
    r[0] = f;
    for (int a = 0; a < R; ++a) r[a + 1] = s[a];
    return r;
  }
  std::vector<Box<R + 1>> boxes(const Layout<R>& l, index_t fields) const {
    std::vector<Box<R + 1>> b(l.grid().size());
    for (int r = 0; r < l.grid().size(); ++r) {
      const auto x = l.local_box(r);
      b[r].lo = batched<R + 1>(0, x.lo);
      b[r].hi = batched<R + 1>(fields, x.hi);
    }
    return b;
  }
  // The outermost axis a stage does not transform: where the exchange after it is cut.
  int chunk_axis(const Stage& st, index_t fields) const {
    if (fields > 1) return 0;
    for (int a = 0; a < R; ++a)
      if (a < st.s0 || a > st.s1) return a + 1;
    return 0;
  }

  // Brings each array to blocks of `l` (contiguous, no halos); the caller's stream is waited for.
  template <class T>
  std::vector<local::Array<T, R>> blocks_of(const std::vector<Array<T, R>>& xs, const Layout<R>& l, const char* op) const {
    std::vector<local::Array<T, R>> v;
    for (const auto& x : xs) {
      if (x.device() != dev)
        throw DeviceMismatch(std::string("fft ") + op + ": array on " + x.device().str() + ", plan on " + dev.str());
      if (x.global_shape() != l.global_shape())
        throw ShapeMismatch(std::string("fft ") + op + ": array of global shape " + Layout<R>::idx_str(x.global_shape()) +
                                " for a plan expecting " + Layout<R>::idx_str(l.global_shape()),
                            dev);
      const bool direct = x.layout().same_blocks(l) && x.interior().is_contiguous();
      local::Array<T, R> b = direct ? x.interior() : distributed::redistribute(x, l).interior();
      if (direct) Stream::default_for(dev).wait_for(x.stream());
      v.push_back(b);
    }
    return v;
  }

  // One stage's FFT on fields [f0, f1) of src into dst, restricted to `part` of each block, on s.
  template <class I, class O>
  void pass(const Stage& st, const std::vector<const I*>& src, const local::Array<O, R + 1>& dst, const Transform& t,
            index_t f0, index_t f1, Restriction part, const Stream& s) const {
    LocalPass<I, O, R> lp{nullptr, nullptr, block(st.layout), block(st.layout), block(st.layout), st.s0, st.s1, part, t};
    if (t.kind == lf::Kind::r2c) lp.in_block[R - 1] = lp.logical[R - 1] = block(first)[R - 1];
    if (t.kind == lf::Kind::c2r) lp.out_block[R - 1] = lp.logical[R - 1] = block(first)[R - 1];
    const index_t per = local::shape_size(lp.out_block);
    for (index_t f = f0; f < f1; ++f) {
      lp.in = src[f], lp.out = dst.data() + f * per;
      local_pass<I, O, R>(lp, dev, s);
    }
  }

  // Stage st's pass on part s of k along batched axis c (chunk_axis: 0 = fields), on `on`.
  template <class I, class O = Out>
  void chunk_pass(const Stage& st, const std::vector<const I*>& src, const local::Array<O, R + 1>& dst,
                  index_t fields, const Transform& t, int c, int s, int k, const Stream& on) const {
    if (c == 0) {
      pass<I, O>(st, src, dst, t, distributed::chunk_begin(fields, s, k), distributed::chunk_begin(fields, s + 1, k), {},
                 on);
    } else {
      const index_t e = block(st.layout)[c - 1];
      pass<I, O>(st, src, dst, t, 0, fields, {c - 1, distributed::chunk_begin(e, s, k), distributed::chunk_begin(e, s + 1, k)},
                 on);
    }
  }

  // The next stage's pass, which the exchange into it may run chunk by chunk: c2c in place, or
  // (the real backward's last pass) c2r into `real`.
  struct Then {
    lf::Direction dir;
    const lf::StoreMultiply* mult;
    const local::Array<In, R + 1>* real = nullptr;
  };
  static int width(const Stage& st) { return st.s1 - st.s0 + 1; }

  // One step of a transform: stage `stage`'s FFT (unless `done`: an earlier exchange ran it) by
  // `transform`, then the exchange to stage `next` (none when next < 0), over `fields` fields.
  struct Step {
    int stage;
    int next;
    index_t fields;
    Transform transform;
    bool done = false;
    const Then* then = nullptr;
    const local::Array<Out, R + 1>* into = nullptr;  // the next stage's buffer, where the caller has one
  };
  // The step's result: the next stage's buffer, and whether `then` (the next stage's pass) ran.
  struct Stepped {
    local::Array<Out, R + 1> data;
    bool then_ran = false;
  };

  // Runs a step. The local FFTs ride on the exchange's chunks: the stage's own as its producer
  // (chunk k+1 transformed while chunk k travels), or `then`, the next stage's, as its consumer
  // (chunk k transformed while chunk k+1 travels) when that one transforms more axes (the slab
  // backward: the 2-D pass after the axis-0 one, else a serial tail), or both when both can be cut
  // along one axis (fields; a pencil's middle exchange).
  template <class I>
  Stepped step(const Step& x, const std::vector<const I*>& src, local::Array<Out, R + 1> cur) const {
    const Stage& stage = stages[x.stage];
    const Stream& work = Stream::default_for(dev);
    const index_t fields = x.fields;
    const int produce_axis = chunk_axis(stage, fields);
    if (x.next < 0) {
      if (!x.done) chunk_pass<I>(stage, src, cur, fields, x.transform, produce_axis, 0, 1, work);
      return {cur, false};
    }
    const Stage& next_stage = stages[x.next];
    const Then* then = x.then;
    const int consume_axis = chunk_axis(next_stage, fields);
    bool produce = !x.done, consume = then && consume_axis == produce_axis;
    if (then && !consume && (x.done || width(next_stage) > width(stage))) {
      if (!x.done) chunk_pass<I>(stage, src, cur, fields, x.transform, produce_axis, 0, 1, work);
      produce = false, consume = true;
    }
    local::Array<Out, R + 1> next_data =
        x.into ? *x.into : local::Array<Out, R + 1>(batched<R + 1>(fields, block(next_stage.layout)), dev);
    std::vector<const Out*> next_fields;
    const index_t per_field = local::shape_size(block(next_stage.layout));
    for (index_t f = 0; f < fields; ++f) next_fields.push_back(next_data.data() + f * per_field);
    distributed::ExchangeChunking ch{consume ? consume_axis : produce_axis, depth(last_stage().global_size(), fields), {},
                                     {}};
    if (produce)
      ch.produce = [&](int s, int k, const Stream& on) {
        chunk_pass<I>(stage, src, cur, fields, x.transform, produce_axis, s, k, on);
      };
    if (consume)
      ch.consume = [&](int s, int k, const Stream& on) {
        if constexpr (real_input) {
          if (then->real)
            return chunk_pass<Out, In>(next_stage, next_fields, *then->real, fields,
                                       {lf::Kind::c2r, then->dir, false, then->mult}, consume_axis, s, k, on);
        }
        chunk_pass<Out>(next_stage, next_fields, next_data, fields, {lf::Kind::c2c, then->dir, false, then->mult},
                        consume_axis, s, k, on);
      };
    distributed::exchange<Out, R + 1>(group(), {boxes(stage.layout, fields), cur},
                                      {boxes(next_stage.layout, fields), next_data}, work, dev,
                                      {.chunking = &ch, .transport = opt.transport});
    return {next_data, consume};
  }

  // What the last local pass multiplies its stores by (normalization, a spectral factor), or
  // nothing: stage `st`'s output block, in the global spectrum. No pass of its own.
  std::optional<lf::StoreMultiply> multiply(const Stage& st, double f, const Spectral& sp) const {
    if (f == 1.0 && sp.kind == Spectral::Kind::none) return std::nullopt;
    lf::StoreMultiply m;
    m.scale = f;
    m.spectral = static_cast<lf::StoreMultiply::Spectral>(static_cast<int>(sp.kind));
    m.dims = R;
    const auto box = st.layout.local_box();
    for (int a = 0; a < R; ++a) {
      m.block[a] = std::max<index_t>(1, box.shape()[a]);
      m.lo[a] = box.lo[a];
      m.n[a] = n[a];
      m.half[a] = real_input && a == R - 1;
      m.k[a] = 2 * std::numbers::pi / sp.lengths[a];
    }
    return m;
  }
  double factor(Norm norm, bool forward) const { return norm_factor(norm, forward, count()); }
  template <class T>
  std::vector<Array<T, R>> unbatch(const local::Array<T, R + 1>& buf, const Layout<R>& l) const {
    std::vector<Array<T, R>> v;
    for (index_t f = 0; f < buf.shape(0); ++f)
      v.push_back(Array<T, R>::wrap(l, buf.slice(0, f, f + 1).template reshape<R>(block(l))));
    return v;
  }

  // `into` (one field, out of place): an array of the output layout the spectrum is written to
  // where its block allows (direct_output), else the caller copies.
  std::vector<Array<Out, R>> forward(const std::vector<Array<In, R>>& xs, Norm norm, bool in_place,
                                     const Spectral& sp = {}, Array<Out, R>* into = nullptr) const {
    const index_t F = static_cast<index_t>(xs.size());
    const auto agreed = distributed::check_call<In, R>("fft forward", in, dev, "x", xs[0].layout(), "norm", norm,
                                                       "fields", F, "in_place", in_place, "spectral",
                                                       static_cast<int>(sp.kind));
    auto src = blocks_of(xs, first, "forward");
    if constexpr (R == 1) {
      if (line) {
        if (sp.kind != Spectral::Kind::none)
          throw InvalidArgument("fft forward: a Spectral multiply is not defined for a 1-D transform over " +
                                    std::to_string(group().size()) + " ranks (" + line->method() +
                                    "); multiply its output instead",
                                dev);
        std::vector<Array<Out, R>> ys;
        for (const auto& b : src)
          ys.push_back(onto(Array<Out, R>::wrap(last_stage(), line->forward(b, factor(norm, true))), result));
        return ys;
      }
    }
    std::vector<const In*> ptr;
    for (const auto& b : src) ptr.push_back(b.data());
    const auto kind = real_input ? lf::Kind::r2c : lf::Kind::c2c;
    local::Array<Out, R + 1> cur;
    if constexpr (!real_input) {
      if (in_place && F == 1) cur = src[0].template reshape<R + 1>(batched<R + 1>(1, block(first)));
    }
    const int S = static_cast<int>(stages.size());
    local::Array<Out, R + 1> direct;
    if (F == 1 && !in_place && result.same_blocks(last_stage())) direct = direct_output(into, last_stage(), ptr[0]);
    if (!cur.data() || cur.size() == 0)
      cur = S == 1 && direct.data() ? direct
                                    : local::Array<Out, R + 1>(batched<R + 1>(F, block(stages[0].layout)), dev);
    // The exchange into the last stage writes the caller's buffer.
    const local::Array<Out, R + 1>* into_last = direct.data() ? &direct : nullptr;
    const auto mult = multiply(stages.back(), factor(norm, true), sp);  // the last pass's stores
    auto last = [&](int i) { return i + 1 == S && mult ? &*mult : nullptr; };
    // Each later stage is c2c: its pass may ride on the exchange into it.
    auto then = [&](int j, Then& t) -> const Then* { return j < S ? &(t = Then{lf::Direction::forward, last(j)}) : nullptr; };
    Then t;
    auto r = step<In>({0, S > 1 ? 1 : -1, F, {kind, lf::Direction::forward, true, last(0)}, false, then(1, t),
                       S == 2 ? into_last : nullptr},
                      ptr, cur);
    for (int i = 1; i < S; ++i) {
      std::vector<const Out*> p;
      for (index_t f = 0; f < F; ++f) p.push_back(r.data.data() + f * local::shape_size(block(stages[i].layout)));
      r = step<Out>({i, i + 1 < S ? i + 1 : -1, F, {lf::Kind::c2c, lf::Direction::forward, false, last(i)}, r.then_ran,
                     then(i + 1, t), i + 2 == S ? into_last : nullptr},
                    p, r.data);
    }
    cur = r.data;
    auto ys = unbatch(cur, last_stage());
    for (auto& y : ys) y = onto(y, result);
    return ys;
  }

  // backward(forward(x) times sp): the Norm::forward pair (1/N with the factors, then nothing), as
  // one local round trip where one stage holds a 3-D real array whole, else the two transforms.
  Array<In, R> apply(const Array<In, R>& x, const Spectral& sp) const {
    if constexpr (real_input && R == 3) {
      if (stages.size() == 1 && sp.kind != Spectral::Kind::none) return round_trip(x, sp);
    }
    auto y = forward({x}, Norm::forward, false, sp)[0];
    return backward({y}, Norm::forward, true)[0];
  }

  // One rank's r2c plan times the factors, then its c2r plan (lf::Plan::execute_round_trip: on GPUs
  // one pass over the spectrum fewer where the plans split), from x's block to a new one.
  Array<In, R> round_trip(const Array<In, R>& x, const Spectral& sp) const {
    const auto agreed = distributed::check_call<In, R>("fft apply", in, dev, "x", x.layout(), "spectral",
                                                       static_cast<int>(sp.kind));
    const auto src = blocks_of<In>({x}, first, "apply")[0];
    const Stage& st = stages[0];
    lf::StoreMultiply m = *multiply(st, factor(Norm::forward, true), sp);
    local::Array<Out, R> spectrum(block(st.layout), dev);
    local::Array<In, R> res(block(first), dev);
    const auto precision = lf::precision_of<Real>();
    const Index<R> shape = block(first);
    auto f = lf::make_desc(dev, lf::Kind::r2c, precision, {shape[0], shape[1], shape[2]});
    f.store_multiply = f.store_spectral = true;
    auto b = lf::make_desc(dev, lf::Kind::c2r, precision, {shape[0], shape[1], shape[2]});
    b.preserve_input = false;  // the spectrum is this call's own
    lf::get_plan(f)->execute_round_trip(*lf::get_plan(b), src.data(), spectrum.data(), res.data(),
                                        Stream::default_for(dev), m);
    return onto(Array<In, R>::wrap(first, res), in);
  }

  // `into` as in forward: an array of the input layout the result is written to where it can be.
  std::vector<Array<In, R>> backward(const std::vector<Array<Out, R>>& ys, Norm norm, bool in_place,
                                     Array<In, R>* into = nullptr) const {
    const index_t F = static_cast<index_t>(ys.size());
    const auto agreed = distributed::check_call<Out, R>("fft backward", in, dev, "y", ys[0].layout(), "norm", norm,
                                                        "fields", F, "in_place", in_place);
    auto src = blocks_of(ys, last_stage(), "backward");
    if constexpr (R == 1) {
      if (line) {
        std::vector<Array<In, R>> xs;
        for (const auto& b : src) xs.push_back(onto(Array<In, R>::wrap(first, line->backward(b, factor(norm, false))), in));
        return xs;
      }
    }
    const int S = static_cast<int>(stages.size());
    local::Array<In, R + 1> direct;
    if (F == 1 && !in_place && in.same_blocks(first)) direct = direct_output(into, first, src[0].data());
    // The last stage's buffer: the caller's y in place, or (one c2c pass) the caller's x; a C2R
    // whose only pass reads y directly needs none.
    local::Array<Out, R + 1> cur;
    if constexpr (!real_input) {
      if (in_place && F == 1) cur = src[0].template reshape<R + 1>(batched<R + 1>(1, block(last_stage())));
      else if (S == 1 && direct.data()) cur = direct;
    }
    if (!cur.data() && !(real_input && S == 1))
      cur = local::Array<Out, R + 1>(batched<R + 1>(F, block(last_stage())), dev);
    std::vector<const Out*> p;
    for (const auto& b : src) p.push_back(b.data());
    // The scale rides on the first pass's stores: there it is free on GPUs (the axis pass of
    // slab and pencil plans), where the last pass's packed plans would take a cuFFT callback.
    const auto mult = multiply(stages[S - 1], factor(norm, false), {});
    const lf::StoreMultiply* scale_first = mult ? &*mult : nullptr;
    // A later pass may ride on the exchange into it: c2c in place, or the last (c2r) pass into res,
    // which therefore exists during that exchange. S >= 2 there: the scale is on the first pass.
    local::Array<In, R + 1> res;
    if constexpr (real_input)
      res = direct.data() ? direct : local::Array<In, R + 1>(batched<R + 1>(F, block(first)), dev);
    // A c2c's exchange into the first stage writes the caller's buffer.
    const local::Array<Out, R + 1>* into_first = nullptr;
    if constexpr (!real_input) into_first = direct.data() ? &direct : nullptr;
    const Then then{lf::Direction::backward, nullptr}, into_res{lf::Direction::backward, nullptr, &res};
    bool done = false;
    for (int i = S - 1; i >= 1; --i) {
      const auto r = step<Out>({i, i - 1, F, {lf::Kind::c2c, lf::Direction::backward, false, i == S - 1 ? scale_first : nullptr},
                                done, real_input && i == 1 ? &into_res : &then, i == 1 ? into_first : nullptr},
                               p, cur);
      cur = r.data, done = r.then_ran;
      p.clear();
      for (index_t f = 0; f < F; ++f) p.push_back(cur.data() + f * local::shape_size(block(stages[i - 1].layout)));
    }
    const lf::StoreMultiply* m = S == 1 ? scale_first : nullptr;  // one stage: the first pass is the last
    if constexpr (real_input) {  // c2r (unless the exchange ran it): keep the caller's array when it is the source
      if (!done)
        pass<Out, In>(stages[0], p, res, {lf::Kind::c2r, lf::Direction::backward, S == 1 && !in_place, m}, 0, F, {},
                      Stream::default_for(dev));
    } else {
      res = step<Out>({0, -1, F, {lf::Kind::c2c, lf::Direction::backward, false, m}, done}, p, cur).data;
    }
    auto xs = unbatch(res, first);
    for (auto& x : xs) x = onto(x, in);
    return xs;
  }
};

// ---- Plan ----

// ---- tuning (docs/tuning.md): decomposition and grid, then transport, then depth ----

namespace detail {
namespace tune = distributed::tune;
using distributed::Transport;
using distributed::Tune;

// The factor pairs {rows, columns} of P for a pencil's grid: the balanced one first, then the
// others nearest to square (at most `most` in all).
std::vector<std::vector<int>> pencil_grids(int P, const std::vector<int>& balanced, std::size_t most) {
  std::vector<std::vector<int>> v{balanced};
  std::vector<std::vector<int>> other;
  for (int a = 1; a <= P; ++a)
    if (P % a == 0 && std::vector<int>{a, P / a} != balanced) other.push_back({a, P / a});
  std::stable_sort(other.begin(), other.end(), [](const auto& x, const auto& y) {
    return std::abs(x[0] - x[1]) < std::abs(y[0] - y[1]);
  });
  for (const auto& g : other)
    if (v.size() < most) v.push_back(g);
  return v;
}

// The options a plan runs with: `o` where tuning is off, else the tuner's choice for what `o`
// leaves automatic (every rank the same). `described` says how.
template <class In, int R>
Options tuned(const Layout<R>& in, Device dev, Options o, std::string& described) {
  const Tune mode = o.tune.value_or(distributed::settings().tune);
  o.tune = Tune::off;
  const auto& g = in.grid().group();
  const int P = g.size();
  const auto& set = distributed::settings();
  Index<R> n = in.global_shape();
  const std::vector<index_t> shape(n.begin(), n.end());
  // The rule's candidate: what tune=off runs.
  Options rule = o;
  rule.decomposition = make_stages(shape, P, o.decomposition, dev).decomposition;
  if (rule.decomposition == Decomposition::pencil && rule.grid.empty())
    rule.grid = in.grid().ndims() == 2 ? in.grid().dims() : distributed::rule::summa_grid(P);
  const bool free_decomp = R == 3 && o.decomposition == Decomposition::automatic;
  const bool free_grid = R == 3 && o.grid.empty() && in.grid().ndims() != 2;
  const bool free_transport = dev.is_cuda() && !o.transport && set.transport == Transport::automatic;
  const bool free_chunks = o.chunks == 0 && set.fft_chunks == 0 && set.exchange_chunks == 0;
  std::vector<long long> key_shape(n.begin(), n.end());
  const std::string op = std::string("fft ") + (IsComplex<In>::value ? "c2c" : "r2c");
  std::string fixed = in.str() + (o.same_layout_output ? ", same layout output" : "");
  if (!free_decomp) fixed += std::string(", ") + decomposition_name(o.decomposition);
  if (!o.grid.empty()) fixed += ", grid " + std::to_string(o.grid[0]) + "x" + std::to_string(o.grid.size() > 1 ? o.grid[1] : 1);
  if (!free_transport) fixed += ", transport " + distributed::transport_name(o.transport.value_or(set.transport));
  if (!free_chunks) fixed += ", chunks " + std::to_string(set.chunks_for(dev.is_cuda()));
  const bool tunable = P > 1 && R > 1 && (free_decomp || free_grid || free_transport || free_chunks);
  if (mode == Tune::off || !tunable) {
    tune::Report r;
    r.names = {candidate_name(rule)}, r.times_ms = {-1}, r.runs = {0}, r.notes = {""};
    r.operation = op + " " + dtype_name(dtype_v<In>) + " " + Layout<R>::idx_str(n) + " on " + std::to_string(P) +
                  (P == 1 ? " rank" : " ranks");
    tune::record(g, r);
    described = r.str();
    return o;
  }
  const auto key = tune::key_for(g, dev, op, key_shape, dtype_name(dtype_v<In>), fixed);
  // A remembered choice is used where it fits what `o` fixes.
  auto usable = [&](const std::string& name) {
    try {
      const Options c = candidate_options(name);
      if (!free_decomp && c.decomposition != o.decomposition) return false;
      if (c.decomposition == Decomposition::pencil && (R != 3 || c.grid.size() != 2 || c.grid[0] * c.grid[1] != P))
        return false;
      if (!free_grid && c.decomposition == Decomposition::pencil &&
          c.grid != (o.grid.empty() ? in.grid().dims() : o.grid))
        return false;
      if (!free_transport && c.transport != o.transport) return false;
      if (!free_chunks && c.chunks != o.chunks) return false;
      return true;
    } catch (const InvalidArgument&) {
      return false;
    }
  };
  // Coordinate search: decomposition and grid (transport and depth the rule's), then transport,
  // then depth, each stage from the previous one's winner; one budget for all.
  auto search = [&] {
    Array<In, R> x(in, dev);
    local::fill(x.interior(), In(1));
    const double budget = static_cast<double>(set.tune_budget_ms);
    std::vector<tune::Report> stages;
    double spent = 0;
    Options best = rule;
    // Engines by candidate name, kept across stages: a stage's first candidate is the previous
    // stage's winner, already made and warm.
    std::map<std::string, std::shared_ptr<Engine<In, R>>> engines;
    auto engine = [&](const Options& opt) {
      auto& e = engines[candidate_name(opt)];
      if (!e) e = std::make_shared<Engine<In, R>>(in, dev, opt);
      return e;
    };
    // The bytes the transposes of `opt` exchange in all (the spectrum).
    auto spectrum_bytes = [&](const Options& opt) {
      return static_cast<std::uint64_t>(engine(opt)->last_stage().global_size()) *
             sizeof(std::complex<typename RealOf<In>::type>);
    };
    auto stage = [&](const std::vector<Options>& opts) {
      if (opts.size() < 2) return;
      std::vector<tune::Candidate> c;
      for (std::size_t i = 0; i < opts.size(); ++i) {
        tune::Candidate k{candidate_name(opts[i]), [&, i] {
                            (void)engine(opts[i])->forward({x}, Norm::backward, false);
                            Stream::default_for(dev).synchronize();
                          }};
        k.prepare = [&, i] { (void)engine(opts[i]); };
        c.push_back(std::move(k));
      }
      c[0].warm = !stages.empty();  // the previous stage's winner
      // GPU transforms time steadily: 2 timed runs, 1.3x the best is out after the first timed
      // run, twice the best after the warm-up (which makes transport windows on first use).
      tune::Measure m;
      if (dev.is_cuda()) m.repetitions = 2, m.prune = 1.3, m.screen = 2.0, m.prune_first = 1.3;
      m.budget_ms = std::max(0.0, budget - spent);
      stages.push_back(tune::measure(g, c, m));
      spent += stages.back().tuning_ms;
      best = opts[stages.back().chosen];
    };
    if (free_decomp || free_grid) {
      std::vector<Options> v{rule};
      auto add = [&](Options c) {
        if (std::find(v.begin(), v.end(), c) == v.end()) v.push_back(c);
      };
      const bool slab_ok = R == 3 && P <= n[0] && P <= n[1];
      if (free_decomp && rule.decomposition == Decomposition::pencil && slab_ok) {
        Options c = rule;
        c.decomposition = Decomposition::slab, c.grid.clear();
        add(c);
      }
      const bool pencils = rule.decomposition == Decomposition::pencil || free_decomp;
      if (pencils) {
        const auto base = rule.decomposition == Decomposition::pencil ? rule.grid : distributed::rule::summa_grid(P);
        for (const auto& gr : pencil_grids(P, base, free_grid ? 2 : 1)) {
          // A pencil on a 1 x P or P x 1 grid exchanges what the slab does and passes through
          // memory once more: not a candidate where the slab is one (unless it is the rule's).
          const bool degenerate = gr[0] == 1 || gr[1] == 1;
          if (degenerate && slab_ok && free_decomp && !(rule.decomposition == Decomposition::pencil && gr == rule.grid))
            continue;
          Options c = rule;
          c.decomposition = Decomposition::pencil, c.grid = gr;
          add(c);
        }
      }
      stage(v);
    }
    if (free_transport) {
      std::vector<Options> v;
      std::vector<Transport> ts{Transport::automatic, Transport::ipc};
      if (g.device_transport(dev) == Transport::nccl) ts = {Transport::automatic, Transport::nccl, Transport::ipc, Transport::nccl_window};
      // What `auto` runs for the transposes is not timed twice: each is an exchange over the
      // whole group (a pencil's leaves the pairs outside a row or column empty) of the spectrum.
      std::erase(ts, distributed::detail::automatic_transport(g, dev, spectrum_bytes(best)));
      for (Transport t : ts) {
        Options c = best;
        c.transport = t == Transport::automatic ? std::nullopt : std::optional<Transport>(t);
        v.push_back(c);
      }
      stage(v);
    }
    if (free_chunks) {
      const auto pair = spectrum_bytes(best) / (static_cast<std::uint64_t>(P) * P);
      const int r = set.fft_chunks_for(dev.is_cuda(), pair);
      std::vector<Options> v{best};
      for (int k : {r / 2, r * 2})
        if (k >= 1 && k <= 16 && k != r) {
          Options c = best;
          c.chunks = k;
          v.push_back(c);
        }
      stage(v);
    }
    return tune::merge(stages, candidate_name(best));
  };
  const tune::Report r = tune::choose(g, mode, key, candidate_name(rule), usable, search);
  described = r.str();
  Options chosen = candidate_options(r.choice());
  chosen.same_layout_output = o.same_layout_output;
  return chosen;
}
}  // namespace detail

Options candidate_options(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("fft: '" + name + "' is not a candidate name (" + why + ")");
  };
  const auto a = name.find('/'), b = a == std::string::npos ? a : name.find('/', a + 1);
  if (b == std::string::npos) throw bad("decomposition/transport/chunks");
  const std::string dec = name.substr(0, a), tr = name.substr(a + 1, b - a - 1), ch = name.substr(b + 1);
  Options o;
  o.tune = distributed::Tune::off;
  const std::string head = dec.substr(0, dec.find(' '));
  if (head == "slab") o.decomposition = Decomposition::slab;
  else if (head == "pencil") o.decomposition = Decomposition::pencil;
  else if (head == "automatic") o.decomposition = Decomposition::automatic;
  else throw bad("decomposition " + head);
  if (dec.size() > head.size()) {
    int r = 0, c = 0;
    if (std::sscanf(dec.c_str() + head.size(), " %dx%d", &r, &c) != 2 || r < 1 || c < 1) throw bad("grid");
    o.grid = {r, c};
  }
  const auto t = distributed::transport_from_name(tr);
  if (!t) throw bad("transport " + tr);
  if (*t != distributed::Transport::automatic) o.transport = *t;
  if (ch != "auto") {
    char* end = nullptr;
    const long k = std::strtol(ch.c_str(), &end, 10);
    if (ch.empty() || *end || k < 1 || k > 1024) throw bad("chunks " + ch);
    o.chunks = static_cast<int>(k);
  }
  return o;
}

std::string candidate_name(const Options& o) {
  std::string s = o.decomposition == Decomposition::slab     ? "slab"
                  : o.decomposition == Decomposition::pencil ? "pencil"
                                                             : "automatic";
  if (o.grid.size() == 2) s += " " + std::to_string(o.grid[0]) + "x" + std::to_string(o.grid[1]);
  s += "/" + distributed::transport_name(o.transport.value_or(distributed::Transport::automatic));
  s += "/" + (o.chunks > 0 ? std::to_string(o.chunks) : std::string("auto"));
  return s;
}

template <class In, int R>
Plan<In, R>::Plan(const Layout<R>& in, Device device, Options options) {
  std::string described;
  const Options chosen = detail::tuned<In, R>(in, device, options, described);
  engine_ = std::make_unique<detail::Engine<In, R>>(in, device, chosen);
  engine_->described = std::move(described);
}
template <class In, int R> const std::string& Plan<In, R>::describe() const { return engine_->described; }
template <class In, int R> Plan<In, R>::~Plan() = default;
template <class In, int R> const Layout<R>& Plan<In, R>::input_layout() const { return engine_->in; }
template <class In, int R> const Layout<R>& Plan<In, R>::output_layout() const { return engine_->out(); }
template <class In, int R> Decomposition Plan<In, R>::decomposition() const { return engine_->decomp; }
template <class In, int R> Device Plan<In, R>::device() const { return engine_->dev; }
template <class In, int R> std::array<index_t, 2> Plan<In, R>::output_order() const {
  if constexpr (R == 1) {
    if (engine_->line) return engine_->line->output_order();
  }
  return {1, engine_->out().global_size()};
}

template <class In, int R>
Array<typename Plan<In, R>::Out, R> Plan<In, R>::forward(const Array<In, R>& x, Norm norm) const {
  return engine_->forward({x}, norm, false)[0];
}
template <class In, int R>
Array<typename Plan<In, R>::Out, R> Plan<In, R>::forward(const Array<In, R>& x, Norm norm,
                                                         const Spectral& multiply) const {
  return engine_->forward({x}, norm, false, multiply)[0];
}
template <class In, int R>
Array<In, R> Plan<In, R>::apply(const Array<In, R>& x, const Spectral& multiply) const {
  return engine_->apply(x, multiply);
}
template <class In, int R>
Array<In, R> Plan<In, R>::backward(const Array<Out, R>& y, Norm norm) const {
  return engine_->backward({y}, norm, false)[0];
}
namespace {
// dst against the layout and device a transform writes (LayoutMismatch, DeviceMismatch), then
// r's interior copied into dst unless the transform wrote dst's memory itself.
template <class T, int R>
void check_destination(const Array<T, R>& dst, const Layout<R>& l, Device dev, const char* op) {
  if (dst.device() != dev)
    throw DeviceMismatch(std::string("fft ") + op + ": destination on " + dst.device().str() + ", plan on " +
                         dev.str());
  if (!dst.layout().same_blocks(l))
    throw distributed::LayoutMismatch(std::string("fft ") + op + ": destination on " + dst.layout().str() +
                                      ", the transform gives " + l.str());
}
template <class T, int R>
void deliver(const Array<T, R>& r, Array<T, R>& dst) {
  if (r.interior().data() == dst.interior().data()) return;
  Stream::default_for(dst.device()).wait_for(dst.stream());
  local::copy(dst.interior(), r.interior());
}
}  // namespace
template <class In, int R>
void Plan<In, R>::forward_into(const Array<In, R>& x, Array<Out, R>& y, Norm norm) const {
  check_destination(y, output_layout(), engine_->dev, "forward_into");
  deliver(engine_->forward({x}, norm, false, {}, &y)[0], y);
}
template <class In, int R>
void Plan<In, R>::backward_into(const Array<Out, R>& y, Array<In, R>& x, Norm norm) const {
  check_destination(x, input_layout(), engine_->dev, "backward_into");
  deliver(engine_->backward({y}, norm, false, &x)[0], x);
}
template <class In, int R>
Array<typename Plan<In, R>::Out, R> Plan<In, R>::forward_in_place_c2c(Array<In, R>& x, Norm norm) const {
  return engine_->forward({x}, norm, true)[0];
}
template <class In, int R>
Array<In, R> Plan<In, R>::backward_in_place(Array<Out, R>& y, Norm norm) const {
  return engine_->backward({y}, norm, true)[0];
}
template <class In, int R>
std::vector<Array<typename Plan<In, R>::Out, R>> Plan<In, R>::forward(const std::vector<Array<In, R>>& xs,
                                                                      Norm norm) const {
  if (xs.empty()) return {};
  return engine_->forward(xs, norm, false);
}
template <class In, int R>
std::vector<Array<In, R>> Plan<In, R>::backward(const std::vector<Array<Out, R>>& ys, Norm norm) const {
  if (ys.empty()) return {};
  return engine_->backward(ys, norm, false);
}

// ---- cache and fftfreq ----

namespace {
// The current Context's plans: they end with it, before MPI_Finalize (a plan holds its group).
struct PlanTag;
using PlanCache = ContextCache<PlanTag, std::string, const void>;
}  // namespace

template <class In, int R>
std::shared_ptr<const Plan<In, R>> get_plan(const Layout<R>& in, Device device, Options o) {
  // The communicator handle tells groups of equal shape apart (the cached plan keeps it alive).
  const std::string key = std::string(typeid(In).name()) + "/" + std::to_string(R) + "/" + in.str() + "/" +
                          std::to_string(static_cast<long long>(MPI_Comm_c2f(in.grid().group().mpi_comm()))) +
                          "/" + device.str() + "/" + std::to_string(static_cast<int>(o.decomposition)) +
                          (o.same_layout_output ? "s" : "n") + std::to_string(o.chunks) + "/" + candidate_name(o) + "/" +
                          distributed::tune_name(o.tune.value_or(distributed::settings().tune));
  // A miss makes the plan (collective) outside the cache's lock.
  return std::static_pointer_cast<const Plan<In, R>>(PlanCache::current().get(
      key, [&]() -> std::shared_ptr<const void> { return std::make_shared<const Plan<In, R>>(in, device, o); }));
}

const char* decomposition_name(Decomposition d) {
  switch (d) {
    case Decomposition::automatic: return "automatic";
    case Decomposition::slab: return "slab";
    case Decomposition::pencil: return "pencil";
    case Decomposition::four_step: return "four-step";
    case Decomposition::bluestein: return "Bluestein";
  }
  return "unknown";
}

void clear_plan_cache() { PlanCache::current().clear(); }

template <class T, int R>
Array<T, R> fftfreq(const Layout<R>& layout, int axis, Device device, double spacing, index_t n_real) {
  if (axis < 0 || axis >= R) throw InvalidArgument("fftfreq: axis " + std::to_string(axis) + " of a " + std::to_string(R) + "-D layout", device);
  if (!(spacing > 0)) throw InvalidArgument("fftfreq: spacing " + std::to_string(spacing) + " must be > 0", device);
  const index_t n = n_real > 0 ? n_real : layout.global_shape()[axis];
  if (n_real > 0 && n_real / 2 + 1 != layout.global_shape()[axis])
    throw InvalidArgument("fftfreq: real size " + std::to_string(n_real) + " does not give " +
                              std::to_string(layout.global_shape()[axis]) + " values along axis " + std::to_string(axis),
                          device);
  const auto box = layout.local_box();
  const auto shape = box.shape();
  std::vector<T> v(static_cast<std::size_t>(local::shape_size(shape)));
  const index_t inner = detail::prod<R>(shape, axis + 1, R), ext = shape[axis];
  for (std::size_t i = 0; i < v.size(); ++i) {
    const index_t k = box.lo[axis] + (static_cast<index_t>(i) / inner) % ext;
    const index_t kk = n_real > 0 || k < (n + 1) / 2 ? k : k - n;
    v[i] = static_cast<T>(static_cast<double>(kk) / (static_cast<double>(n) * spacing));
  }
  Array<T, R> out(layout.with_halo({}), device);
  local::copy(out.interior(), local::Array<T, R>::view(v.data(), shape, Device::host()));
  return out;
}

#define TESSERA_FFT_INSTANTIATE(T, R) \
  template class Plan<T, R>;          \
  template std::shared_ptr<const Plan<T, R>> get_plan<T, R>(const Layout<R>&, Device, Options);
#define TESSERA_FFT_RANKS(T) TESSERA_FOR_EACH_FFT_RANK(TESSERA_FFT_INSTANTIATE, T)
#define TESSERA_FFTFREQ(T, R) template Array<T, R> fftfreq<T, R>(const Layout<R>&, int, Device, double, index_t);
#define TESSERA_FFTFREQ_RANKS(T) TESSERA_FOR_EACH_FFT_RANK(TESSERA_FFTFREQ, T)
TESSERA_FOR_EACH_FFT(TESSERA_FFT_RANKS)
TESSERA_FOR_EACH_REAL(TESSERA_FFTFREQ_RANKS)

}  // namespace tessera::fft
