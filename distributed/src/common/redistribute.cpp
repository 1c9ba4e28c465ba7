// redistribute, gather, allgather, scatter and slice: each describes both sides as one box per rank
// and calls the exchange engine (exchange.hpp).
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

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/distributed/tune.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed {
namespace {
template <class T, int R>
using Side = ExchangeSide<T, R>;

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

}  // namespace

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
  return redistribute(a, to, ExchangeOptions{});
}

namespace {
// The options a redistribute runs with: `o` where tuning is off or nothing is left automatic,
// else the tuner's choice of transport (GPUs, TESSERA_TRANSPORT=auto) and chunks
// (TESSERA_EXCHANGE_CHUNKS=0), measured on this redistribute's own buffers.
template <class T, int R>
ExchangeOptions tuned(const Layout<R>& from, const Layout<R>& to, const Side<T, R>& src, const Side<T, R>& dst,
                      const Stream& user, Device d, ExchangeOptions o) {
  const Tune mode = o.tune.value_or(settings().tune);
  o.tune = Tune::off;
  const auto& g = from.grid().group();
  const auto& set = settings();
  const bool free_transport = d.is_cuda() && !o.transport && set.transport == Transport::automatic;
  // A piece is at most a source block: below two (three) least chunks it is never cut (tapered),
  // and those candidates would only be the rule's again.
  std::size_t largest = 0;
  for (const auto& b : src.boxes) largest = std::max(largest, static_cast<std::size_t>(b.size()) * sizeof(T));
  const int mib = o.chunk_mib >= 0 ? o.chunk_mib : set.exchange_chunk_mib;
  const std::size_t min_chunk = std::max<std::size_t>(1, static_cast<std::size_t>(mib) << 20);
  const bool free_chunks = o.chunks == 0 && set.exchange_chunks == 0 && !o.chunking && largest >= 2 * min_chunk;
  const int rule_chunks = o.chunks > 0 ? o.chunks : set.chunks_for(d.is_cuda());
  const bool free_taper = !o.taper && !o.chunking && largest >= 3 * min_chunk && rule_chunks >= 3;
  if (mode == Tune::off || g.size() < 2 || (!free_transport && !free_chunks && !free_taper)) return o;
  std::string fixed = from.str() + " -> " + to.str();
  if (!free_transport) fixed += ", transport " + transport_name(o.transport.value_or(set.transport));
  if (!free_chunks) fixed += ", chunks " + std::to_string(o.chunks > 0 ? o.chunks : set.chunks_for(d.is_cuda()));
  if (o.chunk_mib >= 0) fixed += ", chunk MiB " + std::to_string(o.chunk_mib);
  if (o.taper) fixed += *o.taper ? ", tapered" : ", flat";
  const auto shape = from.global_shape();
  const auto key = tune::key_for(g, d, "redistribute", std::vector<long long>(shape.begin(), shape.end()),
                                 dtype_name(dtype_v<T>), fixed);
  std::vector<ExchangeOptions> cands{o};
  if (free_transport) {
    std::vector<Transport> ts{Transport::ipc, Transport::mpi};
    if (g.device_transport(d) == Transport::nccl) ts = {Transport::nccl, Transport::ipc, Transport::nccl_window};
    for (Transport t : ts) {
      ExchangeOptions c = o;
      c.transport = t;
      cands.push_back(c);
    }
  }
  if (free_chunks) {
    const int r = set.chunks_for(d.is_cuda());
    for (int k : {r / 2, r * 2, r * 4})
      if (k >= 1 && k != r && k <= 16) {
        ExchangeOptions c = o;
        c.chunks = k;
        cands.push_back(c);
      }
  }
  if (free_taper) {  // the other taper, at the rule's chunks
    ExchangeOptions c = o;
    c.taper = !set.exchange_taper;
    cands.push_back(c);
  }
  std::vector<std::string> names;
  for (const auto& c : cands) names.push_back(candidate_name(c));
  const auto report = tune::choose(g, mode, key, names, [&] {
    std::vector<tune::Candidate> v;
    for (const auto& c : cands)
      v.push_back({candidate_name(c), [&, c] {
                     exchange<T, R>(g, src, dst, user, d, c);
                     Stream::default_for(d).synchronize();
                   }});
    return v;
  });
  ExchangeOptions chosen = exchange_candidate(report.choice());
  chosen.chunk_mib = o.chunk_mib;
  return chosen;
}
}  // namespace

template <class T, int R>
Array<T, R> redistribute(const Array<T, R>& a, const Layout<R>& to, const ExchangeOptions& options) {
  const auto agreed = check_call<T, R>("redistribute", a.layout(), a.device(), "to", to);
  const Device d = a.device();
  const auto& from = a.layout();
  if (from.global_shape() != to.global_shape())
    throw ShapeMismatch("shape mismatch in redistribute: " + Layout<R>::idx_str(from.global_shape()) + " vs " +
                            Layout<R>::idx_str(to.global_shape()),
                        d);
  if (!from.grid().group().same_ranks(to.grid().group()))
    throw LayoutMismatch("layout mismatch in redistribute: " + from.str() + " and " + to.str() +
                             " are over different process groups (the same ranks in the same order are needed)",
                         d);
  Array<T, R> out(to, d);
  const Side<T, R> src{boxes_of(from), a.interior()}, dst{boxes_of(to), out.interior()};
  const ExchangeOptions o = tuned<T, R>(from, to, src, dst, a.stream(), d, options);
  exchange<T, R>(from.grid().group(), src, dst, a.stream(), d, o);
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
  exchange<T, R>(g, {boxes_of(l), a.interior()}, {whole_on<R>(root, g.size(), l.global_shape()), out}, a.stream(), d);
  return out;
}

template <class T, int R>
local::Array<T, R> allgather(const Array<T, R>& a) {
  const auto agreed = check_call<T, R>("allgather", a.layout(), a.device());
  const Device d = a.device();
  const auto& l = a.layout();
  const auto& g = l.grid().group();
  local::Array<T, R> out(l.global_shape(), d);
  exchange<T, R>(g, {boxes_of(l), a.interior()}, {whole_on<R>(-1, g.size(), l.global_shape()), out}, a.stream(), d);
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
  exchange<T, R>(g, {whole_on<R>(root, g.size(), layout.global_shape()), data}, {boxes_of(layout), out.interior()},
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
  exchange<T, R>(l.grid().group(), {boxes_of(l), a.interior()}, {boxes_of<R>(sub, ranges.lo), out.interior()}, a.stream(),
                 d);
  return out;
}

#define TESSERA_REDISTRIBUTE_INSTANTIATE(T, R)                                                    \
  template Array<T, R> redistribute<T, R>(const Array<T, R>&, const Layout<R>&);                   \
  template Array<T, R> redistribute<T, R>(const Array<T, R>&, const Layout<R>&, const ExchangeOptions&); \
  template local::Array<T, R> gather<T, R>(const Array<T, R>&, int);                              \
  template local::Array<T, R> allgather<T, R>(const Array<T, R>&);                                \
  template Array<T, R> scatter<T, R>(int, const local::Array<T, R>&, const Layout<R>&, Device);   \
  template Array<T, R> slice<T, R>(const Array<T, R>&, const Box<R>&);
#define TESSERA_REDISTRIBUTE_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_REDISTRIBUTE_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_REDISTRIBUTE_RANKS)

}  // namespace tessera::distributed
