// Internal: the transports under the exchange engine (exchange.cpp). One exchange is a number of
// steps; in step s every rank sends part s of each piece it sends and receives part s of each
// piece it receives. A transport moves those parts:
//  - GroupTransport (nccl, mpi, auto): grouped send/recv on a ProcessGroup, on the wire stream;
//  - IpcTransport (ipc, CUDA builds): copy-engine copies into the receivers' CUDA IPC windows,
//    readiness signalled by IPC events after a host token (no SM moves data);
//  - NcclWindowTransport (nccl-window): parts packed into symmetric NCCL windows and moved by
//    ncclAlltoAll on a communicator with CTA policy zero (NCCL 2.28: copy engines, no SM).
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "tessera/distributed/settings.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/local/settings.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed::detail {

// Part `s` of a piece to or from `peer`: `count` elements at `data` (for a windowed transport
// inside its window); a sent part of a transport with strided_sends() may lie as `rows` equal
// runs `pitch` elements apart (pitch 0: contiguous).
struct Message {
  int peer;
  void* data;
  std::size_t count;
  std::size_t rows = 1, pitch = 0;
};

// The parts of the piece to or from one peer, in bytes, by step (at most one piece per peer).
struct PeerSteps {
  int peer;
  std::vector<std::size_t> bytes;
};

// Where a windowed transport wants one exchange's parts.
struct Window {
  char* recv = nullptr;  // every received part lands at recv + recv_at[k][s] (k: index in recvs)
  char* send = nullptr;  // if set, every sent part is packed at send + send_at[k][s]
  std::vector<std::vector<std::size_t>> recv_at, send_at;
  int steps = 0;  // every rank calls step() for at least this many steps (collective steps)
};

class ExchangeTransport {
 public:
  virtual ~ExchangeTransport() = default;
  // The transport that actually runs: "nccl", "mpi (cuda-aware)", "ipc", ...
  virtual std::string name() const = 0;
  // Collective: ready for device buffers on the exchange's device (communicators, windows).
  virtual void prepare() = 0;
  // True when receives land in a window of the transport's: every received part is unpacked
  // from window + offset, and begin() must be called.
  virtual bool windowed() const { return false; }
  // True when step() takes sent parts as rows at a pitch (then they need no packing).
  virtual bool strided_sends() const { return false; }
  // Windowed only; collective over the group, every exchange (even for a rank with nothing to
  // move): lays out this exchange's parts in the transport's windows, ordering the windows'
  // reuse after what `work` (packing, unpacking) did with them.
  virtual Window begin(const std::vector<PeerSteps>& recvs, const std::vector<PeerSteps>& sends, const Stream& work) {
    (void)recvs, (void)sends, (void)work;
    return {};
  }
  // Moves step s's parts on `wire`; when it returns, work on `wire` is ordered after the receives.
  virtual void step(int s, const std::vector<Message>& sends, const std::vector<Message>& recvs, DType t,
                    const Stream& wire) = 0;
};

// The transport `t` for exchanges over `g` on `d`, owned by the current Context (made on first
// use; collective). Host devices and `auto`/`nccl` use the group itself.
ExchangeTransport& exchange_transport(const comm::ProcessGroup& g, Device d, Transport t);
// What `auto` runs for an exchange that moves `global_bytes` in all (the same on every rank): the
// fixed rule's (rule.hpp, rule::transport) on this group's facts.
inline constexpr std::size_t auto_min_pair_bytes = rule::ipc_min_pair_bytes;
Transport automatic_transport(const comm::ProcessGroup& g, Device d, std::size_t global_bytes);

// The ipc transport (src/cuda/ipc_transport.cpp, dispatched by src/common/backends.cpp):
// collective; nullptr when the group spans several nodes (the caller falls back to the group's
// own transport). Throws BackendUnavailable in a build without CUDA.
std::unique_ptr<ExchangeTransport> make_ipc_transport(const comm::ProcessGroup& g, Device d);
namespace cuda {
std::unique_ptr<ExchangeTransport> make_ipc_transport(const comm::ProcessGroup& g, Device d);
}

}  // namespace tessera::distributed::detail
