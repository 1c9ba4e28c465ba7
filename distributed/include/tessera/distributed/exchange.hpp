// The exchange engine: the one data-movement pipeline under redistribute, gather, allgather,
// scatter, slice and the distributed FFT's transposes (halos share its streams, transports and
// row-copy packing). A new distributed operation that moves blocks between ranks describes both
// sides as one box per rank in common coordinates and calls exchange().
//
// Plan (plan_exchange, cached in the Context): each rank intersects its source box with every
// destination box (ranks that hold identical source boxes share the senders, so each element
// travels once). Run (run(plan, ...)): pack: a piece that is not
// contiguous where it lies goes through a staging buffer (one row-copy kernel per part), unless
// the transport sends rows at a pitch (ipc: 2-D copies) and its rows are 64 KiB or longer. Transfer,
// on the Context's transfer stream, by the transport of ExchangeOptions::transport (default
// TESSERA_TRANSPORT): auto/nccl = grouped send/recv on the group (NCCL for device buffers where
// every rank has its own GPU, else MPI; host buffers always MPI); mpi = device buffers through MPI
// (CUDA-aware or staged); ipc = within a node, cudaMemcpyAsync (copy engines, no SM) into the
// receivers' CUDA IPC windows, readiness by IPC events (across nodes: the group's NCCL).
// Unpack: staged pieces are copied into place on the compute stream.
// Pieces are cut into chunks along their first non-trivial axis (ExchangeOptions::chunks, default
// settings().chunks_for(device): TESSERA_EXCHANGE_CHUNKS, 8 on GPUs and 1 on host; chunks of at
// least TESSERA_EXCHANGE_CHUNK_MIB; by TESSERA_EXCHANGE_TAPER the first and last of half size),
// so that packing chunk k+1 overlaps the transfer of chunk k;
// with hooks (ExchangeChunking) the chunks are cut along a given axis: a producer writes chunk k+1
// (an FFT stage) while chunk k travels, a consumer works on chunk k (the next FFT stage) while
// chunk k+1 travels. Nothing synchronizes the host.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/distributed/settings.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/context_cache.hpp"
#include "tessera/local/settings.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed {

/// One side of an exchange: every rank's box, and this rank's data covering exactly its own box.
template <class T, int R>
struct ExchangeSide {
  std::vector<Box<R>> boxes;
  local::Array<T, R> data;
  /// The part of this rank's data (rank `me`) inside box `b`.
  local::Array<T, R> view(const Box<R>& b, int me) const {
    local::Array<T, R> v = data;
    for (int a = 0; a < R; ++a) v = v.slice(a, b.lo[a] - boxes[me].lo[a], b.hi[a] - boxes[me].lo[a]);
    return v;
  }
};

/// Where part s of n parts of an axis of `extent` starts (s = n: the end). With
/// settings().exchange_taper and extent >= 2n >= 6, the first and last parts are half the others'
/// size, else all are equal.
/// Every chunk of an exchange is cut this way (the settings must agree across ranks).
index_t chunk_begin(index_t extent, int s, int n);

/// Chunking with hooks: every piece is cut along `axis` into min(count, extent) parts.
/// produce (optional): before step s is packed, produce(s, n, stream) writes part s of this rank's
/// source box, i.e. local range [chunk_begin(e, s, n), chunk_begin(e, s + 1, n)) along `axis`
/// (e = the source box's extent there, n = min(count, e), at least 1), on `stream`. Every
/// destination box must then span the source box's whole extent along `axis`.
/// consume (optional): once part s of everything this rank receives has landed (and the part it
/// keeps has been copied), consume(s, n, stream) may read and rewrite part s of this rank's
/// destination box (the same ranges, e and n of the destination box), on `stream`. Every source
/// box must then span the destination box's whole extent along `axis`.
struct ExchangeChunking {
  int axis = 0;
  int count = 1;
  std::function<void(int s, int n, const Stream& stream)> produce;
  std::function<void(int s, int n, const Stream& stream)> consume;
};

/// Per-call tuning; the defaults come from settings(). Must be equal on all ranks.
struct ExchangeOptions {
  int chunks = 0;          ///< most chunks per piece; 0: settings().chunks_for(device)
  int chunk_mib = -1;      ///< least chunk size in MiB; -1: settings().exchange_chunk_mib
  const ExchangeChunking* chunking = nullptr;  ///< hooks (its count overrides `chunks`)
  std::optional<Transport> transport;          ///< how device blocks travel; unset: settings().transport
  /// Tapered chunks (chunk_begin); unset: settings().exchange_taper. With hooks the setting's
  /// (their callers cut their parts by chunk_begin).
  std::optional<bool> taper;
  /// How redistribute chooses what is left automatic (transport, chunks); unset: settings().tune
  /// (TESSERA_TUNE; docs/tuning.md). exchange() itself does not tune.
  std::optional<Tune> tune;
};
/// A tuner's candidate name of exchange options: "<transport>/<chunks>/<taper>" ("auto/auto/auto",
/// "ipc/8/flat"; taper: auto, taper or flat), and back (tune off; InvalidArgument for a name that
/// is not one).
std::string candidate_name(const ExchangeOptions& o);
ExchangeOptions exchange_candidate(const std::string& name);

/// The transport that exchanges over `g` on `d` with `t` actually use ("nccl", "mpi (staged)",
/// "ipc", ...): ipc resolves to the group's own across nodes; auto names the group's own and, where
/// one GPU per rank on one node, what large exchanges use ("nccl; ipc from 1 MiB per pair of
/// ranks": ipc on 2 ranks, nccl-window on more; see docs/performance/collectives-and-exchange.md).
/// Collective on first use.
std::string exchange_transport_name(const comm::ProcessGroup& g, Device d, Transport t);

/// A piece this rank sends to or receives from `peer`, cut into the parts that travel one per step
/// (along its first axis longer than 1, so that parts of a contiguous piece stay contiguous).
template <int R>
struct ExchangePiece {
  int peer;
  std::vector<Box<R>> parts;
};

/// What an exchange moves where, on this rank, worked out from both sides' boxes: the pieces it
/// sends and receives, the part it keeps, the steps, the transport. plan_exchange keeps plans in
/// the current Context, by group, device, element size, both sides' boxes, chunking and transport,
/// so that an operation repeated on the same layouts plans once.
template <int R>
struct ExchangePlan {
  std::vector<ExchangePiece<R>> sends, recvs;
  std::optional<Box<R>> self;  ///< the part of this rank's source box it keeps
  int hooks = 0, sinks = 0;    ///< producer / consumer steps (ExchangeChunking)
  int steps = 0;
  Transport transport = Transport::nccl;
  /// "exchange plan: 3 sends, 3 receives (24 parts in 8 steps), keeps [0:64, 0:64], transport ipc".
  std::string str() const;
};
/// The plan of exchange(g, src, dst, ..., d, options), from the Context's cache or made now
/// (made from the boxes alone: no communication). Every rank must call it with the same boxes.
template <class T, int R>
std::shared_ptr<const ExchangePlan<R>> plan_exchange(const comm::ProcessGroup& g, const ExchangeSide<T, R>& src,
                                                     const ExchangeSide<T, R>& dst, Device d,
                                                     const ExchangeOptions& options = {});
/// The hits, misses and entries of the current Context's exchange plans of rank R.
template <int R>
CacheStats exchange_plan_cache_stats();
/// Runs a plan made by plan_exchange with the same group, sides' boxes, device and options
/// (collective over g). `user` is the stream the source was written on; results are ordered on d's
/// default stream, and `user` waits for the exchange to have read the source.
template <class T, int R>
void run(const ExchangePlan<R>& plan, const comm::ProcessGroup& g, const ExchangeSide<T, R>& src,
         const ExchangeSide<T, R>& dst, const Stream& user, Device d, const ExchangeOptions& options = {});
/// Moves src to dst: run(*plan_exchange(g, src, dst, d, options), ...) (collective over g).
template <class T, int R>
void exchange(const comm::ProcessGroup& g, const ExchangeSide<T, R>& src, const ExchangeSide<T, R>& dst,
              const Stream& user, Device d, const ExchangeOptions& options = {});

}  // namespace tessera::distributed
