// The collectives' front end: argument checks, then NCCL for device buffers, MPI for host
// buffers, and the MPI fallbacks for device buffers (CUDA-aware, or staged through pinned
// host memory). Data-movement collectives are lists of point-to-point Transfers, so that each
// transport implements them once.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "tessera/local/context.hpp"
#include <string>
#include <vector>

#include "../detail/state.hpp"
#include "tessera/local/memory.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace tessera::comm {

using State = ProcessGroup::State;
using detail::MpiPending;

namespace {

// The last collective enqueued on a device without waiting (NCCL), named by synchronize's note.
thread_local Call last_enqueued{nullptr, 0, DType::int32};
const Call& enqueued(const Call& c) { return last_enqueued = c; }

enum Tag : int { tag_p2p = 7001, tag_gather, tag_scatter, tag_all_gather, tag_all_to_all };

bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

DevicePath transport_for(State& st, const Device& d) {
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (auto it = st.transport.find(d.index()); it != st.transport.end()) return it->second;
  }
  // Collective: every rank must agree, or the ranks would wait on different transports.
  const bool nccl = !st.mpi_only && detail::nccl_usable(st, d);
  const bool aware = detail::mpi_all_reduce_min(st, cuda_aware_mpi() ? 1 : 0, "CUDA-aware MPI query") == 1;
  const auto t = nccl ? DevicePath::nccl : aware ? DevicePath::cuda_aware_mpi : DevicePath::staged_mpi;
  std::lock_guard<std::mutex> lock(st.mu);
  st.transport[d.index()] = t;
  return t;
}

void check_root(const State& st, int root, const char* op) {
  if (root < 0 || root >= st.size)
    throw InvalidArgument(std::string(op) + ": root " + std::to_string(root) + " outside a group of " +
                          std::to_string(st.size) + " ranks");
}
void check_peer(const State& st, int peer, const char* op) {
  if (peer < 0 || peer >= st.size)
    throw InvalidArgument(std::string(op) + ": peer " + std::to_string(peer) + " outside a group of " +
                          std::to_string(st.size) + " ranks");
}
void check_counts(const State& st, Counts c, const char* what, const char* op) {
  if (static_cast<int>(c.size()) != st.size)
    throw InvalidArgument(std::string(op) + ": " + what + " has " + std::to_string(c.size()) +
                          " entries for a group of " + std::to_string(st.size) + " ranks");
}
void check_buffer(const void* p, std::size_t count, const char* what, const char* op) {
  if (count > 0 && p == nullptr)
    throw InvalidArgument(std::string(op) + ": null " + what + " buffer for " + std::to_string(count) + " elements");
}
// Complex numbers have no order and NCCL no complex product; bool reduces as or / and.
ReduceOp reducible(DType t, ReduceOp op, const char* name) {
  if ((t == DType::complex64 || t == DType::complex128) && op != ReduceOp::sum)
    throw InvalidArgument(std::string(name) + ": " + dtype_name(t) + " supports only the sum reduction, not " +
                          reduce_op_name(op));
  if (t == DType::boolean) return (op == ReduceOp::sum || op == ReduceOp::max) ? ReduceOp::max : ReduceOp::min;
  return op;
}

const char* cbytes(const void* p, std::size_t off) { return static_cast<const char*>(p) + off; }
char* bytes(void* p, std::size_t off) { return static_cast<char*>(p) + off; }

// Host images of device buffers for the staged transport: inputs copied down before the MPI
// calls, outputs copied back after them.
class Stage {
 public:
  Stage(const Stream& s) : s_(s) {}
  const void* in(const void* dev, std::size_t n) {
    void* h = slot(n);
    if (n) tessera::detail::memcpy_any(h, Device::host(), dev, s_.device(), n, s_);
    return h;
  }
  void* out(void* dev, std::size_t n) {
    void* h = slot(n);
    if (n) back_.push_back({dev, h, n});
    return h;
  }
  void* inout(void* dev, std::size_t n) {
    void* h = const_cast<void*>(in(dev, n));
    if (n) back_.push_back({dev, h, n});
    return h;
  }
  void ready() const { s_.synchronize(); }
  // Copies the outputs back; keeps the pinned memory alive until then.
  std::function<void()> finish() {
    return [s = &s_, keep = keep_, back = back_] {
      for (const auto& b : back) tessera::detail::memcpy_any(b.dev, s->device(), b.host, Device::host(), b.bytes, *s);
      s->synchronize();
    };
  }

 private:
  struct Back { void* dev; void* host; std::size_t bytes; };
  void* slot(std::size_t n) {
    keep_.push_back(take_pinned(n));
    return keep_.back()->data();
  }
  const Stream& s_;
  std::vector<std::shared_ptr<PinnedBuffer>> keep_;
  std::vector<Back> back_;
};

// Posts a reduction (all_reduce / reduce) over MPI in pieces that fit MPI's int counts.
void post_reduce(State& st, MpiPending& p, const void* send, void* recv, std::size_t count, DType t, ReduceOp op,
                 int root) {
  std::size_t factor = 1;
  const MPI_Datatype mt = detail::mpi_type(t, &factor);
  const MPI_Op mo = detail::mpi_op(op);
  const std::size_t n = count * factor, esz = dtype_size(t) / factor;
  constexpr std::size_t piece = std::size_t(1) << 30;
  const bool in_place = send == recv;
  for (std::size_t off = 0; off < n; off += piece) {
    const int len = static_cast<int>(std::min(piece, n - off));
    const void* sp = in_place ? MPI_IN_PLACE : cbytes(send, off * esz);
    p.requests.emplace_back();
    if (root < 0) {
      TESSERA_CHECK_MPI(MPI_Iallreduce(sp, bytes(recv, off * esz), len, mt, mo, st.comm, &p.requests.back()));
    } else {
      const void* rs = (in_place && st.rank != root) ? cbytes(send, off * esz) : sp;  // IN_PLACE only at root
      TESSERA_CHECK_MPI(MPI_Ireduce(rs, st.rank == root ? bytes(recv, off * esz) : nullptr, len, mt, mo, root,
                                    st.comm, &p.requests.back()));
    }
  }
}

std::function<void(void*, const void*, std::size_t)> host_copy() {
  return [](void* d, const void* s, std::size_t n) { if (d != s && n) std::memmove(d, s, n); };
}
std::function<void(void*, const void*, std::size_t)> device_copy(const Stream& s) {
  return [&s](void* d, const void* src, std::size_t n) {
    if (d != src && n) tessera::detail::memcpy_any(d, s.device(), src, s.device(), n, s);
  };
}

// Runs a list of transfers on whichever transport the stream's device uses. `keep` (a scratch
// buffer the transfers read) lives until they have run, inside a Group too.
void run_transfers(State& st, const Call& c, std::vector<Transfer> xfers, int tag, const Stream& s,
                   std::shared_ptr<void> keep = nullptr) {
  st.check();
  const Device d = s.device();
  if (d.is_host()) {
    detail::mpi_run(st, c, [&](MpiPending& p) {
      detail::mpi_post_transfers(st, xfers, tag, p, host_copy());
      if (keep) p.after.push_back([keep] {});
    });
    return;
  }
  switch (transport_for(st, d)) {
    case DevicePath::nccl:
      detail::nccl_transfers(st, enqueued(c), xfers, s, std::move(keep));
      return;
    case DevicePath::cuda_aware_mpi:
      s.synchronize();  // MPI reads device memory directly: the producers must be done
      detail::mpi_run(st, c, [&](MpiPending& p) {
        detail::mpi_post_transfers(st, xfers, tag, p, device_copy(s));
        p.after.push_back([&s, keep] { s.synchronize(); });
      });
      return;
    case DevicePath::staged_mpi: {
      Stage stage(s);
      std::vector<Transfer> host = xfers;
      for (auto& x : host) {
        if (x.src && x.dst) continue;  // local copies stay on the device
        if (x.src) x.src = stage.in(x.src, x.bytes);
        else x.dst = stage.out(x.dst, x.bytes);
      }
      stage.ready();
      detail::mpi_run(st, c, [&](MpiPending& p) {
        std::vector<Transfer> remote, local;
        for (const auto& x : host) (x.src && x.dst ? local : remote).push_back(x);
        for (const auto& x : local) device_copy(s)(x.dst, x.src, x.bytes);
        detail::mpi_post_transfers(st, remote, tag, p, host_copy());
        p.after.push_back(stage.finish());
        if (keep) p.after.push_back([keep] {});
      });
      return;
    }
  }
}

// Per-rank counts and displacements of `count` elements each: the v-variant of a uniform call.
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> uniform_blocks(int size, std::size_t count) {
  std::vector<std::size_t> counts(size, count), displs(size);
  for (int r = 0; r < size; ++r) displs[r] = r * count;
  return {std::move(counts), std::move(displs)};
}

// In-place all_to_all(v): the send side needs its own copy.
std::shared_ptr<void> scratch_copy(const void* src, std::size_t n, const Stream& s, const void** out) {
  if (s.device().is_host()) {
    auto v = std::make_shared<std::vector<char>>(cbytes(src, 0), cbytes(src, n));
    *out = v->data();
    return v;
  }
  auto b = std::make_shared<Buffer>(n ? n : 1, s);
  if (n) tessera::detail::memcpy_any(b->data(), s.device(), src, s.device(), n, s);
  *out = b->data();
  return b;
}

}  // namespace

// ---- reductions and broadcast ----

void ProcessGroup::all_reduce(const void* send, void* recv, std::size_t count, DType t, ReduceOp op,
                              const Stream& s) const {
  const Call c{"all_reduce", count, t};
  op = reducible(t, op, c.op);
  check_buffer(send, count, "send", c.op);
  check_buffer(recv, count, "recv", c.op);
  auto& st = *state_;
  st.check();
  const std::size_t n = count * dtype_size(t);
  const Device d = s.device();
  const auto tr = d.is_host() ? DevicePath::cuda_aware_mpi : transport_for(st, d);
  if (!d.is_host() && tr == DevicePath::nccl) return detail::nccl_all_reduce(st, enqueued(c), send, recv, op, s);
  if (!d.is_host() && tr == DevicePath::staged_mpi) {
    Stage stage(s);
    void* h = send == recv ? stage.inout(recv, n) : nullptr;
    const void* hs = h ? h : stage.in(send, n);
    void* hr = h ? h : stage.out(recv, n);
    stage.ready();
    return detail::mpi_run(st, c, [&](MpiPending& p) {
      post_reduce(st, p, hs, hr, count, t, op, -1);
      p.after.push_back(stage.finish());
    });
  }
  if (!d.is_host()) s.synchronize();
  detail::mpi_run(st, c, [&](MpiPending& p) { post_reduce(st, p, send, recv, count, t, op, -1); });
}

void ProcessGroup::reduce(const void* send, void* recv, std::size_t count, DType t, ReduceOp op, int root,
                          const Stream& s) const {
  const Call c{"reduce", count, t};
  op = reducible(t, op, c.op);
  check_root(*state_, root, c.op);
  check_buffer(send, count, "send", c.op);
  if (rank() == root) check_buffer(recv, count, "recv", c.op);
  auto& st = *state_;
  st.check();
  const std::size_t n = count * dtype_size(t);
  const Device d = s.device();
  const auto tr = d.is_host() ? DevicePath::cuda_aware_mpi : transport_for(st, d);
  if (!d.is_host() && tr == DevicePath::nccl) return detail::nccl_reduce(st, enqueued(c), send, recv, op, root, s);
  if (!d.is_host() && tr == DevicePath::staged_mpi) {
    Stage stage(s);
    const bool root_here = st.rank == root;
    void* h = (send == recv && root_here) ? stage.inout(recv, n) : nullptr;
    const void* hs = h ? h : stage.in(send, n);
    void* hr = h ? h : (root_here ? stage.out(recv, n) : nullptr);
    stage.ready();
    return detail::mpi_run(st, c, [&](MpiPending& p) {
      post_reduce(st, p, hs, hr, count, t, op, root);
      p.after.push_back(stage.finish());
    });
  }
  if (!d.is_host()) s.synchronize();
  detail::mpi_run(st, c, [&](MpiPending& p) {
    post_reduce(st, p, send, st.rank == root ? recv : const_cast<void*>(send), count, t, op, root);
  });
}

void ProcessGroup::broadcast(const void* send, void* recv, std::size_t count, DType t, int root,
                             const Stream& s) const {
  const Call c{"broadcast", count, t};
  check_root(*state_, root, c.op);
  if (rank() == root) check_buffer(send, count, "send", c.op);
  check_buffer(recv, count, "recv", c.op);
  auto& st = *state_;
  st.check();
  const std::size_t n = count * dtype_size(t);
  const Device d = s.device();
  const bool root_here = st.rank == root;
  const auto tr = d.is_host() ? DevicePath::cuda_aware_mpi : transport_for(st, d);
  if (!d.is_host() && tr == DevicePath::nccl) return detail::nccl_broadcast(st, enqueued(c), send, recv, root, s);
  if (!d.is_host() && tr == DevicePath::staged_mpi) {
    Stage stage(s);
    void* h = root_here ? const_cast<void*>(stage.in(send, n)) : stage.out(recv, n);
    if (root_here && recv != send && n) tessera::detail::memcpy_any(recv, d, send, d, n, s);
    stage.ready();
    return detail::mpi_run(st, c, [&](MpiPending& p) {
      detail::mpi_post_bytes_bcast(st, h, n, root, p);
      p.after.push_back(stage.finish());
    });
  }
  if (!d.is_host()) s.synchronize();
  if (root_here && recv != send && n) {
    if (d.is_host()) std::memmove(recv, send, n);
    else tessera::detail::memcpy_any(recv, d, send, d, n, s), s.synchronize();
  }
  detail::mpi_run(st, c, [&](MpiPending& p) { detail::mpi_post_bytes_bcast(st, recv, n, root, p); });
}

void ProcessGroup::reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType t, ReduceOp op,
                                  const Stream& s) const {
  const Call c{"reduce_scatter", recv_count, t};
  op = reducible(t, op, c.op);
  check_buffer(send, recv_count, "send", c.op);
  check_buffer(recv, recv_count, "recv", c.op);
  auto& st = *state_;
  st.check();
  const Device d = s.device();
  if (!d.is_host() && transport_for(st, d) == DevicePath::nccl)
    return detail::nccl_reduce_scatter(st, enqueued(c), send, recv, op, s);
  // Over MPI: rank r's block is a reduce to root r; posted together they run concurrently. In
  // place, each root reduces its own block where it lies; the other reduces read other blocks.
  const std::size_t b = recv_count * dtype_size(t);
  const bool in_place = recv == cbytes(send, st.rank * b);
  Group g;
  for (int r = 0; r < st.size; ++r) {
    const void* block = cbytes(send, r * b);
    reduce(block, (r == st.rank && in_place) ? const_cast<void*>(block) : recv, recv_count, t, op, r, s);
  }
  g.end();
}

// ---- data movement ----

void ProcessGroup::all_gather(const void* send, void* recv, std::size_t count, DType t, const Stream& s) const {
  const auto [counts, displs] = uniform_blocks(size(), count);
  const Call c{"all_gather", count, t};
  check_buffer(send, count, "send", c.op);
  if (!s.device().is_host() && count && transport_for(*state_, s.device()) == DevicePath::nccl)
    return detail::nccl_all_gather(*state_, enqueued(c), send, recv, s);
  all_gatherv(send, count, recv, counts, displs, t, s);
}

void ProcessGroup::all_gatherv(const void* send, std::size_t send_count, void* recv, Counts recv_counts,
                               Counts displs, DType t, const Stream& s) const {
  const Call c{"all_gatherv", send_count, t};
  auto& st = *state_;
  check_counts(st, recv_counts, "recv_counts", c.op);
  check_counts(st, displs, "displs", c.op);
  if (recv_counts[st.rank] != send_count)
    throw InvalidArgument(std::string(c.op) + ": rank " + std::to_string(st.rank) + " sends " +
                          std::to_string(send_count) + " elements but recv_counts says " +
                          std::to_string(recv_counts[st.rank]));
  check_buffer(send, send_count, "send", c.op);
  const std::size_t e = dtype_size(t);
  std::vector<Transfer> x;
  for (int p = 0; p < st.size; ++p) {
    void* dst = bytes(recv, displs[p] * e);
    if (p == st.rank) { x.push_back({p, send, dst, send_count * e}); continue; }
    x.push_back({p, send, nullptr, send_count * e});
    x.push_back({p, nullptr, dst, recv_counts[p] * e});
  }
  run_transfers(st, c, std::move(x), tag_all_gather, s);
}

void ProcessGroup::all_to_all(const void* send, void* recv, std::size_t count, DType t, const Stream& s) const {
  const auto [counts, displs] = uniform_blocks(size(), count);
  if (!s.device().is_host() && count && send != recv && transport_for(*state_, s.device()) == DevicePath::nccl)
    return detail::nccl_all_to_all(*state_, enqueued(Call{"all_to_all", count, t}), send, recv, s);
  all_to_allv(send, counts, displs, recv, counts, displs, t, s);
}

void ProcessGroup::all_to_allv(const void* send, Counts send_counts, Counts send_displs, void* recv,
                               Counts recv_counts, Counts recv_displs, DType t, const Stream& s) const {
  const Call c{"all_to_allv", send_counts.empty() ? 0 : send_counts[0], t};
  auto& st = *state_;
  check_counts(st, send_counts, "send_counts", c.op);
  check_counts(st, send_displs, "send_displs", c.op);
  check_counts(st, recv_counts, "recv_counts", c.op);
  check_counts(st, recv_displs, "recv_displs", c.op);
  const std::size_t e = dtype_size(t);
  std::shared_ptr<void> scratch;
  if (send == recv) {  // in place: send from a copy
    std::size_t extent = 0;
    for (int p = 0; p < st.size; ++p) extent = std::max(extent, (send_displs[p] + send_counts[p]) * e);
    st.check();
    scratch = scratch_copy(send, extent, s, &send);
  }
  std::vector<Transfer> x;
  for (int p = 0; p < st.size; ++p) {
    const void* src = cbytes(send, send_displs[p] * e);
    void* dst = bytes(recv, recv_displs[p] * e);
    if (p == st.rank) {
      if (send_counts[p] != recv_counts[p])
        throw InvalidArgument(std::string(c.op) + ": rank " + std::to_string(p) + " sends itself " +
                              std::to_string(send_counts[p]) + " elements but receives " +
                              std::to_string(recv_counts[p]));
      x.push_back({p, src, dst, send_counts[p] * e});
      continue;
    }
    x.push_back({p, src, nullptr, send_counts[p] * e});
    x.push_back({p, nullptr, dst, recv_counts[p] * e});
  }
  // A device scratch buffer is freed on `s`, so stream-ordered after the exchange.
  run_transfers(st, c, std::move(x), tag_all_to_all, s, std::move(scratch));
}

void ProcessGroup::gather(const void* send, void* recv, std::size_t count, DType t, int root, const Stream& s) const {
  const auto [counts, displs] = uniform_blocks(size(), count);
  gatherv(send, count, recv, counts, displs, t, root, s);
}

void ProcessGroup::gatherv(const void* send, std::size_t send_count, void* recv, Counts recv_counts, Counts displs,
                           DType t, int root, const Stream& s) const {
  const Call c{"gatherv", send_count, t};
  auto& st = *state_;
  check_root(st, root, c.op);
  check_buffer(send, send_count, "send", c.op);
  // Counts matter on root only; where a non-root passes them too, they are checked as well, so
  // that every rank throws together instead of leaving the others waiting.
  if (st.rank == root || !recv_counts.empty()) check_counts(st, recv_counts, "recv_counts", c.op);
  if (st.rank == root || !displs.empty()) check_counts(st, displs, "displs", c.op);
  const std::size_t e = dtype_size(t);
  std::vector<Transfer> x;
  if (st.rank != root) {
    x.push_back({root, send, nullptr, send_count * e});
  } else {
    if (recv_counts[root] != send_count)
      throw InvalidArgument(std::string(c.op) + ": root sends " + std::to_string(send_count) +
                            " elements but recv_counts[root] is " + std::to_string(recv_counts[root]));
    for (int p = 0; p < st.size; ++p) {
      void* dst = bytes(recv, displs[p] * e);
      if (p == root) x.push_back({p, send, dst, send_count * e});
      else x.push_back({p, nullptr, dst, recv_counts[p] * e});
    }
  }
  run_transfers(st, c, std::move(x), tag_gather, s);
}

void ProcessGroup::scatter(const void* send, void* recv, std::size_t count, DType t, int root, const Stream& s) const {
  const auto [counts, displs] = uniform_blocks(size(), count);
  scatterv(send, counts, displs, recv, count, t, root, s);
}

void ProcessGroup::scatterv(const void* send, Counts send_counts, Counts displs, void* recv, std::size_t recv_count,
                            DType t, int root, const Stream& s) const {
  const Call c{"scatterv", recv_count, t};
  auto& st = *state_;
  check_root(st, root, c.op);
  check_buffer(recv, recv_count, "recv", c.op);
  if (st.rank == root || !send_counts.empty()) check_counts(st, send_counts, "send_counts", c.op);
  if (st.rank == root || !displs.empty()) check_counts(st, displs, "displs", c.op);
  const std::size_t e = dtype_size(t);
  std::vector<Transfer> x;
  if (st.rank != root) {
    x.push_back({root, nullptr, recv, recv_count * e});
  } else {
    if (send_counts[root] != recv_count)
      throw InvalidArgument(std::string(c.op) + ": root receives " + std::to_string(recv_count) +
                            " elements but send_counts[root] is " + std::to_string(send_counts[root]));
    for (int p = 0; p < st.size; ++p) {
      const void* src = cbytes(send, displs[p] * e);
      if (p == root) x.push_back({p, src, recv, recv_count * e});
      else x.push_back({p, src, nullptr, send_counts[p] * e});
    }
  }
  run_transfers(st, c, std::move(x), tag_scatter, s);
}

void ProcessGroup::send(const void* buf, std::size_t count, DType t, int peer, const Stream& s) const {
  const Call c{"send", count, t};
  check_peer(*state_, peer, c.op);
  check_buffer(buf, count, "send", c.op);
  run_transfers(*state_, c, {{peer, buf, nullptr, count * dtype_size(t)}}, tag_p2p, s);
}

void ProcessGroup::recv(void* buf, std::size_t count, DType t, int peer, const Stream& s) const {
  const Call c{"recv", count, t};
  check_peer(*state_, peer, c.op);
  check_buffer(buf, count, "recv", c.op);
  run_transfers(*state_, c, {{peer, nullptr, buf, count * dtype_size(t)}}, tag_p2p, s);
}

void ProcessGroup::sendrecv(const void* send, std::size_t send_count, int dest, void* recv, std::size_t recv_count,
                            int source, DType t, const Stream& s) const {
  const Call c{"sendrecv", send_count, t};
  check_peer(*state_, dest, c.op);
  check_peer(*state_, source, c.op);
  const std::size_t e = dtype_size(t);
  std::vector<Transfer> x;
  if (dest == rank() && source == rank()) {
    x.push_back({dest, send, recv, std::min(send_count, recv_count) * e});
  } else {
    x.push_back({dest, send, nullptr, send_count * e});
    x.push_back({source, nullptr, recv, recv_count * e});
  }
  run_transfers(*state_, c, std::move(x), tag_p2p, s);
}

// ---- waiting ----

void ProcessGroup::prepare(const Device& d) const {
  if (d.is_host() || size() == 1) return;
  state_->check();
  if (transport_for(*state_, d) == DevicePath::nccl) detail::nccl_prepare(*state_, d);
}

Transport ProcessGroup::device_transport(const Device& d) const {
  if (d.is_host()) throw InvalidArgument("ProcessGroup::device_transport: host buffers always use MPI");
  return transport_for(*state_, d) == DevicePath::nccl ? Transport::nccl : Transport::mpi;
}

bool ProcessGroup::stages_device_buffers(const Device& d) const {
  return !d.is_host() && transport_for(*state_, d) == DevicePath::staged_mpi;
}

std::string ProcessGroup::device_transport_str(const Device& d) const {
  if (d.is_host()) return "mpi";
  switch (transport_for(*state_, d)) {
    case DevicePath::nccl: return "nccl";
    case DevicePath::cuda_aware_mpi: return "mpi (cuda-aware)";
    case DevicePath::staged_mpi: return "mpi (staged)";
  }
  return "?";
}

void ProcessGroup::synchronize(const Stream& s) const {
  state_->check();
  if (s.device().is_host()) return;
  {
    const std::string where = "synchronize on " + s.device().str() + ", after ";
    const detail::InFlightNote note(*state_, last_enqueued.op ? last_enqueued : Call{"synchronize", 0, DType::int32},
                                    last_enqueued.op ? where.c_str() : nullptr);
    detail::device_wait(*state_, s);
  }
  state_->check();
}

}  // namespace tessera::comm
