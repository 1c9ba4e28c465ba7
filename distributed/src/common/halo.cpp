// Halo exchange (halo.hpp). One code path for both backends: pack the send regions with the
// precompiled strided copy, post the grouped sends and receives, unpack the halos (contiguous
// regions are sent from and received into the shard in place). Only the
// streams differ: on a GPU the transfers run on a communication stream between two events, so
// that work the caller enqueues after begin() overlaps them.
//
// Every rank derives every rank's halo pieces from the Layout alone, so the two sides of a
// message agree on its size and on its place in the per-peer order (NCCL and MPI match the
// sends and receives between two ranks in posting order): messages between a pair of ranks are
// posted in the order of the receiver's halo directions, on both sides.
#include "tessera/distributed/halo.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include "tessera/local/context_cache.hpp"
#include "tessera/local/jit/compiler.hpp"  // fnv1a
#include "tessera/local/element_types.hpp"
#include <optional>
#include <utility>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "../detail/copy_rows.hpp"

namespace tessera::distributed {
namespace {

// A box of a padded shard, in shard coordinates.
template <int R>
struct Region {
  Index<R> start{}, shape{};
  index_t size() const { return local::shape_size(shape); }
};

// Halo cells `to` of a rank come from the cells `from` of rank `src`.
template <int R>
struct Piece {
  int src = -1;
  Region<R> from, to;
};

template <int R>
using Dir = std::array<int, R>;

// {-1,0,1}^R without the zero vector, in lexicographic order (the canonical message order).
template <int R>
std::vector<Dir<R>> directions() {
  std::vector<Dir<R>> out;
  Dir<R> d;
  d.fill(-1);
  for (;;) {
    if (std::any_of(d.begin(), d.end(), [](int x) { return x != 0; })) out.push_back(d);
    int a = R - 1;
    while (a >= 0 && d[a] == 1) d[a--] = -1;
    if (a < 0) return out;
    ++d[a];
  }
}

// Where the halo of rank q (grid coordinates c, block b) in direction `dir` comes from; nullopt
// where it lies beyond a non-periodic boundary or holds no cells.
template <int R>
std::optional<Piece<R>> halo_piece(const Layout<R>& l, std::vector<int> c, const Box<R>& b, const Dir<R>& dir) {
  const auto& h = l.halo();
  const auto& n = l.global_shape();
  Piece<R> p;
  for (int a = 0; a < R; ++a) {
    const index_t width = b.hi[a] - b.lo[a];
    if (dir[a] == 0) {  // the block's own extent: the source has the same coordinate on this axis
      if (width == 0) return std::nullopt;
      p.from.start[a] = p.to.start[a] = h[a];
      p.from.shape[a] = p.to.shape[a] = width;
      continue;
    }
    if (h[a] == 0 || n[a] == 0) return std::nullopt;
    index_t start = dir[a] < 0 ? b.lo[a] - h[a] : b.hi[a];
    if (start < 0 || start >= n[a]) {
      if (!l.periodic()[a]) return std::nullopt;
      start = (start % n[a] + n[a]) % n[a];
    }
    if (start + h[a] > n[a])  // Layout forbids this on split axes; on whole axes the axis is too short
      throw InvalidArgument("exchange_halos: halo " + std::to_string(h[a]) + " on axis " + std::to_string(a) +
                            " needs more cells than the " + std::to_string(n[a]) + " of the axis in " + l.str());
    index_t src_lo = 0;
    if (const int g = l.split()[a]; g >= 0) {
      // The block holding `start` (upper_bound skips empty blocks); the Layout's halo check
      // guarantees that it holds the whole halo.
      const auto& o = l.offsets(a);
      const int k = static_cast<int>(std::upper_bound(o.begin(), o.end(), start) - o.begin()) - 1;
      if (start + h[a] > o[k + 1])
        throw InvalidArgument("exchange_halos: halo " + std::to_string(h[a]) + " on axis " + std::to_string(a) +
                              " spans two blocks of " + l.str());
      c[g] = k;
      src_lo = o[k];
    }
    p.from.start[a] = h[a] + start - src_lo;
    p.from.shape[a] = p.to.shape[a] = h[a];
    p.to.start[a] = dir[a] < 0 ? 0 : h[a] + width;
  }
  p.src = l.grid().rank_at(c);
  return p;
}

// This rank's part of the exchange: remote messages in posting order, with their places in
// the packed buffers (elements), and the pieces it copies from itself.
template <int R>
struct Plan {
  struct Message {
    int peer;
    Region<R> region;
    index_t offset;
  };
  std::vector<Message> sends, recvs;
  std::vector<std::pair<Region<R>, Region<R>>> self;  // (from, to)
  index_t send_size = 0, recv_size = 0;
  bool any_remote = false;  // whether any rank of the grid has a remote message
};

template <int R>
Plan<R> make_plan(const Layout<R>& l) {
  Plan<R> p;
  const auto& grid = l.grid();
  const int me = grid.rank();
  const auto dirs = directions<R>();
  for (int q = 0; q < grid.size(); ++q) {
    const auto c = grid.coords(q);
    const auto b = l.local_box(q);
    for (const auto& dir : dirs) {
      const auto piece = halo_piece<R>(l, c, b, dir);
      if (!piece) continue;
      const index_t n = piece->to.size();
      if (n == 0) continue;
      p.any_remote = p.any_remote || piece->src != q;
      if (q == me && piece->src == me) {
        p.self.emplace_back(piece->from, piece->to);
      } else if (q == me) {
        p.recvs.push_back({piece->src, piece->to, p.recv_size});
        p.recv_size += n;
      } else if (piece->src == me) {
        p.sends.push_back({q, piece->from, p.send_size});
        p.send_size += n;
      }
    }
  }
  return p;
}

template <class T, int R>
local::Array<T, R> region_view(const local::Array<T, R>& shard, const Region<R>& r) {
  auto v = shard;
  for (int a = 0; a < R; ++a) v = v.slice(a, r.start[a], r.start[a] + r.shape[a]);
  return v;
}

template <class T, int R>
local::Array<T, R> packed_view(const local::Array<T, 1>& buf, const typename Plan<R>::Message& m) {
  return local::Array<T, R>::view(buf.data() + m.offset, m.region.shape, buf.device());
}

// Where a message's cells travel from or to: the region itself where it is contiguous, else its
// place in the packed buffer.
template <class T, int R>
T* in_place(const local::Array<T, R>& shard, const Region<R>& r, const local::Array<T, 1>& buf, index_t offset) {
  const auto v = region_view(shard, r);
  return v.is_contiguous() ? v.data() : buf.data() + offset;
}

// The stream on which a device's halo transfers run: the Context's comm stream.
const Stream& comm_stream(Device d) { return Context::current().stream(d, StreamRole::comm); }

// Cached per (layout, device, type): the plan, the packed buffers and the events ordering the
// streams. An entry serves one exchange at a time (busy between begin and end).
template <class T, int R>
struct Entry {
  Layout<R> layout;
  Device device;
  Plan<R> plan;
  local::Array<T, 1> send_buf, recv_buf;
  Event array_ready, packed, arrived, unpacked;
  std::atomic<bool> busy{false};  // set under its pool's lock; cleared by release() without it

  Entry(const Layout<R>& l, Device d)
      : layout(l), device(d), plan(make_plan(l)),
        send_buf(Index<1>{plan.send_size}, d), recv_buf(Index<1>{plan.recv_size}, d),
        array_ready(d), packed(d), arrived(d), unpacked(d) {}
};

// The entries of one (layout, device): usually one; more only while exchanges on that layout
// overlap (begin ... begin ... end ... end).
template <class T, int R>
struct Pool {
  std::mutex mu;
  std::vector<std::shared_ptr<Entry<T, R>>> entries;
};
template <int R>
struct PoolKey {
  Layout<R> layout;
  Device device;
  bool operator==(const PoolKey& o) const { return device == o.device && layout == o.layout; }
};
template <int R>
struct PoolKeyHash {
  // From the shape, splits and halo widths (no string built on this per-exchange path); equal
  // keys still compare whole layouts.
  std::size_t operator()(const PoolKey<R>& k) const {
    const auto& l = k.layout;
    std::uint64_t h = local::jit::fnv1a(l.global_shape().data(), sizeof(index_t) * R);
    h = local::jit::fnv1a(l.split().data(), sizeof(l.split()[0]) * R, h);
    h = local::jit::fnv1a(l.halo().data(), sizeof(index_t) * R, h);
    const int dev[2] = {static_cast<int>(k.device.kind()), k.device.index()};
    return static_cast<std::size_t>(local::jit::fnv1a(dev, sizeof dev, h));
  }
};
// The current Context's pools, at most 8 layouts (the least recently used idle one goes first):
// their buffers and events end with it.
template <class T, int R>
using PoolCache = ContextCache<Entry<T, R>, PoolKey<R>, Pool<T, R>, 8, PoolKeyHash<R>>;

// An idle entry for this layout and device (made on a miss; collective then, like the exchange).
template <class T, int R>
std::shared_ptr<Entry<T, R>> acquire(const Layout<R>& l, Device d) {
  const auto pool = PoolCache<T, R>::current().get({l, d}, [] { return std::make_shared<Pool<T, R>>(); });
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    for (const auto& e : pool->entries)
      if (!e->busy) {
        e->busy = true;
        return e;
      }
  }
  auto e = std::make_shared<Entry<T, R>>(l, d);
  // Collective on a miss, like the exchange: ranks without messages of their own take part too.
  if (e->plan.any_remote) l.grid().group().prepare(d);
  e->busy = true;
  std::lock_guard<std::mutex> lock(pool->mu);
  pool->entries.push_back(e);
  return e;
}

// Ends an exchange: the entry may serve the next one. Needs neither the cache nor its Context, so
// a HaloExchange ended in another Context (or after its own ended) still releases its entry.
template <class T, int R>
void release(Entry<T, R>& e) {
  e.busy.store(false);
}

}  // namespace

template <class T, int Rank>
struct HaloExchange<T, Rank>::Impl {
  Array<T, Rank> array;
  std::shared_ptr<Entry<T, Rank>> entry;
  ~Impl() {
    if (entry) release(*entry);
  }
};

template <class T, int Rank>
HaloExchange<T, Rank> exchange_halos_begin(Array<T, Rank>& a) {
  const auto agreed = check_call<T, Rank>("exchange_halos", a.layout(), a.device());
  HaloExchange<T, Rank> h;
  const auto& widths = a.layout().halo();
  if (std::all_of(widths.begin(), widths.end(), [](index_t w) { return w == 0; })) return h;  // nothing to do
  const Device d = a.device();
  const DeviceGuard guard(d);
  auto impl = std::make_unique<typename HaloExchange<T, Rank>::Impl>();
  impl->array = a;
  impl->entry = acquire<T, Rank>(a.layout(), d);
  auto& e = *impl->entry;
  const auto& p = e.plan;
  const Stream& work = Stream::default_for(d);  // where the local copies run
  const Stream& comm_s = comm_stream(d);
  const auto& shard = a.local();

  if (&a.stream() != &work) {  // the local copies must follow the array's producers
    e.array_ready.record(a.stream());
    e.array_ready.wait_on(work);
  }
  // Contiguous regions (faces across the outermost split axis) travel in place: no pack, no unpack.
  for (const auto& m : p.sends)
    if (const auto v = region_view(shard, m.region); !v.is_contiguous())
      detail::copy_view(packed_view<T, Rank>(e.send_buf, m), v);
  for (const auto& [from, to] : p.self) detail::copy_view(region_view(shard, to), region_view(shard, from));
  if (!p.sends.empty() || !p.recvs.empty()) {
    e.packed.record(work);
    e.packed.wait_on(comm_s);
    const auto& group = a.layout().grid().group();
    comm::Group g;
    for (const auto& m : p.recvs)
      group.recv(in_place(shard, m.region, e.recv_buf, m.offset), static_cast<std::size_t>(m.region.size()),
                 dtype_v<T>, m.peer, comm_s);
    for (const auto& m : p.sends)
      group.send(in_place(shard, m.region, e.send_buf, m.offset), static_cast<std::size_t>(m.region.size()),
                 dtype_v<T>, m.peer, comm_s);
    g.end();
    e.arrived.record(comm_s);
  }
  h.impl_ = std::move(impl);
  h.uncaught_ = std::uncaught_exceptions();
  return h;
}

template <class T, int Rank>
void HaloExchange<T, Rank>::end() {
  if (!impl_) return;
  const auto impl = std::move(impl_);  // ends once, even if unpacking throws
  auto& e = *impl->entry;
  const auto& a = impl->array;
  const Device d = a.device();
  const DeviceGuard guard(d);
  const Stream& work = Stream::default_for(d);
  if (!e.plan.sends.empty() || !e.plan.recvs.empty()) {
    e.arrived.wait_on(work);  // also keeps the next packing off the send buffer until it is sent
    for (const auto& m : e.plan.recvs)
      if (const auto v = region_view(a.local(), m.region); !v.is_contiguous())
        detail::copy_view(v, packed_view<T, Rank>(e.recv_buf, m));
  }
  if (&a.stream() != &work) {
    e.unpacked.record(work);
    e.unpacked.wait_on(a.stream());
  }
}

template <class T, int Rank>
HaloExchange<T, Rank>::HaloExchange(HaloExchange&& o) noexcept
    : impl_(std::move(o.impl_)), uncaught_(o.uncaught_) {}

template <class T, int Rank>
HaloExchange<T, Rank>& HaloExchange<T, Rank>::operator=(HaloExchange&& o) noexcept {
  if (this != &o) {
    try {
      end();
    } catch (...) {
    }
    impl_ = std::move(o.impl_);
    uncaught_ = o.uncaught_;
  }
  return *this;
}

template <class T, int Rank>
HaloExchange<T, Rank>::~HaloExchange() noexcept(false) {
  if (!impl_) return;
  if (std::uncaught_exceptions() > uncaught_) {
    try {
      end();
    } catch (...) {
    }
    return;
  }
  end();
}

#define TESSERA_HALO_INSTANTIATE(T, R) \
  template class HaloExchange<T, R>;   \
  template HaloExchange<T, R> exchange_halos_begin<T, R>(Array<T, R>&);
#define TESSERA_HALO_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_HALO_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_HALO_RANKS)

}  // namespace tessera::distributed
