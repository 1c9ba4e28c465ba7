// The ipc transport of the exchange (detail/transport.hpp): ranks of one node move every part
// with cudaMemcpyAsync (cudaMemcpy2DAsync for parts sent unpacked, as rows at a pitch) into the
// receiver's window, a plain cudaMalloc buffer exported once by CUDA IPC (the async pool's memory
// cannot be), on the exchange's wire stream: copy engines, no SM. Readiness: the sender records
// one of its IPC events after a step's copies and sends the receiver a host token; the
// receiver's wire stream then waits on that event. Reuse: at the start of every exchange a
// receiver records its "free" event after its last unpack from the window, and sends each sender
// the offsets its parts will land at; the sender's copies wait on that event. Works for ranks
// sharing one GPU and across GPUs with peer access.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../detail/transport.hpp"
#include "tessera/comm/error.hpp"
#include "tessera/local/cuda_check.hpp"

namespace tessera::distributed::detail::cuda {
namespace {

constexpr int step_events = 16;  // reused modulo: a later record of one only makes a peer wait longer
constexpr int free_event = step_events;
constexpr std::size_t handle_words = sizeof(cudaIpcMemHandle_t) / sizeof(std::int64_t);
static_assert(sizeof(cudaIpcMemHandle_t) % sizeof(std::int64_t) == 0 &&
              sizeof(cudaIpcEventHandle_t) == sizeof(cudaIpcMemHandle_t));

const Stream& host() { return Stream::default_for(Device::host()); }

class IpcTransport final : public ExchangeTransport {
 public:
  IpcTransport(comm::ProcessGroup g, Device d) : g_(std::move(g)), d_(d), size_(g_.size()), me_(g_.rank()) {
    DeviceGuard guard(d_);
    events_.resize(step_events + 1);
    std::vector<std::int64_t> mine(handle_words * events_.size()), all(mine.size() * size_);
    for (std::size_t e = 0; e < events_.size(); ++e) {
      TESSERA_CHECK_CUDA(cudaEventCreateWithFlags(&events_[e], cudaEventDisableTiming | cudaEventInterprocess));
      cudaIpcEventHandle_t h;
      TESSERA_CHECK_CUDA(cudaIpcGetEventHandle(&h, events_[e]));
      std::memcpy(&mine[e * handle_words], &h, sizeof h);
    }
    g_.all_gather(mine.data(), all.data(), mine.size(), DType::int64, host());
    peer_events_.assign(size_, std::vector<cudaEvent_t>(events_.size(), nullptr));
    for (int q = 0; q < size_; ++q)
      for (std::size_t e = 0; e < events_.size() && q != me_; ++e) {
        cudaIpcEventHandle_t h;
        std::memcpy(&h, &all[(q * events_.size() + e) * handle_words], sizeof h);
        TESSERA_CHECK_CUDA(cudaIpcOpenEventHandle(&peer_events_[q][e], h));
      }
    peer_windows_.assign(size_, nullptr);
    offsets_to_.assign(size_, {});
  }
  ~IpcTransport() override { release(); }

  std::string name() const override { return "ipc"; }
  void prepare() override {}
  bool windowed() const override { return true; }
  bool strided_sends() const override { return true; }  // 2-D copies straight from the source

  Window begin(const std::vector<PeerSteps>& recvs, const std::vector<PeerSteps>& sends, const Stream& work) override {
    DeviceGuard guard(d_);
    ++sequence_;
    Window w;
    std::size_t bytes = 0;  // parts one after the other, each 256-byte aligned
    for (const auto& r : recvs) {
      w.recv_at.emplace_back();
      for (auto b : r.bytes) w.recv_at.back().push_back(bytes), bytes += (b + 255) / 256 * 256;
    }
    if (g_.all_reduce(bytes > capacity_ ? 1 : 0, comm::ReduceOp::max)) grow(bytes);
    // The window is free once this rank's unpacks from it (on `work`) are done.
    TESSERA_CHECK_CUDA(cudaEventRecord(events_[free_event], static_cast<cudaStream_t>(work.native())));
    std::vector<std::vector<std::int64_t>> out(recvs.size());
    {
      comm::Group group;
      for (std::size_t k = 0; k < recvs.size(); ++k) {
        out[k].assign(w.recv_at[k].begin(), w.recv_at[k].end());
        g_.send(out[k].data(), out[k].size(), DType::int64, recvs[k].peer, host());
      }
      for (const auto& p : sends) {
        offsets_to_[p.peer].assign(p.bytes.size(), 0);
        g_.recv(offsets_to_[p.peer].data(), offsets_to_[p.peer].size(), DType::int64, p.peer, host());
      }
      group.end();
    }
    // Copies into a receiver's window wait for its free event (recorded before its offsets left).
    for (const auto& p : sends)
      TESSERA_CHECK_CUDA(cudaStreamWaitEvent(static_cast<cudaStream_t>(work.native()), peer_events_[p.peer][free_event], 0));
    w.recv = static_cast<char*>(window_);
    return w;
  }

  void step(int s, const std::vector<Message>& sends, const std::vector<Message>& recvs, DType t,
            const Stream& wire) override {
    DeviceGuard guard(d_);
    const auto stream = static_cast<cudaStream_t>(wire.native());
    const std::size_t esz = dtype_size(t);
    // Parts for different peers go on separate copy streams (lanes), so that several copy engines
    // and links work at once, in the order me+1, me+2, ... so that no receiver is every sender's
    // first target. The wire stream forks to the lanes and joins them again.
    std::vector<const Message*> order;
    for (const auto& m : sends) order.push_back(&m);
    std::sort(order.begin(), order.end(), [&](const Message* a, const Message* b) {
      return (a->peer - me_ + size_) % size_ < (b->peer - me_ + size_) % size_;
    });
    const std::size_t lanes = std::min(order.size(), max_lanes);
    if (lanes > 1) {
      make_lanes(lanes);
      TESSERA_CHECK_CUDA(cudaEventRecord(fork_, stream));
      for (std::size_t l = 0; l < lanes; ++l) TESSERA_CHECK_CUDA(cudaStreamWaitEvent(lanes_[l], fork_, 0));
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      const Message& m = *order[i];
      if (!peer_windows_[m.peer] || s >= static_cast<int>(offsets_to_[m.peer].size()))
        throw CommError("exchange (ipc): rank " + std::to_string(me_) + " has no window offset for step " +
                              std::to_string(s) + " of rank " + std::to_string(m.peer));
      char* dst = static_cast<char*>(peer_windows_[m.peer]) + offsets_to_[m.peer][s];
      const cudaStream_t lane = lanes > 1 ? lanes_[i % lanes] : stream;
      if (m.rows > 1 && m.pitch > 0) {
        const std::size_t run = m.count / m.rows * esz;
        TESSERA_CHECK_CUDA(cudaMemcpy2DAsync(dst, run, m.data, m.pitch * esz, run, m.rows, cudaMemcpyDefault, lane));
      } else {
        TESSERA_CHECK_CUDA(cudaMemcpyAsync(dst, m.data, m.count * esz, cudaMemcpyDefault, lane));
      }
    }
    for (std::size_t l = 0; lanes > 1 && l < lanes; ++l) {
      TESSERA_CHECK_CUDA(cudaEventRecord(joins_[l], lanes_[l]));
      TESSERA_CHECK_CUDA(cudaStreamWaitEvent(stream, joins_[l], 0));
    }
    const int e = s % step_events;
    if (!sends.empty()) TESSERA_CHECK_CUDA(cudaEventRecord(events_[e], stream));
    // Tokens after the record: a receiver that holds one waits on a record that covers the copies.
    const std::int64_t token = sequence_ * 4096 + s;
    std::vector<std::int64_t> got(recvs.size(), -1);
    {
      comm::Group group;
      for (const auto& m : sends) g_.send(&token, 1, DType::int64, m.peer, host());
      for (std::size_t k = 0; k < recvs.size(); ++k) g_.recv(&got[k], 1, DType::int64, recvs[k].peer, host());
      group.end();
    }
    for (std::size_t k = 0; k < recvs.size(); ++k) {
      if (got[k] != token)
        throw CommError("exchange (ipc): rank " + std::to_string(me_) + " expected token " + std::to_string(token) +
                              " from rank " + std::to_string(recvs[k].peer) + ", got " + std::to_string(got[k]) +
                              " (the ranks disagree on the exchange)");
      TESSERA_CHECK_CUDA(cudaStreamWaitEvent(stream, peer_events_[recvs[k].peer][e], 0));
    }
  }

 private:
  static constexpr std::size_t max_lanes = 8;

  void make_lanes(std::size_t n) {
    if (!fork_) TESSERA_CHECK_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    while (lanes_.size() < n) {
      cudaStream_t st = nullptr;
      cudaEvent_t ev = nullptr;
      TESSERA_CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      lanes_.push_back(st);
      TESSERA_CHECK_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
      joins_.push_back(ev);
    }
  }

  // Collective: every rank re-exports its window (larger where needed) and re-opens the others'.
  void grow(std::size_t bytes) {
    TESSERA_CHECK_CUDA(cudaDeviceSynchronize());  // our waits covered the peers' copies into our window
    close_peers();
    g_.barrier();  // nobody still maps a window that is about to be freed
    if (bytes > capacity_) {
      if (window_) TESSERA_CHECK_CUDA(cudaFree(std::exchange(window_, nullptr)));
      capacity_ = std::max<std::size_t>({bytes, 2 * capacity_, std::size_t{2} << 20});
      TESSERA_CHECK_CUDA(cudaMalloc(&window_, capacity_));
    }
    std::vector<std::int64_t> mine(handle_words + 1, 0), all(mine.size() * size_);
    if (window_) {
      cudaIpcMemHandle_t h;
      TESSERA_CHECK_CUDA(cudaIpcGetMemHandle(&h, window_));
      std::memcpy(mine.data(), &h, sizeof h);
      mine[handle_words] = static_cast<std::int64_t>(capacity_);
    }
    g_.all_gather(mine.data(), all.data(), mine.size(), DType::int64, host());
    for (int q = 0; q < size_; ++q) {
      if (q == me_ || all[q * mine.size() + handle_words] == 0) continue;
      cudaIpcMemHandle_t h;
      std::memcpy(&h, &all[q * mine.size()], sizeof h);
      TESSERA_CHECK_CUDA(cudaIpcOpenMemHandle(&peer_windows_[q], h, cudaIpcMemLazyEnablePeerAccess));
    }
  }
  void close_peers() {
    for (auto& w : peer_windows_)
      if (w) TESSERA_CHECK_CUDA(cudaIpcCloseMemHandle(std::exchange(w, nullptr)));
  }
  // Handles closed, then (unless the group failed: a dead peer never arrives) a barrier so that
  // no peer still maps our window, then our window and events freed.
  void release() noexcept {
    try {
      DeviceGuard guard(d_);
      (void)cudaDeviceSynchronize();
      for (auto& w : peer_windows_)
        if (w) (void)cudaIpcCloseMemHandle(std::exchange(w, nullptr));
      for (auto& row : peer_events_)
        for (auto& e : row)
          if (e) (void)cudaEventDestroy(std::exchange(e, nullptr));
      if (!g_.failed()) g_.barrier();
      if (window_) (void)cudaFree(std::exchange(window_, nullptr));
      for (auto& e : events_)
        if (e) (void)cudaEventDestroy(std::exchange(e, nullptr));
      for (auto& e : joins_) (void)cudaEventDestroy(e);
      for (auto& l : lanes_) (void)cudaStreamDestroy(l);
      if (fork_) (void)cudaEventDestroy(std::exchange(fork_, nullptr));
      joins_.clear(), lanes_.clear();
    } catch (...) {  // a failed barrier leaves the window to the process's end
    }
  }

  comm::ProcessGroup g_;
  Device d_;
  int size_, me_;
  std::int64_t sequence_ = 0;
  void* window_ = nullptr;
  std::size_t capacity_ = 0;
  std::vector<cudaEvent_t> events_;                    // ours: step events, then the free event
  std::vector<std::vector<cudaEvent_t>> peer_events_;  // [rank][event], opened (null for us)
  std::vector<void*> peer_windows_;                    // [rank], opened (null for us)
  std::vector<std::vector<std::int64_t>> offsets_to_;  // [rank][step]: where our parts land there
  std::vector<cudaStream_t> lanes_;                    // copy streams of step() (made on first need)
  std::vector<cudaEvent_t> joins_;                     // [lane]: its copies of the current step done
  cudaEvent_t fork_ = nullptr;                         // the wire stream's point the lanes start from
};

}  // namespace

std::unique_ptr<ExchangeTransport> make_ipc_transport(const comm::ProcessGroup& g, Device d) {
  if (g.local_size() != g.size()) return nullptr;  // several nodes: the caller uses the group's NCCL
  return std::make_unique<IpcTransport>(g, d);
}

}  // namespace tessera::distributed::detail::cuda
