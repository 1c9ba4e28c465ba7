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
#include "tessera/local/context_cache.hpp"
#include "tessera/local/jit/compiler.hpp"  // fnv1a
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
  bool taper = true;  // chunk_begin's taper (hooks: always the setting's, which their callers use)
};
Tuning tuning(Device d, const ExchangeOptions& o) {
  Tuning t;
  t.max_chunks = o.chunks > 0 ? o.chunks : distributed::settings().chunks_for(d.is_cuda());
  const int mib = o.chunk_mib >= 0 ? o.chunk_mib : distributed::settings().exchange_chunk_mib;
  t.min_chunk_bytes = std::max<index_t>(1, static_cast<index_t>(mib) << 20);
  t.taper = o.chunking ? distributed::settings().exchange_taper : o.taper.value_or(distributed::settings().exchange_taper);
  return t;
}

// chunk_begin with the taper given.
index_t chunk_at(index_t extent, int s, int n, bool taper) {
  if (n < 3 || extent < 2 * static_cast<index_t>(n) || !taper) return extent * s / n;
  if (s == 0 || s == n) return s == 0 ? 0 : extent;
  return extent * (2 * s - 1) / (2 * n - 2);  // weights 1, 2, ..., 2, 1
}

template <int R>
ExchangePiece<R> cut(int peer, const Box<R>& b, std::size_t esz, const Tuning& t) {
  int axis = t.axis;
  if (axis < 0)
    for (axis = 0; axis + 1 < R && b.shape()[axis] <= 1;) ++axis;
  const index_t extent = b.shape()[axis];
  const index_t want = t.axis >= 0 ? t.max_chunks : static_cast<index_t>(b.size() * esz) / t.min_chunk_bytes;
  const index_t n = std::max<index_t>(1, std::min({want, static_cast<index_t>(t.max_chunks), extent}));
  ExchangePiece<R> p{peer, {}};
  for (int k = 0; k < n; ++k) {
    Box<R> c = b;
    c.lo[axis] = b.lo[axis] + chunk_at(extent, k, static_cast<int>(n), t.taper);
    c.hi[axis] = b.lo[axis] + chunk_at(extent, k + 1, static_cast<int>(n), t.taper);
    p.parts.push_back(c);
  }
  return p;
}

template <int R>
std::vector<detail::PeerSteps> steps_of(const std::vector<ExchangePiece<R>>& pieces, std::size_t esz) {
  std::vector<detail::PeerSteps> v;
  for (const auto& p : pieces) {
    v.push_back({p.peer, {}});
    for (const auto& c : p.parts) v.back().bytes.push_back(static_cast<std::size_t>(c.size()) * esz);
  }
  return v;
}


}  // namespace

index_t chunk_begin(index_t extent, int s, int n) { return chunk_at(extent, s, n, distributed::settings().exchange_taper); }

namespace {
// What a plan depends on: the group, device, element size, both sides' boxes and the resolved
// tuning and transport (so that changed settings make a new plan).
template <int R>
struct PlanKey {
  long long comm;
  Device device;
  std::size_t esz;
  std::vector<Box<R>> src, dst;
  int max_chunks, axis, hooks, sinks;
  index_t min_chunk_bytes;
  bool taper;
  Transport transport;
  bool operator==(const PlanKey&) const = default;
};
template <int R>
struct PlanKeyHash {
  static_assert(sizeof(Box<R>) == 2 * R * sizeof(index_t), "boxes are hashed as their bytes");
  std::size_t operator()(const PlanKey<R>& k) const {
    const long long scalars[] = {k.comm, static_cast<int>(k.device.kind()), k.device.index(), static_cast<long long>(k.esz),
                                 k.max_chunks, k.axis, k.hooks, k.sinks, k.min_chunk_bytes, k.taper,
                                 static_cast<int>(k.transport)};
    std::uint64_t h = local::jit::fnv1a(scalars, sizeof scalars);
    h = local::jit::fnv1a(k.src.data(), k.src.size() * sizeof(Box<R>), h);
    return static_cast<std::size_t>(local::jit::fnv1a(k.dst.data(), k.dst.size() * sizeof(Box<R>), h));
  }
};
template <int R>
using PlanCache = ContextCache<ExchangePlan<R>, PlanKey<R>, const ExchangePlan<R>, 64, PlanKeyHash<R>>;

template <int R>
ExchangePlan<R> make_plan(const PlanKey<R>& k, int me, int ranks, const Tuning& tune) {
  ExchangePlan<R> plan;
  plan.transport = k.transport;
  plan.hooks = k.hooks, plan.sinks = k.sinks;
  const Holders<R> holders(k.src);
  for (int q = 0; q < ranks; ++q) {
    if (holders.serves(me, q)) {
      const auto b = k.src[me].intersect(k.dst[q]);
      if (!b.empty() && q == me) plan.self = b;
      else if (!b.empty()) plan.sends.push_back(cut(q, b, k.esz, tune));
    }
    if (q != me && holders.serves(q, me)) {
      const auto b = k.src[q].intersect(k.dst[me]);
      if (!b.empty()) plan.recvs.push_back(cut(q, b, k.esz, tune));
    }
  }
  plan.steps = std::max(plan.hooks, plan.sinks);
  for (const auto* side : {&plan.sends, &plan.recvs})
    for (const auto& p : *side) plan.steps = std::max(plan.steps, static_cast<int>(p.parts.size()));
  return plan;
}

// Where this run stages each piece (a buffer of ours or a transport's window, at byte offsets);
// not part of the plan, since it depends on where the arrays' data lie.
struct Staging {
  bool staged = false;
  std::vector<std::size_t> offsets;
};
template <int R>
std::size_t place(const std::vector<ExchangePiece<R>>& pieces, std::vector<Staging>& at, std::size_t esz) {
  std::size_t n = 0;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (!at[k].staged) continue;
    for (const auto& c : pieces[k].parts) at[k].offsets.push_back(n), n += static_cast<std::size_t>(c.size()) * esz;
  }
  return n;
}
}  // namespace

template <int R>
std::string ExchangePlan<R>::str() const {
  std::size_t parts = 0;
  for (const auto* side : {&sends, &recvs})
    for (const auto& p : *side) parts += p.parts.size();
  return "exchange plan: " + std::to_string(sends.size()) + " sends, " + std::to_string(recvs.size()) +
         " receives (" + std::to_string(parts) + " parts in " + std::to_string(steps) + " steps)" +
         (self ? ", keeps " + self->str() : std::string()) + ", transport " + transport_name(transport);
}

template <class T, int R>
std::shared_ptr<const ExchangePlan<R>> plan_exchange(const comm::ProcessGroup& g, const ExchangeSide<T, R>& src,
                                                     const ExchangeSide<T, R>& dst, Device d,
                                                     const ExchangeOptions& options) {
  const int me = g.rank();
  Tuning tune = tuning(d, options);
  int hooks = 0, sinks = 0;  // producer / consumer steps: chunks of this rank's source / destination box
  if (const ExchangeChunking* chunking = options.chunking) {
    tune.axis = chunking->axis;
    tune.max_chunks = std::max(1, chunking->count);
    auto parts = [&](const Box<R>& b) {
      return static_cast<int>(std::max<index_t>(1, std::min<index_t>(tune.max_chunks, b.shape()[tune.axis])));
    };
    if (chunking->produce) hooks = parts(src.boxes[me]);
    if (chunking->consume) sinks = parts(dst.boxes[me]);
  }
  Transport chosen = options.transport.value_or(distributed::settings().transport);
  if (chosen == Transport::automatic) {
    std::size_t global = 0;  // the same on every rank
    for (const auto& b : src.boxes) global += static_cast<std::size_t>(b.size()) * sizeof(T);
    chosen = detail::automatic_transport(g, d, global);
  }
  PlanKey<R> key{static_cast<long long>(MPI_Comm_c2f(g.mpi_comm())), d, sizeof(T), src.boxes, dst.boxes,
                 tune.max_chunks, tune.axis, hooks, sinks, tune.min_chunk_bytes, tune.taper,
                 chosen};
  return PlanCache<R>::current().get(key, [&] {
    return std::make_shared<const ExchangePlan<R>>(make_plan(key, me, g.size(), tune));
  });
}

template <int R>
CacheStats exchange_plan_cache_stats() {
  return PlanCache<R>::current().stats();
}

namespace {
// One run of a plan: where each piece is staged, the buffers, then the steps and the unpacking.
template <class T, int R>
class Run {
 public:
  Run(const ExchangePlan<R>& plan, const comm::ProcessGroup& g, const ExchangeSide<T, R>& src,
      const ExchangeSide<T, R>& dst, Device d, const ExchangeOptions& options)
      : plan_(plan), src_(src), dst_(dst), d_(d), me_(g.rank()), chunking_(options.chunking),
        transport_(detail::exchange_transport(g, d, plan.transport)), work_(Stream::default_for(d)),
        // Transfers on their own stream, so that they overlap packing (and FFT stages) on `work`;
        // high priority, so that NCCL's kernels get SMs as soon as a compute kernel's blocks retire.
        wire_(Context::current().stream(d, StreamRole::transfer)),
        send_at_(plan.sends.size()), recv_at_(plan.recvs.size()), steps_(plan.steps) {}

  void operator()(const Stream& user) {
    choose_staging();
    work_.wait_for(user);
    make_buffers();
    const bool remote = !plan_.sends.empty() || !plan_.recvs.empty();
    if (remote) wire_.wait_for(work_);  // the source, the destination and the buffers are ready
    transfer();
    if (plan_.self) detail::copy_view(dst_.view(*plan_.self, me_), src_.view(*plan_.self, me_));  // overlaps the last transfers
    unpack();
    if (remote) work_.wait_for(wire_);  // results, and the buffers' release, after the transfers
    user.wait_for(work_);               // the source may be overwritten on its stream once we have read it
  }

 private:
  // A piece goes through a buffer unless every part is contiguous where it lies; a transport that
  // sends rows at a pitch takes a source piece as it lies where its rows are long
  // (min_direct_row_bytes).
  void choose_staging() {
    auto scattered = [&](const ExchangeSide<T, R>& side, const ExchangePiece<R>& p) {
      for (const auto& c : p.parts)
        if (!side.view(c, me_).is_contiguous()) return true;
      return false;
    };
    auto direct = [&](const ExchangePiece<R>& p) {
      if (!transport_.strided_sends()) return false;
      for (const auto& c : p.parts) {
        detail::Rows r;
        const bool rows = detail::as_rows(src_.view(c, me_), &r);
        if (!rows || (r.rows > 1 && r.run * sizeof(T) < min_direct_row_bytes)) return false;
      }
      return true;
    };
    for (std::size_t k = 0; k < plan_.sends.size(); ++k)
      send_at_[k].staged = scattered(src_, plan_.sends[k]) && !direct(plan_.sends[k]);
    for (std::size_t k = 0; k < plan_.recvs.size(); ++k) recv_at_[k].staged = scattered(dst_, plan_.recvs[k]);
  }

  // Staging: a buffer of ours, or the windows of a windowed transport (collective: every rank,
  // even one with nothing to move), where all received parts land, and all sent ones too if the
  // transport says where.
  void make_buffers() {
    if (transport_.windowed()) {
      auto w = transport_.begin(steps_of(plan_.recvs, sizeof(T)), steps_of(plan_.sends, sizeof(T)), work_);
      steps_ = std::max(steps_, w.steps);
      unpack_ = w.recv;
      for (std::size_t k = 0; k < recv_at_.size(); ++k) recv_at_[k].staged = true, recv_at_[k].offsets = std::move(w.recv_at[k]);
      if (w.send) {
        pack_ = w.send;
        for (std::size_t k = 0; k < send_at_.size(); ++k) send_at_[k].staged = true, send_at_[k].offsets = std::move(w.send_at[k]);
      }
    }
    if (!pack_)
      if (const std::size_t n = place(plan_.sends, send_at_, sizeof(T)))
        pack_buf_.emplace(n, work_), pack_ = static_cast<char*>(pack_buf_->data());
    if (!unpack_)
      if (const std::size_t n = place(plan_.recvs, recv_at_, sizeof(T)))
        unpack_buf_.emplace(n, work_), unpack_ = static_cast<char*>(unpack_buf_->data());
  }

  local::Array<T, R> staging(char* b, const ExchangePiece<R>& p, const Staging& at, int k) const {
    return local::Array<T, R>::view(reinterpret_cast<T*>(b + at.offsets[k]), p.parts[k].shape(), d_);
  }

  // Step by step: produce (hook) and pack part s on `work`, then its transfers on `wire`; records
  // when the staged parts (or, for a consumer, any parts) of a step have arrived.
  void transfer() {
    const auto& sends = plan_.sends;
    const auto& recvs = plan_.recvs;
    for (int s = 0; s < steps_; ++s) {
      if (s < plan_.hooks) chunking_->produce(s, plan_.hooks, work_);
      bool packed = false;
      for (std::size_t k = 0; k < sends.size(); ++k)
        if (send_at_[k].staged && s < static_cast<int>(sends[k].parts.size()))
          detail::copy_view(staging(pack_, sends[k], send_at_[k], s), src_.view(sends[k].parts[s], me_)), packed = true;
      // The transfers of step s read what the producer or the packing just wrote on `work`.
      if (packed || s < plan_.hooks) wire_.wait_for(work_);
      std::vector<detail::Message> out, in;
      bool staged_in = false;
      for (std::size_t k = 0; k < sends.size(); ++k) {
        const auto& p = sends[k];
        if (s >= static_cast<int>(p.parts.size())) continue;
        const auto part = send_at_[k].staged ? staging(pack_, p, send_at_[k], s) : src_.view(p.parts[s], me_);
        detail::Message m{p.peer, part.data(), static_cast<std::size_t>(p.parts[s].size())};
        if (detail::Rows r; !send_at_[k].staged && !part.is_contiguous() && detail::as_rows(part, &r))
          m.rows = static_cast<std::size_t>(r.rows), m.pitch = static_cast<std::size_t>(r.pitch);
        out.push_back(m);
      }
      for (std::size_t k = 0; k < recvs.size(); ++k) {
        const auto& p = recvs[k];
        if (s >= static_cast<int>(p.parts.size())) continue;
        T* buf = recv_at_[k].staged ? staging(unpack_, p, recv_at_[k], s).data() : dst_.view(p.parts[s], me_).data();
        in.push_back({p.peer, buf, static_cast<std::size_t>(p.parts[s].size())});
        staged_in = staged_in || recv_at_[k].staged;
      }
      transport_.step(s, out, in, dtype_v<T>, wire_);
      if (staged_in || (s < plan_.sinks && !in.empty())) {
        arrived_.emplace_back(s, Event(d_));
        arrived_.back().second.record(wire_);
      }
    }
  }

  // Unpacks in step order, each after its arrival; the consumer's part s once all of it is in place.
  void unpack() {
    auto next = arrived_.begin();
    for (int s = 0; s < steps_; ++s) {
      if (next != arrived_.end() && next->first == s) {
        next->second.wait_on(work_);
        for (std::size_t k = 0; k < plan_.recvs.size(); ++k)
          if (recv_at_[k].staged && s < static_cast<int>(plan_.recvs[k].parts.size()))
            detail::copy_view(dst_.view(plan_.recvs[k].parts[s], me_), staging(unpack_, plan_.recvs[k], recv_at_[k], s));
        ++next;
      }
      if (s < plan_.sinks) chunking_->consume(s, plan_.sinks, work_);
    }
  }

  const ExchangePlan<R>& plan_;
  const ExchangeSide<T, R>& src_;
  const ExchangeSide<T, R>& dst_;
  Device d_;
  int me_;
  const ExchangeChunking* chunking_;
  detail::ExchangeTransport& transport_;
  const Stream& work_;  // packing, local copies, results
  const Stream& wire_;
  std::vector<Staging> send_at_, recv_at_;
  int steps_;
  char* pack_ = nullptr;
  char* unpack_ = nullptr;
  std::optional<Buffer> pack_buf_, unpack_buf_;
  std::vector<std::pair<int, Event>> arrived_;  // steps with staged receives (any, for a consumer), and their events
};
}  // namespace

template <class T, int R>
void run(const ExchangePlan<R>& plan, const comm::ProcessGroup& g, const ExchangeSide<T, R>& src,
         const ExchangeSide<T, R>& dst, const Stream& user, Device d, const ExchangeOptions& options) {
  DeviceGuard guard(d);
  Run<T, R>(plan, g, src, dst, d, options)(user);
}

template <class T, int R>
void exchange(const comm::ProcessGroup& g, const ExchangeSide<T, R>& src, const ExchangeSide<T, R>& dst,
              const Stream& user, Device d, const ExchangeOptions& options) {
  run(*plan_exchange(g, src, dst, d, options), g, src, dst, user, d, options);
}

#define TESSERA_EXCHANGE_INSTANTIATE(T, R)                                                                    \
  template void exchange<T, R>(const comm::ProcessGroup&, const ExchangeSide<T, R>&, const ExchangeSide<T, R>&, \
                               const Stream&, Device, const ExchangeOptions&);                                 \
  template std::shared_ptr<const ExchangePlan<R>> plan_exchange<T, R>(                                         \
      const comm::ProcessGroup&, const ExchangeSide<T, R>&, const ExchangeSide<T, R>&, Device, const ExchangeOptions&); \
  template void run<T, R>(const ExchangePlan<R>&, const comm::ProcessGroup&, const ExchangeSide<T, R>&,        \
                          const ExchangeSide<T, R>&, const Stream&, Device, const ExchangeOptions&);
#define TESSERA_EXCHANGE_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_EXCHANGE_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_EXCHANGE_RANKS)
#define TESSERA_EXCHANGE_PLAN(R) \
  template struct ExchangePlan<R>; \
  template CacheStats exchange_plan_cache_stats<R>();
TESSERA_EXCHANGE_PLAN(1)
TESSERA_EXCHANGE_PLAN(2)
TESSERA_EXCHANGE_PLAN(3)
TESSERA_EXCHANGE_PLAN(4)

}  // namespace tessera::distributed
