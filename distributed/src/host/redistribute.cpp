// The exchange behind redistribute, gather, allgather, scatter and slice: both sides described as
// one box per rank in common coordinates; overlaps move as grouped send/recv (redistribute.hpp).
#include "tessera/distributed/redistribute.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../detail/copy_rows.hpp"
#include "../detail/exchange.hpp"

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed {
using detail::Side;
namespace {

template <int R>
std::vector<Box<R>> boxes_of(const Layout<R>& l, const Index<R>& shift = {}) {
  std::vector<Box<R>> b(l.grid().size());
  for (int r = 0; r < l.grid().size(); ++r) {
    b[r] = l.local_box(r);
    for (int a = 0; a < R; ++a) b[r].lo[a] += shift[a], b[r].hi[a] += shift[a];
  }
  return b;
}

// The whole global box on `root` (every rank when root < 0), nothing elsewhere.
template <int R>
std::vector<Box<R>> whole_on(int root, int size, const Index<R>& global) {
  std::vector<Box<R>> b(size);
  for (int r = 0; r < size; ++r)
    if (root < 0 || r == root) b[r].hi = global;
  return b;
}

template <class T, int R>
local::Array<T, R> nothing(Device d) { return local::Array<T, R>::view(nullptr, Index<R>{}, d); }

// Ranks holding identical source boxes (grid axes that split nothing) share the destinations:
// a holder serves itself, and the others round-robin, so each element is sent once.
template <int R>
class Holders {
 public:
  explicit Holders(const std::vector<Box<R>>& src) : set_of_(src.size()) {
    std::map<std::pair<Index<R>, Index<R>>, int> ids;
    for (int p = 0; p < static_cast<int>(src.size()); ++p) {
      auto [it, fresh] = ids.try_emplace({src[p].lo, src[p].hi}, static_cast<int>(sets_.size()));
      if (fresh) sets_.emplace_back();
      sets_[it->second].push_back(p);
      set_of_[p] = it->second;
    }
  }
  bool serves(int p, int q) const {
    const auto& s = sets_[set_of_[p]];
    if (std::binary_search(s.begin(), s.end(), q)) return p == q;
    return s[q % s.size()] == p;
  }

 private:
  std::vector<std::vector<int>> sets_;  // ascending ranks
  std::vector<int> set_of_;
};

// Chunking: both ends cut a piece the same way, from its box and the environment. The host
// gains nothing from it (MPI calls return when done) unless asked, which the tests do.
struct Tuning {
  int max_chunks = 1;
  index_t min_chunk_bytes = 1;
  int axis = -1;  // >= 0: cut along this axis into min(max_chunks, extent) parts (detail::Chunking)
};
Tuning tuning(Device d) {
  const char* c = std::getenv("TESSERA_REDISTRIBUTE_CHUNKS");
  const char* m = std::getenv("TESSERA_REDISTRIBUTE_CHUNK_MIB");
  Tuning t;
  t.max_chunks = c ? std::max(1, std::atoi(c)) : d.is_cuda() ? 4 : 1;  // 4: best on 4 H200s
  t.min_chunk_bytes = std::max<index_t>(1, (m ? std::atoll(m) : 16) << 20);
  return t;
}

// A piece to or from one peer, cut along its first axis longer than 1 (so that parts of a
// contiguous piece stay contiguous); `staged` pieces go through a buffer at `offsets`.
template <int R>
struct Piece {
  int peer;
  std::vector<Box<R>> parts;
  bool staged = false;
  std::vector<std::size_t> offsets;
};

template <int R>
Piece<R> cut(int peer, const Box<R>& b, std::size_t esz, const Tuning& t) {
  int axis = t.axis;
  if (axis < 0)
    for (axis = 0; axis + 1 < R && b.shape()[axis] <= 1;) ++axis;
  const index_t extent = b.shape()[axis];
  const index_t want = t.axis >= 0 ? t.max_chunks : static_cast<index_t>(b.size() * esz) / t.min_chunk_bytes;
  const index_t n = std::max<index_t>(1, std::min({want, static_cast<index_t>(t.max_chunks), extent}));
  Piece<R> p{peer, {}};
  for (index_t k = 0; k < n; ++k) {
    Box<R> c = b;
    c.lo[axis] = b.lo[axis] + extent * k / n;
    c.hi[axis] = b.lo[axis] + extent * (k + 1) / n;
    p.parts.push_back(c);
  }
  return p;
}

// Lays out the staged pieces in one buffer; returns its size in elements.
template <int R>
std::size_t place(std::vector<Piece<R>>& pieces) {
  std::size_t n = 0;
  for (auto& p : pieces) {
    if (!p.staged) continue;
    for (const auto& c : p.parts) p.offsets.push_back(n), n += static_cast<std::size_t>(c.size());
  }
  return n;
}

// A stream for transfers, so that they overlap packing (and FFT stages) on the default stream;
// high priority, so that NCCL's kernels get SMs as soon as a compute kernel's blocks retire.
const Stream& transfer_stream(Device d) {
  if (!d.is_cuda()) return Stream::default_for(d);
  static std::mutex mu;
  static auto* streams = new std::map<int, Stream*>();  // leaked: CUDA may be gone at exit
  std::lock_guard<std::mutex> lock(mu);
  auto& s = (*streams)[d.index()];
  if (!s) s = new Stream(d, Stream::Priority::high);
  return *s;
}

// The NCCL communicator is made collectively on a group's first device call; a rank with nothing
// to move would skip that and hang the others, so every rank makes it here first (once per group
// and device; the group is kept alive so that its communicator handle is never reused).
void prepare(const comm::ProcessGroup& g, const Stream& s) {
  if (!s.device().is_cuda() || g.size() == 1) return;
  static std::mutex mu;
  static auto* ready = new std::vector<std::pair<comm::ProcessGroup*, int>>();
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [pg, dev] : *ready)
      if (pg->mpi_comm() == g.mpi_comm() && dev == s.device().index()) return;
  }
  Buffer scratch(sizeof(std::int32_t), s);
  g.all_reduce(scratch.data(), scratch.data(), 1, DType::int32, comm::ReduceOp::max, s);
  std::lock_guard<std::mutex> lock(mu);
  ready->push_back({new comm::ProcessGroup(g), s.device().index()});
}

}  // namespace

template <class T, int R>
void detail::exchange(const comm::ProcessGroup& g, const Side<T, R>& src, const Side<T, R>& dst, const Stream& user,
                      Device d, const Chunking* chunking) {
  const int me = g.rank();
  Tuning tune = tuning(d);
  int hooks = 0;  // producer steps: chunks of this rank's source box
  if (chunking) {
    tune.axis = chunking->axis;
    tune.max_chunks = std::max(1, chunking->count);
    const index_t extent = src.boxes[me].shape()[chunking->axis];
    hooks = static_cast<int>(std::max<index_t>(1, std::min<index_t>(tune.max_chunks, extent)));
  }
  const Holders<R> holders(src.boxes);
  std::vector<Piece<R>> sends, recvs;
  std::optional<Box<R>> self;
  for (int q = 0; q < g.size(); ++q) {
    if (holders.serves(me, q)) {
      const auto b = src.boxes[me].intersect(dst.boxes[q]);
      if (!b.empty() && q == me) self = b;
      else if (!b.empty()) sends.push_back(cut(q, b, sizeof(T), tune));
    }
    if (q != me && holders.serves(q, me)) {
      const auto b = src.boxes[q].intersect(dst.boxes[me]);
      if (!b.empty()) recvs.push_back(cut(q, b, sizeof(T), tune));
    }
  }
  // A piece goes through a buffer unless every part is contiguous where it lies.
  auto staged = [me](const Side<T, R>& side, const Piece<R>& p) {
    for (const auto& c : p.parts)
      if (!side.view(c, me).is_contiguous()) return true;
    return false;
  };
  int steps = hooks;
  for (auto& p : sends) p.staged = staged(src, p), steps = std::max(steps, static_cast<int>(p.parts.size()));
  for (auto& p : recvs) p.staged = staged(dst, p), steps = std::max(steps, static_cast<int>(p.parts.size()));
  const std::size_t pack_n = place(sends), unpack_n = place(recvs);

  DeviceGuard guard(d);
  const Stream& work = Stream::default_for(d);  // packing, local copies, results
  const Stream& wire = transfer_stream(d);
  prepare(g, wire);
  if (&user != &work) {
    Event e(d);
    e.record(user);
    e.wait_on(work);
  }
  std::optional<Buffer> pack, unpack;
  if (pack_n) pack.emplace(pack_n * sizeof(T), work);
  if (unpack_n) unpack.emplace(unpack_n * sizeof(T), work);
  auto staging = [&](const std::optional<Buffer>& b, const Piece<R>& p, int k) {
    return local::Array<T, R>::view(static_cast<T*>(b->data()) + p.offsets[k], p.parts[k].shape(), d);
  };
  const bool remote = !sends.empty() || !recvs.empty();
  if (remote && &wire != &work) {  // the source, the destination and the buffers are ready
    Event e(d);
    e.record(work);
    e.wait_on(wire);
  }

  std::vector<std::pair<int, Event>> arrived;  // steps with staged receives, and their events
  for (int s = 0; s < steps; ++s) {
    if (s < hooks) chunking->produce(s, hooks, work);
    bool packed = false;
    for (const auto& p : sends)
      if (p.staged && s < static_cast<int>(p.parts.size()))
        detail::copy_view(staging(pack, p, s), src.view(p.parts[s], me)), packed = true;
    // The transfers of step s read what the producer or the packing just wrote on `work`.
    if ((packed || s < hooks) && &wire != &work) {
      Event e(d);
      e.record(work);
      e.wait_on(wire);
    }
    comm::Group group;
    bool staged_in = false;
    for (const auto& p : sends) {
      if (s >= static_cast<int>(p.parts.size())) continue;
      const T* buf = p.staged ? staging(pack, p, s).data() : src.view(p.parts[s], me).data();
      g.send(buf, static_cast<std::size_t>(p.parts[s].size()), dtype_v<T>, p.peer, wire);
    }
    for (const auto& p : recvs) {
      if (s >= static_cast<int>(p.parts.size())) continue;
      T* buf = p.staged ? staging(unpack, p, s).data() : dst.view(p.parts[s], me).data();
      g.recv(buf, static_cast<std::size_t>(p.parts[s].size()), dtype_v<T>, p.peer, wire);
      staged_in = staged_in || p.staged;
    }
    group.end();
    if (staged_in) {
      arrived.emplace_back(s, Event(d));
      arrived.back().second.record(wire);
    }
  }
  if (self) detail::copy_view(dst.view(*self, me), src.view(*self, me));  // overlaps the last transfers
  for (auto& [s, e] : arrived) {
    e.wait_on(work);
    for (const auto& p : recvs)
      if (p.staged && s < static_cast<int>(p.parts.size())) detail::copy_view(dst.view(p.parts[s], me), staging(unpack, p, s));
  }
  if (remote && &wire != &work) {  // results, and the buffers' release, after the transfers
    Event e(d);
    e.record(wire);
    e.wait_on(work);
  }
  if (&user != &work) {  // the source may be overwritten on its stream once we have read it
    Event e(d);
    e.record(work);
    e.wait_on(user);
  }
}

namespace {
template <int R>
void check_root(const comm::ProcessGroup& g, int root, const char* op, Device d) {
  if (root < 0 || root >= g.size())
    throw InvalidArgument(std::string(op) + ": root " + std::to_string(root) + " outside a group of " +
                              std::to_string(g.size()) + " ranks",
                          d);
}

}  // namespace

template <class T, int R>
Array<T, R> redistribute(const Array<T, R>& a, const Layout<R>& to) {
  const auto agreed = check_call<T, R>("redistribute", a.layout(), a.device(), "to", to);
  const Device d = a.device();
  const auto& from = a.layout();
  if (from.global_shape() != to.global_shape())
    throw ShapeMismatch("shape mismatch in redistribute: " + Layout<R>::idx_str(from.global_shape()) + " vs " +
                            Layout<R>::idx_str(to.global_shape()),
                        d);
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(from.grid().group().mpi_comm(), to.grid().group().mpi_comm(), &cmp);
  if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)
    throw LayoutMismatch("layout mismatch in redistribute: " + from.str() + " and " + to.str() +
                             " are over different process groups (the same ranks in the same order are needed)",
                         d);
  Array<T, R> out(to, d);
  detail::exchange<T, R>(from.grid().group(), {boxes_of(from), a.interior()}, {boxes_of(to), out.interior()}, a.stream(), d);
  return out;
}

template <class T, int R>
local::Array<T, R> gather(const Array<T, R>& a, int root) {
  const auto agreed = check_call<T, R>("gather", a.layout(), a.device(), "root", root);
  const Device d = a.device();
  const auto& l = a.layout();
  const auto& g = l.grid().group();
  check_root<R>(g, root, "gather", d);
  auto out = g.rank() == root ? local::Array<T, R>(l.global_shape(), d) : nothing<T, R>(d);
  detail::exchange<T, R>(g, {boxes_of(l), a.interior()}, {whole_on<R>(root, g.size(), l.global_shape()), out}, a.stream(), d);
  return out;
}

template <class T, int R>
local::Array<T, R> allgather(const Array<T, R>& a) {
  const auto agreed = check_call<T, R>("allgather", a.layout(), a.device());
  const Device d = a.device();
  const auto& l = a.layout();
  const auto& g = l.grid().group();
  local::Array<T, R> out(l.global_shape(), d);
  detail::exchange<T, R>(g, {boxes_of(l), a.interior()}, {whole_on<R>(-1, g.size(), l.global_shape()), out}, a.stream(), d);
  return out;
}

template <class T, int R>
Array<T, R> scatter(int root, const local::Array<T, R>& global, const Layout<R>& layout, Device d) {
  const auto agreed = check_call<T, R>("scatter", layout, d, "root", root);
  const auto& g = layout.grid().group();
  check_root<R>(g, root, "scatter", d);
  const bool root_here = g.rank() == root;
  // Only root can check its array: tell every rank, so that all throw together.
  const int shape_ok = g.all_reduce(root_here && global.shape() != layout.global_shape() ? 0 : 1, comm::ReduceOp::min);
  if (!shape_ok)
    throw ShapeMismatch("shape mismatch in scatter: root " + std::to_string(root) + " holds " +
                            (root_here ? local::shape_str(global.shape()) : std::string("an array")) +
                            " for layout of global shape " + Layout<R>::idx_str(layout.global_shape()),
                        d);
  Array<T, R> out(layout, d);
  local::Array<T, R> data = !root_here ? nothing<T, R>(d) : global.device() == d ? global : global.to(d);
  detail::exchange<T, R>(g, {whole_on<R>(root, g.size(), layout.global_shape()), data}, {boxes_of(layout), out.interior()},
                 Stream::default_for(d), d);
  return out;
}

template <class T, int R>
Array<T, R> slice(const Array<T, R>& a, const Box<R>& ranges) {
  const auto agreed = check_call<T, R>("slice", a.layout(), a.device(), "box", ranges);
  const Device d = a.device();
  const auto& l = a.layout();
  for (int ax = 0; ax < R; ++ax)
    if (ranges.lo[ax] < 0 || ranges.hi[ax] < ranges.lo[ax] || ranges.hi[ax] > l.global_shape()[ax])
      throw InvalidArgument("slice: box " + ranges.str() + " is not inside global shape " +
                                Layout<R>::idx_str(l.global_shape()),
                            d);
  Layout<R> sub(l.grid(), ranges.shape(), l.split());
  Array<T, R> out(sub, d);
  detail::exchange<T, R>(l.grid().group(), {boxes_of(l), a.interior()}, {boxes_of<R>(sub, ranges.lo), out.interior()}, a.stream(),
                 d);
  return out;
}

#define TESSERA_REDISTRIBUTE_INSTANTIATE(T, R)                                                                  \
  template void detail::exchange<T, R>(const comm::ProcessGroup&, const Side<T, R>&, const Side<T, R>&,            \
                                       const Stream&, Device, const detail::Chunking*);                          \
  template Array<T, R> redistribute<T, R>(const Array<T, R>&, const Layout<R>&);                               \
  template local::Array<T, R> gather<T, R>(const Array<T, R>&, int);                                          \
  template local::Array<T, R> allgather<T, R>(const Array<T, R>&);                                            \
  template Array<T, R> scatter<T, R>(int, const local::Array<T, R>&, const Layout<R>&, Device);               \
  template Array<T, R> slice<T, R>(const Array<T, R>&, const Box<R>&);
#define TESSERA_REDISTRIBUTE_RANKS(T) \
  TESSERA_REDISTRIBUTE_INSTANTIATE(T, 1) TESSERA_REDISTRIBUTE_INSTANTIATE(T, 2) \
  TESSERA_REDISTRIBUTE_INSTANTIATE(T, 3) TESSERA_REDISTRIBUTE_INSTANTIATE(T, 4)
TESSERA_REDISTRIBUTE_RANKS(bool)
TESSERA_REDISTRIBUTE_RANKS(std::int32_t)
TESSERA_REDISTRIBUTE_RANKS(std::int64_t)
TESSERA_REDISTRIBUTE_RANKS(float)
TESSERA_REDISTRIBUTE_RANKS(double)
TESSERA_REDISTRIBUTE_RANKS(complex64)
TESSERA_REDISTRIBUTE_RANKS(complex128)
#undef TESSERA_REDISTRIBUTE_RANKS
#undef TESSERA_REDISTRIBUTE_INSTANTIATE

}  // namespace tessera::distributed
