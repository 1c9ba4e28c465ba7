// Internals shared by the ProcessGroup front end and its MPI and NCCL transports.
#pragma once
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/comm/error.hpp"
#include "tessera/comm/process_group.hpp"

namespace tessera::comm {

using Clock = std::chrono::steady_clock;

// How a group moves device buffers on one device: Transport::nccl, or Transport::mpi with the
// buffers handed to a CUDA-aware MPI or staged through pinned host memory.
enum class DevicePath { nccl, cuda_aware_mpi, staged_mpi };

// What a collective is, for error messages and deadlines.
struct Call {
  const char* op;
  std::size_t count;
  DType type;
};

// One point-to-point leg of a data-movement collective (all_gather(v), all_to_all(v),
// gather(v), scatter(v), send, recv): a send (src only), a receive (dst only) or, with both,
// a local copy (peer == own rank). Zero-byte legs are skipped on both sides.
struct Transfer {
  int peer;
  const void* src;
  void* dst;
  std::size_t bytes;
};

struct ProcessGroup::State {
  MPI_Comm comm = MPI_COMM_NULL;        // our duplicate, freed with the last copy
  MPI_Comm node_comm = MPI_COMM_NULL;   // ranks of this group on the same node
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  bool cartesian = false;
  bool mpi_only = false;  // device buffers never go through NCCL (ProcessGroup::mpi_only)
  int cta_policy = -1;    // ncclConfig_t::CTAPolicy of its communicators; -1: NCCL's default
  std::atomic<double> timeout{300.0};

  std::mutex mu;                              // guards everything below
  std::atomic<bool> failed{false};
  std::string failure;
  std::vector<MPI_Request> orphans;           // requests of timed-out host collectives
  std::map<int, DevicePath> transport;   // per CUDA device ordinal
  // cartesian() and sub() results, made once per shape: grids of one shape share their
  // communicators (MPI's and NCCL's) and the exchange transports cached for them.
  std::map<std::pair<std::vector<int>, std::vector<int>>, ProcessGroup> carts;
  std::map<std::vector<int>, ProcessGroup> subs;

  explicit State(MPI_Comm user);
  ~State();
  // node_comm narrowed to this rank's emulated node (TESSERA_EMULATE_NODES = k > 1).
  void split_into_emulated_node(int k, bool is_world);
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Throws CommError if the group has failed.
  void check() const;
  // Marks the group failed (the first reason wins) and aborts its NCCL communicators, now or
  // (abort_now false) later, by the watchdog.
  void fail(const std::string& reason, bool abort_now = true);
  // "all_reduce (1024 x float32) on a group of 4 ranks, rank 2"
  std::string describe(const Call& c) const;
  // "group of 4 ranks, rank 2" (failures not tied to one collective)
  std::string describe() const;
};

namespace detail {

// The note printed if the launcher ends this rank while it waits (mpi_transport.cpp): set while
// a rank waits in MPI, in synchronize, or inside an NCCL launch (whose connection set-up blocks
// on a dead peer); "<context><op> (<count> x <dtype>) on a group of ...".
void in_flight_begin(const ProcessGroup::State& st, const Call& c, const char* context);
void in_flight_end();
struct InFlightNote {
  InFlightNote(const ProcessGroup::State& st, const Call& c, const char* context) { in_flight_begin(st, c, context); }
  ~InFlightNote() { in_flight_end(); }
  InFlightNote(const InFlightNote&) = delete;
  InFlightNote& operator=(const InFlightNote&) = delete;
};

// ---- MPI transport (mpi_transport.cpp): host pointers, or device pointers with CUDA-aware MPI.
// Posts non-blocking MPI calls; outside a Group waits for them (with the group's deadline),
// inside a Group leaves them to the Group's end. `after` runs once the requests completed.
struct MpiPending {
  std::vector<MPI_Request> requests;
  std::vector<std::function<void()>> after;
};
// MPI's text for an error code ("code N" where MPI has none).
std::string mpi_error_text(int code);
MPI_Datatype mpi_type(DType t, std::size_t* count_factor);
MPI_Op mpi_op(ReduceOp op);  // bool and complex are mapped before (collectives.cpp)
void mpi_post_transfers(ProcessGroup::State& st, const std::vector<Transfer>& xfers, int tag,
                        MpiPending& p, const std::function<void(void*, const void*, std::size_t)>& local_copy);
void mpi_post_bytes_bcast(ProcessGroup::State& st, void* buf, std::size_t bytes, int root, MpiPending& p);
// Runs `post` (which fills a MpiPending) then waits or defers to the enclosing Group.
void mpi_run(ProcessGroup::State& st, const Call& c, const std::function<void(MpiPending&)>& post);
// Polls until done or the deadline (false); mpi_timed_out parks the requests, fails the group
// and throws CommError.
bool mpi_wait_until(std::vector<MPI_Request>& reqs, Clock::time_point deadline, ProcessGroup::State& st,
                    const Call& c);
[[noreturn]] void mpi_timed_out(ProcessGroup::State& st, const Call& c, std::vector<MPI_Request>& reqs,
                                Clock::time_point start);
// Blocking helpers with the group's deadline, for the transports' own bookkeeping.
void mpi_bcast_bytes(ProcessGroup::State& st, void* buf, std::size_t bytes, int root, const char* why);
int mpi_all_reduce_min(ProcessGroup::State& st, int value, const char* why);

// ---- Group bookkeeping (group.cpp)
int group_depth();
void group_add_mpi(ProcessGroup::State& st, const Call& c, MpiPending&& p);

// ---- NCCL transport (cuda/nccl_transport.cpp; stubs in builds without NCCL).
// Whether every rank of the group can use NCCL on its device `d` (collective over the group).
bool nccl_usable(ProcessGroup::State& st, const Device& d);
// Makes the group's NCCL communicator on `d` now (collective), if it does not exist yet.
void nccl_prepare(ProcessGroup::State& st, const Device& d);
void nccl_all_reduce(ProcessGroup::State& st, const Call& c, const void* send, void* recv, ReduceOp op, const Stream& s);
void nccl_reduce(ProcessGroup::State& st, const Call& c, const void* send, void* recv, ReduceOp op, int root,
                 const Stream& s);
void nccl_broadcast(ProcessGroup::State& st, const Call& c, const void* send, void* recv, int root, const Stream& s);
void nccl_all_gather(ProcessGroup::State& st, const Call& c, const void* send, void* recv, const Stream& s);
void nccl_reduce_scatter(ProcessGroup::State& st, const Call& c, const void* send, void* recv, ReduceOp op,
                         const Stream& s);
// ncclAlltoAll (NCCL >= 2.28; grouped send/recv before).
void nccl_all_to_all(ProcessGroup::State& st, const Call& c, const void* send, void* recv, const Stream& s);
// Whether this build's NCCL registers symmetric windows (>= 2.27).
bool nccl_symmetric_windows();
// ProcessGroup::symmetric_buffer on a group whose device transport is NCCL.
std::shared_ptr<void> nccl_symmetric_buffer(const std::shared_ptr<ProcessGroup::State>& st, std::size_t bytes,
                                            const Device& d);
void nccl_transfers(ProcessGroup::State& st, const Call& c, const std::vector<Transfer>& xfers, const Stream& s,
                    std::shared_ptr<void> keep);
// Called by the outermost Group end: closes the ncclGroupStart that the group's first NCCL call
// opened (if any), launching its work, and registers that work with the watchdog.
void nccl_group_end();
// Waits for a device stream under the group's deadline (polling; watchdog-aware).
void device_wait(ProcessGroup::State& st, const Stream& s);
// Aborts the group's NCCL communicators (State::fail; may run on the watchdog thread).
void nccl_abort(ProcessGroup::State& st);
// Fails every group that has an NCCL communicator and is not failed yet (a peer died: NCCL
// reported an asynchronous error on one of them), aborting their communicators.
void nccl_fail_every_group(const std::string& reason);
// ~State: waits for the group's device work, then destroys its communicators (aborts them if
// the work did not finish).
void nccl_release(ProcessGroup::State& st);
// Destroys every NCCL communicator left, newest first, and stops the watchdog (Runtime's end).
void nccl_shutdown();

}  // namespace detail
}  // namespace tessera::comm
