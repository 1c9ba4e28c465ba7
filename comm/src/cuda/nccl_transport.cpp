// The NCCL transport: one communicator per (group, device), made on first use, every call
// stream-ordered and followed by the watchdog; data movement as grouped ncclSend/ncclRecv.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tessera/comm/settings.hpp"
#include "../detail/state.hpp"
#include "tessera/local/settings.hpp"
#include "tessera/comm/nccl_check.hpp"
#include "tessera/local/cuda_check.hpp"
#include "watchdog.hpp"

namespace tessera::comm::detail {

using State = ProcessGroup::State;

namespace {

struct Comm {
  State* st;
  int device;
  ncclComm_t comm;
};
std::mutex reg_mu;
std::vector<Comm> registry;  // creation order

// Device work of the open Group: launched by its ncclGroupEnd, then followed.
struct Deferred {
  State* st;
  int device;
  cudaStream_t stream;
  Call call;
  std::shared_ptr<void> keep;
};
thread_local bool group_open = false;
thread_local std::vector<Deferred> deferred;

ncclDataType_t nccl_type(DType t, std::size_t* factor) {
  *factor = 1;
  switch (t) {
    case DType::boolean: return ncclUint8;
    case DType::int32: return ncclInt32;
    case DType::int64: return ncclInt64;
    case DType::float32: return ncclFloat32;
    case DType::float64: return ncclFloat64;
    case DType::complex64: *factor = 2; return ncclFloat32;
    case DType::complex128: *factor = 2; return ncclFloat64;
  }
  throw InvalidArgument("no NCCL type for dtype " + std::to_string(static_cast<int>(t)));
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
  }
  throw InvalidArgument("unknown ReduceOp " + std::to_string(static_cast<int>(op)));
}

// The groups whose communicators report an asynchronous error (the watchdog fails them).
std::vector<AsyncFailure> async_errors() {
  std::vector<AsyncFailure> failures;
  std::lock_guard<std::mutex> lock(reg_mu);
  for (const auto& c : registry) {
    ncclResult_t r = ncclSuccess;
    if (ncclCommGetAsyncError(c.comm, &r) == ncclSuccess && r != ncclSuccess && r != ncclInProgress)
      failures.push_back({c.st, std::string("NCCL asynchronous error on cuda:") + std::to_string(c.device) + ": " +
                                    ncclGetErrorString(r)});
  }
  return failures;
}

ncclComm_t comm_for(State& st, const Device& d) {
  {
    std::lock_guard<std::mutex> lock(reg_mu);
    for (const auto& c : registry)
      if (c.st == &st && c.device == d.index()) return c.comm;
  }
  if (group_open)
    throw InvalidArgument("the first device collective of a process group on " + d.str() +
                          " ran inside a comm::Group after other NCCL calls of the Group: NCCL cannot create a "
                          "communicator there; run one collective on the group before the Group");
  ncclUniqueId id;
  if (st.rank == 0) TESSERA_CHECK_NCCL(ncclGetUniqueId(&id));
  mpi_bcast_bytes(st, &id, sizeof id, 0, "NCCL unique id broadcast");
  DeviceGuard guard(d);
  ncclComm_t comm = nullptr;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  if (st.cta_policy >= 0) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.CTAPolicy = st.cta_policy == 2 ? NCCL_CTA_POLICY_ZERO
                       : st.cta_policy == 1 ? NCCL_CTA_POLICY_EFFICIENCY
                                            : NCCL_CTA_POLICY_DEFAULT;
    TESSERA_CHECK_NCCL(ncclCommInitRankConfig(&comm, st.size, id, st.rank, &config));
  } else
#endif
    TESSERA_CHECK_NCCL(ncclCommInitRank(&comm, st.size, id, st.rank));
  static bool poll_installed = false;
  if (!poll_installed) watchdog_set_poll(async_errors), poll_installed = true;
  std::lock_guard<std::mutex> lock(reg_mu);
  registry.push_back({&st, d.index(), comm});
  return comm;
}

// Enqueues `f(comm, stream)` now, or inside the Group's ncclGroupStart.
template <class F>
void enqueue(State& st, const Call& c, const Stream& s, F&& f, std::shared_ptr<void> keep = nullptr) {
  st.check();
  const Device d = s.device();
  ncclComm_t comm = comm_for(st, d);
  auto stream = static_cast<cudaStream_t>(s.native());
  DeviceGuard guard(d);
  const bool in_group = group_depth() > 0;
  if (in_group && !group_open) {
    TESSERA_CHECK_NCCL(ncclGroupStart());
    group_open = true;
  }
  {
    const InFlightNote note(st, c, "NCCL launch of ");  // a dead peer can hold its connection set-up
    f(comm, stream);
  }
  if (in_group) deferred.push_back({&st, d.index(), stream, c, std::move(keep)});
  else watchdog_follow(st, d.index(), stream, c);
}

}  // namespace

void nccl_prepare(State& st, const Device& d) { (void)comm_for(st, d); }

bool nccl_usable(State& st, const Device& d) {
  int ok = 1;
  if (!comm::settings().nccl) ok = 0;
  // NCCL needs one GPU per rank: find ranks of this node that share a GPU (by PCI bus id, which
  // also sees through per-rank CUDA_VISIBLE_DEVICES).
  char bus[32] = {};
  TESSERA_CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d.index()));
  std::vector<char> all(sizeof bus * st.local_size);
  MpiPending p;
  p.requests.emplace_back();
  TESSERA_CHECK_MPI(MPI_Iallgather(bus, sizeof bus, MPI_CHAR, all.data(), sizeof bus, MPI_CHAR, st.node_comm,
                                   &p.requests.back()));
  const auto start = Clock::now();
  const Call c{"GPU placement exchange", 1, DType::int32};
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(st.timeout.load()));
  if (!mpi_wait_until(p.requests, deadline, st, c))
    mpi_timed_out(st, c, p.requests, start);
  int sharing = 0;
  for (int r = 0; r < st.local_size; ++r)
    if (r != st.local_rank && std::strncmp(bus, &all[r * sizeof bus], sizeof bus) == 0) ++sharing;
  if (sharing) ok = 0;
  const int all_ok = mpi_all_reduce_min(st, ok, "NCCL availability agreement");
  if (!all_ok && sharing && st.local_rank == 0)
    std::fprintf(stderr, "tessera: rank %d: %d ranks share GPU %s; device buffers of this group go through MPI "
                 "(NCCL needs one GPU per rank)\n", st.rank, sharing + 1, bus);
  return all_ok == 1;
}

void nccl_all_reduce(State& st, const Call& c, const void* send, void* recv, ReduceOp op, const Stream& s) {
  std::size_t k = 1;
  const auto t = nccl_type(c.type, &k);
  enqueue(st, c, s, [&](ncclComm_t comm, cudaStream_t cs) {
    TESSERA_CHECK_NCCL(ncclAllReduce(send, recv, c.count * k, t, nccl_op(op), comm, cs));
  });
}

void nccl_reduce(State& st, const Call& c, const void* send, void* recv, ReduceOp op, int root, const Stream& s) {
  std::size_t k = 1;
  const auto t = nccl_type(c.type, &k);
  enqueue(st, c, s, [&](ncclComm_t comm, cudaStream_t cs) {
    TESSERA_CHECK_NCCL(ncclReduce(send, recv, c.count * k, t, nccl_op(op), root, comm, cs));
  });
}

void nccl_broadcast(State& st, const Call& c, const void* send, void* recv, int root, const Stream& s) {
  std::size_t k = 1;
  const auto t = nccl_type(c.type, &k);
  enqueue(st, c, s, [&](ncclComm_t comm, cudaStream_t cs) {
    TESSERA_CHECK_NCCL(ncclBroadcast(send, recv, c.count * k, t, root, comm, cs));
  });
}

void nccl_all_gather(State& st, const Call& c, const void* send, void* recv, const Stream& s) {
  std::size_t k = 1;
  const auto t = nccl_type(c.type, &k);
  enqueue(st, c, s, [&](ncclComm_t comm, cudaStream_t cs) {
    TESSERA_CHECK_NCCL(ncclAllGather(send, recv, c.count * k, t, comm, cs));
  });
}

void nccl_reduce_scatter(State& st, const Call& c, const void* send, void* recv, ReduceOp op, const Stream& s) {
  std::size_t k = 1;
  const auto t = nccl_type(c.type, &k);
  enqueue(st, c, s, [&](ncclComm_t comm, cudaStream_t cs) {
    TESSERA_CHECK_NCCL(ncclReduceScatter(send, recv, c.count * k, t, nccl_op(op), comm, cs));
  });
}

void nccl_all_to_all(State& st, const Call& c, const void* send, void* recv, const Stream& s) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  // One collective: with CTA policy zero and symmetric windows NCCL moves it with copy engines.
  std::size_t k = 1;
  const auto t = nccl_type(c.type, &k);
  enqueue(st, c, s, [&](ncclComm_t comm, cudaStream_t cs) {
    TESSERA_CHECK_NCCL(ncclAlltoAll(send, recv, c.count * k, t, comm, cs));
  });
#else
  const std::size_t n = c.count * dtype_size(c.type);
  std::vector<Transfer> x;
  for (int p = 0; p < st.size; ++p) {
    x.push_back({p, static_cast<const char*>(send) + p * n, nullptr, n});
    x.push_back({p, nullptr, static_cast<char*>(recv) + p * n, n});
  }
  nccl_transfers(st, c, x, s, nullptr);
#endif
}

bool nccl_symmetric_windows() { return NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0); }

std::shared_ptr<void> nccl_symmetric_buffer(const std::shared_ptr<State>& st, std::size_t bytes, const Device& d) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  ncclComm_t comm = comm_for(*st, d);
  DeviceGuard guard(d);
  void* p = nullptr;
  TESSERA_CHECK_NCCL(ncclMemAlloc(&p, bytes));
  ncclWindow_t win = nullptr;
  const ncclResult_t r = ncclCommWindowRegister(comm, p, bytes, &win, NCCL_WIN_COLL_SYMMETRIC);
  if (r != ncclSuccess) {
    ncclMemFree(p);
    TESSERA_CHECK_NCCL(r);
  }
  // The deleter keeps the group alive; after the communicator is gone (aborted, or destroyed at
  // the Runtime's end) there is no window left to deregister, only memory to free.
  return std::shared_ptr<void>(p, [st, d, comm, win](void* q) {
    DeviceGuard g(d);
    bool live = false;
    {
      std::lock_guard<std::mutex> lock(reg_mu);
      for (const auto& c : registry) live = live || (c.st == st.get() && c.comm == comm);
    }
    if (live && !st->failed.load()) ncclCommWindowDeregister(comm, win);
    ncclMemFree(q);
  });
#else
  (void)st, (void)bytes;
  throw BackendUnavailable("symmetric windows need NCCL >= 2.27, this Tessera was built with " +
                           std::to_string(NCCL_VERSION_CODE), d);
#endif
}

void nccl_transfers(State& st, const Call& c, const std::vector<Transfer>& xfers, const Stream& s,
                    std::shared_ptr<void> keep) {
  enqueue(st, c, s, [&](ncclComm_t comm, cudaStream_t cs) {
    // Self legs go through NCCL too: its kernel copies them alongside the remote ones.
    TESSERA_CHECK_NCCL(ncclGroupStart());
    for (const auto& x : xfers) {
      if (!x.bytes || x.src == x.dst) continue;
      if (x.src) TESSERA_CHECK_NCCL(ncclSend(x.src, x.bytes, ncclInt8, x.peer, comm, cs));
      if (x.dst) TESSERA_CHECK_NCCL(ncclRecv(x.dst, x.bytes, ncclInt8, x.peer, comm, cs));
    }
    TESSERA_CHECK_NCCL(ncclGroupEnd());
  }, std::move(keep));
}

void nccl_group_end() {
  if (!group_open) return;
  group_open = false;
  auto work = std::move(deferred);
  deferred.clear();
  {
    std::optional<InFlightNote> note;
    if (!work.empty()) note.emplace(*work.back().st, work.back().call, "NCCL group launch ending with ");
    TESSERA_CHECK_NCCL(ncclGroupEnd());
  }
  for (const auto& w : work) watchdog_follow(*w.st, w.device, w.stream, w.call);
}

void device_wait(State& st, const Stream& s) {
  DeviceGuard guard(s.device());
  auto stream = static_cast<cudaStream_t>(s.native());
  const auto start = Clock::now();
  while (true) {
    const cudaError_t q = cudaStreamQuery(stream);
    // A collective that ended because peers aborted leaves an error on the communicator: look
    // now, not at the watchdog's next scan.
    if (q == cudaSuccess) return watchdog_fail_async(async_errors());
    if (q != cudaErrorNotReady) TESSERA_CHECK_CUDA(q);
    if (st.failed.load()) return;  // the watchdog aborted the communicator: the caller throws
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    // A second past the deadline: a collective in flight misses its own deadline first, and
    // the watchdog's error names it.
    if (waited > st.timeout.load() + 1.0) {
      char msg[128];
      std::snprintf(msg, sizeof msg, ": stream not done after %.1f s (timeout %.1f s, TESSERA_COMM_TIMEOUT)", waited,
                    st.timeout.load());
      st.fail(st.describe(Call{"synchronize", 0, DType::int32}) + msg);
      return;
    }
    std::this_thread::yield();
  }
}

void nccl_abort(State& st) {
  std::vector<Comm> mine;
  {
    std::lock_guard<std::mutex> lock(reg_mu);
    for (auto it = registry.begin(); it != registry.end();) {
      if (it->st == &st) mine.push_back(*it), it = registry.erase(it);
      else ++it;
    }
  }
  for (const auto& c : mine) {
    DeviceGuard guard(Device::cuda(c.device));
    ncclCommAbort(c.comm);  // best effort: the group has failed already
  }
}

void nccl_fail_every_group(const std::string& reason) {
  std::vector<State*> groups;
  {
    std::lock_guard<std::mutex> lock(reg_mu);
    for (const auto& c : registry)
      if (!c.st->failed.load() && std::find(groups.begin(), groups.end(), c.st) == groups.end()) groups.push_back(c.st);
  }
  for (State* st : groups)
    st->fail(st->describe() + ": " + reason);
}

void nccl_release(State& st) {
  // Out of the registry first, so that the watchdog's error poll no longer sees them.
  std::vector<Comm> mine;
  {
    std::lock_guard<std::mutex> lock(reg_mu);
    for (auto it = registry.begin(); it != registry.end();) {
      if (it->st == &st) mine.push_back(*it), it = registry.erase(it);
      else ++it;
    }
  }
  const bool finished = watchdog_drain(st);
  for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
    DeviceGuard guard(Device::cuda(it->device));
    if (finished && !st.failed.load()) ncclCommDestroy(it->comm);
    else ncclCommAbort(it->comm);
  }
}

void nccl_shutdown() {
  watchdog_stop();
  std::vector<Comm> all;
  {
    std::lock_guard<std::mutex> lock(reg_mu);
    all.swap(registry);
  }
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const bool finished = watchdog_drain(*it->st);
    DeviceGuard guard(Device::cuda(it->device));
    if (!finished || it->st->failed.load()) ncclCommAbort(it->comm);
    else ncclCommDestroy(it->comm);
  }
}

}  // namespace tessera::comm::detail
