// The exchange's transports (detail/transport.hpp): the ProcessGroup one, and the registry that
// picks and caches one per (group, device, kind) in the current Context.
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>

#include "../detail/transport.hpp"
#include "tessera/comm/settings.hpp"
#include "tessera/config.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/local/context_cache.hpp"
#include "tessera/local/error.hpp"

namespace tessera::distributed::detail {
namespace {

// One step's parts as grouped sends and receives on `g` (both transports' non-windowed path).
void send_recv(const comm::ProcessGroup& g, const std::vector<Message>& sends, const std::vector<Message>& recvs,
               DType t, const Stream& wire) {
  comm::Group group;
  for (const auto& m : sends) g.send(m.data, m.count, t, m.peer, wire);
  for (const auto& m : recvs) g.recv(m.data, m.count, t, m.peer, wire);
  group.end();
}

// Grouped send/recv on a ProcessGroup: NCCL for device buffers where the group uses it, else MPI.
class GroupTransport final : public ExchangeTransport {
 public:
  GroupTransport(comm::ProcessGroup g, Device d) : g_(std::move(g)), d_(d) {}
  std::string name() const override {
    if (d_.is_host()) return "mpi";
    return g_.device_transport_str(d_);
  }
  void prepare() override { g_.prepare(d_); }
  void step(int, const std::vector<Message>& sends, const std::vector<Message>& recvs, DType t,
            const Stream& wire) override {
    send_recv(g_, sends, recvs, t, wire);
  }

 private:
  comm::ProcessGroup g_;
  Device d_;
};

// nccl-window: staging in symmetric windows (ncclMemAlloc + NCCL_WIN_COLL_SYMMETRIC) of a
// communicator made with CTA policy zero, so that NCCL 2.28 runs the exchange's all-to-all steps
// with copy engines. A step where some pair of ranks has nothing to move (not an all-to-all)
// goes as grouped send/recv between the same windows (NCCL kernels, registered buffers).
class NcclWindowTransport final : public ExchangeTransport {
 public:
  NcclWindowTransport(const comm::ProcessGroup& g, Device d) : g_(g.nccl_policy(comm::CtaPolicy::zero)), d_(d) {}
  std::string name() const override { return "nccl-window"; }
  void prepare() override { g_.prepare(d_); }
  bool windowed() const override { return true; }

  Window begin(const std::vector<PeerSteps>& recvs, const std::vector<PeerSteps>& sends, const Stream&) override {
    const int n = g_.size();
    std::size_t steps = 0;
    for (const auto* side : {&recvs, &sends})
      for (const auto& p : *side) steps = std::max(steps, p.bytes.size());
    steps = static_cast<std::size_t>(g_.all_reduce(static_cast<long long>(steps), comm::ReduceOp::max));
    // Per step: the largest part anywhere (the all-to-all's slot), and whether some pair of
    // ranks has no part (then the step is not an all-to-all).
    std::vector<long long> v(2 * steps, 0);
    std::vector<int> to(n, 0), from(n, 0);
    for (std::size_t s = 0; s < steps; ++s) {
      std::fill(to.begin(), to.end(), 0), std::fill(from.begin(), from.end(), 0);
      for (const auto& p : sends)
        if (s < p.bytes.size() && p.bytes[s]) to[p.peer] = 1, v[s] = std::max<long long>(v[s], p.bytes[s]);
      for (const auto& p : recvs)
        if (s < p.bytes.size() && p.bytes[s]) from[p.peer] = 1;
      for (int q = 0; q < n; ++q)
        if (q != g_.rank() && (!to[q] || !from[q])) v[steps + s] = 1;
    }
    g_.all_reduce(v.data(), v.size(), comm::ReduceOp::max);
    slot_.assign(steps, 0), base_.assign(steps, 0), dense_.assign(steps, false);
    std::size_t total = 0;
    for (std::size_t s = 0; s < steps; ++s) {
      slot_[s] = (static_cast<std::size_t>(v[s]) + 255) / 256 * 256;
      dense_[s] = v[steps + s] == 0 && slot_[s] > 0;
      base_[s] = total, total += slot_[s] * n;
    }
    if (total > capacity_) {  // the same on every rank: made from reduced values
      window_.reset();
      capacity_ = std::max({total, 2 * capacity_, std::size_t{2} << 20});
      window_ = g_.symmetric_buffer(2 * capacity_, d_);
    }
    Window w;
    w.recv = static_cast<char*>(window_.get()), w.send = w.recv + capacity_;
    w.steps = static_cast<int>(steps);
    for (const auto& p : recvs) {
      w.recv_at.emplace_back();
      for (std::size_t s = 0; s < p.bytes.size(); ++s) w.recv_at.back().push_back(base_[s] + p.peer * slot_[s]);
    }
    for (const auto& p : sends) {
      w.send_at.emplace_back();
      for (std::size_t s = 0; s < p.bytes.size(); ++s) w.send_at.back().push_back(base_[s] + p.peer * slot_[s]);
    }
    return w;
  }

  void step(int s, const std::vector<Message>& sends, const std::vector<Message>& recvs, DType t,
            const Stream& wire) override {
    if (static_cast<std::size_t>(s) < dense_.size() && dense_[s]) {
      char* recv = static_cast<char*>(window_.get());
      g_.all_to_all(recv + capacity_ + base_[s], recv + base_[s], slot_[s] / 8, DType::int64, wire);
      return;
    }
    send_recv(g_, sends, recvs, t, wire);
  }

 private:
  comm::ProcessGroup g_;
  Device d_;
  std::shared_ptr<void> window_;  // [receive half | send half], each capacity_ bytes
  std::size_t capacity_ = 0;
  std::vector<std::size_t> slot_, base_;
  std::vector<bool> dense_;
};

// The transports made, by the group's communicator (Fortran handle), the device and the kind.
struct TransportTag;
using TransportCache = ContextCache<TransportTag, std::tuple<long long, std::string, int>, ExchangeTransport>;

// A transport of kind t over g on d (collective: every rank of g makes the same kind).
std::shared_ptr<ExchangeTransport> make_transport(const comm::ProcessGroup& g, Device d, Transport t) {
  std::shared_ptr<ExchangeTransport> made;
  switch (t) {
    case Transport::mpi: made = std::make_shared<GroupTransport>(g.mpi_only(), d); break;
    case Transport::ipc:
      made = make_ipc_transport(g, d);
      if (!made) made = std::make_shared<GroupTransport>(g, d);  // several nodes: the group's own
      break;
    case Transport::nccl_window:  // where the group cannot use NCCL windows (ranks share a GPU, NCCL < 2.27): its own
      if (g.has_symmetric_windows(d)) made = std::make_shared<NcclWindowTransport>(g, d);
      else made = std::make_shared<GroupTransport>(g, d);
      break;
    default: made = std::make_shared<GroupTransport>(g, d); break;
  }
  made->prepare();
  return made;
}

}  // namespace

Transport automatic_transport(const comm::ProcessGroup& g, Device d, std::size_t global_bytes) {
  rule::TransportFacts f;
  f.host = d.is_host(), f.ranks = g.size(), f.one_node = g.local_size() == g.size(), f.global_bytes = global_bytes;
  if (!f.host && f.ranks >= 2 && f.one_node) {  // asked only where they matter (collective on first use)
    f.own_gpus = g.device_transport(d) == Transport::nccl;
    // Not NCCL although it is built and allowed: NCCL refused ranks that share a GPU.
    f.shared_gpus = !f.own_gpus && TESSERA_HAVE_NCCL && comm::settings().nccl;
    const auto p = static_cast<std::size_t>(g.size());
    f.symmetric_windows = f.own_gpus && p > 2 && global_bytes / (p * p) >= rule::ipc_min_pair_bytes &&
                          g.has_symmetric_windows(d);
  }
  return rule::transport(f);
}

ExchangeTransport& exchange_transport(const comm::ProcessGroup& g, Device d, Transport t) {
  if (d.is_host() || t == Transport::automatic) t = Transport::nccl;  // host buffers: MPI anyway
  const auto key = std::make_tuple(static_cast<long long>(MPI_Comm_c2f(g.mpi_comm())), d.str(), static_cast<int>(t));
  // The Context holds every transport made until it ends: the reference stays valid that long.
  return *TransportCache::current().get(key, [&] { return make_transport(g, d, t); });
}

}  // namespace tessera::distributed::detail

namespace tessera::distributed {
std::string exchange_transport_name(const comm::ProcessGroup& g, Device d, Transport t) {
  if (t != Transport::automatic) return detail::exchange_transport(g, d, t).name();
  const auto small = detail::exchange_transport(g, d, Transport::nccl).name();
  const auto large = detail::automatic_transport(g, d, SIZE_MAX);
  if (large == Transport::nccl) return small;
  return small + "; " + transport_name(large) + " from " +
         std::to_string(detail::auto_min_pair_bytes >> 20) + " MiB per pair of ranks";
}
}  // namespace tessera::distributed
