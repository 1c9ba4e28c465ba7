// The exchange engine (exchange.hpp): plan the overlaps, pack, transfer, unpack, chunked.
#include "tessera/distributed/settings.hpp"
#include "tessera/distributed/exchange.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "../detail/copy_rows.hpp"
#include "../detail/transport.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/settings.hpp"

namespace tessera::distributed {
namespace {

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

// Rows of at least this many bytes go to a strided-send transport as they lie; shorter ones are
// packed (docs/performance/collectives-and-exchange.md, History).
constexpr std::size_t min_direct_row_bytes = std::size_t{64} << 10;

// Chunking: both ends cut a piece the same way, from its box and the options (defaults from the
// settings, equal on all ranks). The host gains nothing from it (MPI calls return when done)
// unless asked, which the tests do.
struct Tuning {
  int max_chunks = 1;
  index_t min_chunk_bytes = 1;
  int axis = -1;  // >= 0: cut along this axis into min(max_chunks, extent) parts (ExchangeChunking)
};
Tuning tuning(Device d, const ExchangeOptions& o) {
  Tuning t;
  t.max_chunks = o.chunks > 0 ? o.chunks : distributed::settings().chunks_for(d.is_cuda());
  const int mib = o.chunk_mib >= 0 ? o.chunk_mib : distributed::settings().exchange_chunk_mib;
  t.min_chunk_bytes = std::max<index_t>(1, static_cast<index_t>(mib) << 20);
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
  for (int k = 0; k < n; ++k) {
    Box<R> c = b;
    c.lo[axis] = b.lo[axis] + chunk_begin(extent, k, static_cast<int>(n));
    c.hi[axis] = b.lo[axis] + chunk_begin(extent, k + 1, static_cast<int>(n));
    p.parts.push_back(c);
  }
  return p;
}

// Lays out the staged pieces in one buffer (byte offsets); returns its size in bytes.
template <int R>
std::size_t place(std::vector<Piece<R>>& pieces, std::size_t esz) {
  std::size_t n = 0;
  for (auto& p : pieces) {
    if (!p.staged) continue;
    for (const auto& c : p.parts) p.offsets.push_back(n), n += static_cast<std::size_t>(c.size()) * esz;
  }
  return n;
}

template <int R>
std::vector<detail::PeerSteps> steps_of(const std::vector<Piece<R>>& pieces, std::size_t esz) {
  std::vector<detail::PeerSteps> v;
  for (const auto& p : pieces) {
    v.push_back({p.peer, {}});
    for (const auto& c : p.parts) v.back().bytes.push_back(static_cast<std::size_t>(c.size()) * esz);
  }
  return v;
}


}  // namespace

index_t chunk_begin(index_t extent, int s, int n) {
  if (n < 3 || extent < 2 * static_cast<index_t>(n) || !distributed::settings().exchange_taper) return extent * s / n;
  if (s == 0 || s == n) return s == 0 ? 0 : extent;
  return extent * (2 * s - 1) / (2 * n - 2);  // weights 1, 2, ..., 2, 1
}

template <class T, int R>
void exchange(const comm::ProcessGroup& g, const ExchangeSide<T, R>& src, const ExchangeSide<T, R>& dst,
              const Stream& user, Device d, const ExchangeOptions& options) {
  using Side = ExchangeSide<T, R>;
  const ExchangeChunking* chunking = options.chunking;
  const int me = g.rank();
  Tuning tune = tuning(d, options);
  int hooks = 0, sinks = 0;  // producer / consumer steps: chunks of this rank's source / destination box
  if (chunking) {
    tune.axis = chunking->axis;
    tune.max_chunks = std::max(1, chunking->count);
    auto parts = [&](const Box<R>& b) {
      return static_cast<int>(std::max<index_t>(1, std::min<index_t>(tune.max_chunks, b.shape()[tune.axis])));
    };
    if (chunking->produce) hooks = parts(src.boxes[me]);
    if (chunking->consume) sinks = parts(dst.boxes[me]);
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
  DeviceGuard guard(d);
  Transport chosen = options.transport.value_or(distributed::settings().transport);
  if (chosen == Transport::automatic) {
    std::size_t global = 0;  // the same on every rank
    for (const auto& b : src.boxes) global += static_cast<std::size_t>(b.size()) * sizeof(T);
    chosen = detail::automatic_transport(g, d, global);
  }
  auto& transport = detail::exchange_transport(g, d, chosen);
  // A piece goes through a buffer unless every part is contiguous where it lies; with a windowed
  // transport every received piece lands in the window.
  auto staged = [me](const Side& side, const Piece<R>& p) {
    for (const auto& c : p.parts)
      if (!side.view(c, me).is_contiguous()) return true;
    return false;
  };
  // A transport that sends rows at a pitch takes such parts as they lie, where the rows are long
  // (min_direct_row_bytes).
  auto direct = [&](const Piece<R>& p) {
    if (!transport.strided_sends()) return false;
    for (const auto& c : p.parts) {
      detail::Rows r;
      const bool rows = detail::as_rows(src.view(c, me), &r);
      if (!rows || (r.rows > 1 && r.run * sizeof(T) < min_direct_row_bytes)) return false;
    }
    return true;
  };
  int steps = std::max(hooks, sinks);
  for (auto& p : sends)
    p.staged = staged(src, p) && !direct(p), steps = std::max(steps, static_cast<int>(p.parts.size()));
  for (auto& p : recvs) p.staged = staged(dst, p), steps = std::max(steps, static_cast<int>(p.parts.size()));

  const Stream& work = Stream::default_for(d);  // packing, local copies, results
  // Transfers on their own stream, so that they overlap packing (and FFT stages) on `work`;
  // high priority, so that NCCL's kernels get SMs as soon as a compute kernel's blocks retire.
  const Stream& wire = Context::current().stream(d, StreamRole::transfer);
  if (&user != &work) {
    Event e(d);
    e.record(user);
    e.wait_on(work);
  }
  // Staging: a buffer of ours, or the windows of a windowed transport (collective: every rank,
  // even one with nothing to move), where all received parts land, and all sent ones too if the
  // transport says where.
  char* pack = nullptr;
  char* unpack = nullptr;
  if (transport.windowed()) {
    auto w = transport.begin(steps_of(recvs, sizeof(T)), steps_of(sends, sizeof(T)), work);
    steps = std::max(steps, w.steps);
    unpack = w.recv;
    for (std::size_t k = 0; k < recvs.size(); ++k) recvs[k].staged = true, recvs[k].offsets = std::move(w.recv_at[k]);
    if (w.send) {
      pack = w.send;
      for (std::size_t k = 0; k < sends.size(); ++k) sends[k].staged = true, sends[k].offsets = std::move(w.send_at[k]);
    }
  }
  std::optional<Buffer> pack_buf, unpack_buf;
  if (!pack) {
    if (const std::size_t n = place(sends, sizeof(T))) pack_buf.emplace(n, work), pack = static_cast<char*>(pack_buf->data());
  }
  if (!unpack) {
    if (const std::size_t n = place(recvs, sizeof(T))) unpack_buf.emplace(n, work), unpack = static_cast<char*>(unpack_buf->data());
  }
  auto staging = [&](char* b, const Piece<R>& p, int k) {
    return local::Array<T, R>::view(reinterpret_cast<T*>(b + p.offsets[k]), p.parts[k].shape(), d);
  };
  const bool remote = !sends.empty() || !recvs.empty();
  if (remote && &wire != &work) {  // the source, the destination and the buffers are ready
    Event e(d);
    e.record(work);
    e.wait_on(wire);
  }

  std::vector<std::pair<int, Event>> arrived;  // steps with staged receives (any, for a consumer), and their events
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
    std::vector<detail::Message> out, in;
    bool staged_in = false;
    for (const auto& p : sends) {
      if (s >= static_cast<int>(p.parts.size())) continue;
      const auto part = p.staged ? staging(pack, p, s) : src.view(p.parts[s], me);
      detail::Message m{p.peer, part.data(), static_cast<std::size_t>(p.parts[s].size())};
      if (detail::Rows r; !p.staged && !part.is_contiguous() && detail::as_rows(part, &r))
        m.rows = static_cast<std::size_t>(r.rows), m.pitch = static_cast<std::size_t>(r.pitch);
      out.push_back(m);
    }
    for (const auto& p : recvs) {
      if (s >= static_cast<int>(p.parts.size())) continue;
      T* buf = p.staged ? staging(unpack, p, s).data() : dst.view(p.parts[s], me).data();
      in.push_back({p.peer, buf, static_cast<std::size_t>(p.parts[s].size())});
      staged_in = staged_in || p.staged;
    }
    transport.step(s, out, in, dtype_v<T>, wire);
    if (staged_in || (s < sinks && !in.empty())) {
      arrived.emplace_back(s, Event(d));
      arrived.back().second.record(wire);
    }
  }
  if (self) detail::copy_view(dst.view(*self, me), src.view(*self, me));  // overlaps the last transfers
  // Unpacks in step order, each after its arrival; the consumer's chunk s once all of it is in place.
  auto next = arrived.begin();
  for (int s = 0; s < steps; ++s) {
    if (next != arrived.end() && next->first == s) {
      next->second.wait_on(work);
      for (const auto& p : recvs)
        if (p.staged && s < static_cast<int>(p.parts.size())) detail::copy_view(dst.view(p.parts[s], me), staging(unpack, p, s));
      ++next;
    }
    if (s < sinks) chunking->consume(s, sinks, work);
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


#define TESSERA_EXCHANGE_INSTANTIATE(T, R)                                                                    \
  template void exchange<T, R>(const comm::ProcessGroup&, const ExchangeSide<T, R>&, const ExchangeSide<T, R>&, \
                               const Stream&, Device, const ExchangeOptions&);
#define TESSERA_EXCHANGE_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_EXCHANGE_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_EXCHANGE_RANKS)

}  // namespace tessera::distributed
