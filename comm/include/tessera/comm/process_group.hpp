// ProcessGroup: a set of ranks over an MPI communicator, and every collective on its buffers.
//
// Copies share one duplicated communicator (MPI_ERRORS_RETURN set on it); a user's communicator
// is never freed. Buffers are (pointer, count, DType) on the device of the given stream:
//  - device buffers go through NCCL on that stream: the call enqueues and returns without a host
//    sync. The NCCL communicator of (group, device) is made on first use (unique id broadcast
//    over MPI). TESSERA_NCCL=0, a build without NCCL, or several ranks sharing one GPU send
//    device buffers through MPI instead: CUDA-aware MPI when MPIX_Query_cuda_support() says so,
//    else staged through pinned host buffers (same results, slower, synchronous).
//  - host buffers go through MPI; the call returns when the data is in place (or, inside a
//    Group, when the Group ends).
// Counts are elements of the given type; v-variants take per-rank counts and displacements in
// elements. A call with send == recv (or the rank's own block of recv, for all_gather, gather
// and reduce_scatter) runs in place. Complex types reduce with sum only; bool reduces as
// logical or (sum, max) and logical and (prod, min).
//
// Hangs and failures: every collective has a deadline, TESSERA_COMM_TIMEOUT seconds (default
// 300; set_timeout() changes it for one group). A watchdog thread polls NCCL's async errors and
// the deadlines of enqueued device work; on an error or a timeout it aborts the NCCL
// communicator, the group is marked failed, and this call or the next one on the group (or
// synchronize()) throws CommError naming the operation, group size, rank and elapsed time. Host
// collectives wait with the same deadline. A failed group stays failed: make a new one.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/comm/transport.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/dtype.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::comm {

/// The reduction of a reducing collective.
enum class ReduceOp { sum, prod, min, max };
/// "sum", "prod", "min" or "max".
std::string reduce_op_name(ReduceOp op);


/// Per-rank counts or displacements, in elements.
using Counts = std::span<const std::size_t>;

/// Element types, and any 4- or 8-byte signed integer (long long included) for typed pointers.
template <class T>
concept Scalar = Element<T> || (std::is_integral_v<T> && std::is_signed_v<T> && (sizeof(T) == 4 || sizeof(T) == 8));
/// The DType a Scalar travels as.
template <Scalar T>
constexpr DType scalar_dtype() {
  if constexpr (Element<T>) return dtype_v<T>;
  else return sizeof(T) == 8 ? DType::int64 : DType::int32;
}

/// A set of ranks over an MPI communicator, and its collectives (see above); copies share it.
/// NCCL's CTA (thread block) policy for a group's communicators.
enum class CtaPolicy { standard, efficiency, zero };

class ProcessGroup {
 public:
  /// The group of all ranks (a duplicate of MPI_COMM_WORLD).
  static ProcessGroup world();
  /// A group over the user's communicator (duplicated; `comm` itself is left alone).
  explicit ProcessGroup(MPI_Comm comm);

  /// This rank's index in the group, and the group's size.
  int rank() const noexcept;
  int size() const noexcept;
  /// Rank and size among the ranks of this group on the same node (MPI_Comm_split_type; the
  /// same emulated node where TESSERA_EMULATE_NODES > 1).
  int local_rank() const noexcept;
  int local_size() const noexcept;
  /// This process's emulated node on its real node (TESSERA_EMULATE_NODES > 1; NCCL is given the
  /// host id "<hostname>-tessera-emulated-node-<n>"), or -1.
  static int emulated_node() noexcept;
  /// The group's own (duplicated) MPI communicator.
  MPI_Comm mpi_comm() const noexcept;

  /// Returns once every rank of the group has called it.
  void barrier() const;
  /// Whether `other` has the same ranks in the same order (MPI_IDENT or MPI_CONGRUENT); local.
  bool same_ranks(const ProcessGroup& other) const noexcept;

  // ---- agreement (host, collective, under the group's deadline) ----
  /// "" on every rank when no rank's `error` is non-empty; otherwise, on every rank, the message
  /// of the lowest rank that has one, with " (found by rank r)" in groups of more than one.
  std::string first_error(const std::string& error) const;
  /// Throws E(first_error(error)) on every rank when any rank has an error: a problem that only
  /// some ranks can see (a file, root's buffer) becomes the same exception everywhere, not a hang.
  template <class E = Error>
  void agree(const std::string& error) const {
    if (std::string m = first_error(error); !m.empty()) throw E(m);
  }
  /// Root's `s` on every rank (its length, then its bytes).
  void broadcast(std::string& s, int root) const;
  /// Ranks with the same colour form a sub-group, ordered by key (then by rank).
  ProcessGroup split(int color, int key) const;

  /// Cartesian process grids. cartesian(dims, periods) lays the ranks out row-major on `dims`
  /// (product == size(); a 0 entry is filled in as MPI_Dims_create does; ranks are not
  /// reordered). On a Cartesian group: dims(), periods(), coords(rank), rank_at(coords) (-1 when
  /// off a non-periodic edge), shift(axis, disp) -> {source, dest}, and sub(keep) -> the group of
  /// the ranks that share this rank's coordinates on the axes not kept (keep = {false, true} on a
  /// 2-D grid is this rank's row). Both are made once per shape (keep flags) and group: asking
  /// again returns the same group, so grids of one shape share their communicators (MPI's and
  /// NCCL's, made on first use) instead of making new ones.
  ProcessGroup cartesian(std::vector<int> dims, std::vector<bool> periods = {}) const;
  /// Whether the group is a Cartesian grid.
  bool is_cartesian() const noexcept;
  /// The grid's extent and periodicity along each axis.
  std::vector<int> dims() const;
  std::vector<bool> periods() const;
  /// The grid coordinates of `rank`, or of this rank.
  std::vector<int> coords(int rank) const;
  std::vector<int> coords() const { return coords(rank()); }
  /// The rank at `coords` (-1 when off a non-periodic edge).
  int rank_at(std::vector<int> coords) const;
  /// The {source, dest} ranks of a shift by `disp` along `axis`.
  std::pair<int, int> shift(int axis, int disp) const;
  /// The sub-grid of the ranks that share this rank's coordinates on the axes not kept.
  ProcessGroup sub(const std::vector<bool>& keep) const;

  /// A new group of the same ranks (collective) whose device buffers always travel through MPI
  /// (CUDA-aware, else staged through host memory), never NCCL: the exchange's `mpi` transport.
  ProcessGroup mpi_only() const;
  /// A new group of the same ranks (collective) whose NCCL communicators are made with CTA policy
  /// `p` (ncclConfig_t::CTAPolicy; NCCL >= 2.27, ignored before): `zero` lets NCCL 2.28 move
  /// all_to_all, gather and scatter between symmetric buffers with copy engines, using no SM.
  ProcessGroup nccl_policy(CtaPolicy p) const;
  /// Collective: `bytes` (the same on every rank) of device memory on `d` from ncclMemAlloc,
  /// registered as a symmetric window (NCCL_WIN_COLL_SYMMETRIC) of the group's communicator;
  /// deregistered and freed with the last copy of the pointer. Throws BackendUnavailable where the
  /// group's device buffers do not travel through NCCL (or NCCL is older than 2.27).
  std::shared_ptr<void> symmetric_buffer(std::size_t bytes, const Device& d) const;
  /// Whether symmetric_buffer works on `d`: the group lies on one node (NCCL's symmetric kernels
  /// and copy-engine collectives work inside one NVLink domain), its device buffers travel
  /// through NCCL and this build's NCCL registers symmetric windows (>= 2.27). Collective on first
  /// use, like device_transport.
  bool has_symmetric_windows(const Device& d) const;

  /// Sets the collective deadline of this group (shared by its copies), seconds.
  void set_timeout(double seconds);
  /// The collective deadline, seconds.
  double timeout() const noexcept;
  /// Makes the group ready for device buffers on `d` (collective over the group): decides the
  /// transport and makes the NCCL communicator, so that later collectives, in any order and on
  /// any subset of ranks (grouped sends and receives), need no setup. Idempotent; free on host.
  void prepare(const Device& d) const;
  /// How device buffers travel in this group: Transport::nccl or Transport::mpi (decided on the
  /// first device collective, or now; collective then).
  Transport device_transport(const Device& d) const;
  /// With Transport::mpi: whether device buffers are staged through pinned host memory (the MPI is
  /// not CUDA-aware on every rank) rather than handed to MPI as they are.
  bool stages_device_buffers(const Device& d) const;
  /// "nccl", "mpi (cuda-aware)" or "mpi (staged)".
  std::string device_transport_str(const Device& d) const;
  /// Waits for the stream under the group's deadline; throws CommError if the group failed.
  void synchronize(const Stream& s) const;
  /// True after a timeout or a communicator error; the reason names the operation.
  bool failed() const noexcept;
  /// The reason the group failed (empty while it has not).
  std::string failure() const;
  /// Marks the group failed and aborts its NCCL communicators (no collective needed).
  void abort(const std::string& reason) const;

  // ---- collectives on raw buffers; `s` says where the buffers live ----
  /// Reduces `count` elements with `op` over the group; every rank receives the result.
  void all_reduce(const void* send, void* recv, std::size_t count, DType t, ReduceOp op, const Stream& s) const;
  /// Reduces `count` elements with `op` onto `root` (recv is used on root only).
  void reduce(const void* send, void* recv, std::size_t count, DType t, ReduceOp op, int root, const Stream& s) const;
  /// Copies root's `count` elements to every rank.
  /// `send` is read on root only; recv is written everywhere (root too, unless recv == send).
  void broadcast(const void* send, void* recv, std::size_t count, DType t, int root, const Stream& s) const;
  /// Concatenates every rank's `send` on every rank.
  /// count per rank; recv holds size()*count, rank r's block at r*count.
  void all_gather(const void* send, void* recv, std::size_t count, DType t, const Stream& s) const;
  /// all_gather with per-rank counts and displacements in recv.
  void all_gatherv(const void* send, std::size_t send_count, void* recv, Counts recv_counts, Counts displs,
                   DType t, const Stream& s) const;
  /// Reduces with `op` and scatters the result in blocks.
  /// send holds size()*recv_count; rank r receives the reduced block r.
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType t, ReduceOp op,
                      const Stream& s) const;
  /// Exchanges one block with every rank.
  /// count per peer: block p of send goes to rank p, block q of recv comes from rank q.
  void all_to_all(const void* send, void* recv, std::size_t count, DType t, const Stream& s) const;
  /// all_to_all with per-peer counts and displacements.
  void all_to_allv(const void* send, Counts send_counts, Counts send_displs, void* recv, Counts recv_counts,
                   Counts recv_displs, DType t, const Stream& s) const;
  /// Concatenates every rank's `send` on `root`.
  /// recv (size()*count) is used on root only.
  void gather(const void* send, void* recv, std::size_t count, DType t, int root, const Stream& s) const;
  /// gather with per-rank counts and displacements in recv.
  void gatherv(const void* send, std::size_t send_count, void* recv, Counts recv_counts, Counts displs, DType t,
               int root, const Stream& s) const;
  /// Sends block r of root's `send` to rank r.
  /// send (size()*count) is read on root only.
  void scatter(const void* send, void* recv, std::size_t count, DType t, int root, const Stream& s) const;
  /// scatter with per-rank counts and displacements in send.
  void scatterv(const void* send, Counts send_counts, Counts displs, void* recv, std::size_t recv_count, DType t,
                int root, const Stream& s) const;
  /// Sends `count` elements to rank `peer`.
  void send(const void* buf, std::size_t count, DType t, int peer, const Stream& s) const;
  /// Receives `count` elements from rank `peer`.
  void recv(void* buf, std::size_t count, DType t, int peer, const Stream& s) const;
  /// Sends to `dest` and receives from `source` in one step.
  void sendrecv(const void* send, std::size_t send_count, int dest, void* recv, std::size_t recv_count,
                int source, DType t, const Stream& s) const;

  // ---- typed pointers ----
  /// all_reduce of typed buffers.
  template <Scalar T>
  void all_reduce(const T* send, T* recv, std::size_t count, ReduceOp op, const Stream& s) const {
    all_reduce(send, recv, count, scalar_dtype<T>(), op, s);
  }
  /// In-place all_reduce of `data`.
  template <Scalar T>
  void all_reduce(T* data, std::size_t count, ReduceOp op, const Stream& s) const {
    all_reduce(data, data, count, scalar_dtype<T>(), op, s);
  }
  /// Host scalars and host buffers (the pre-NCCL interface, kept for convenience).
  template <Scalar T>
  void all_reduce(T* data, std::size_t count, ReduceOp op) const {
    all_reduce(data, data, count, scalar_dtype<T>(), op, Stream::default_for(Device::host()));
  }
  /// Reduces one host value over the group and returns the result.
  template <Scalar T>
  T all_reduce(T value, ReduceOp op) const {
    all_reduce(&value, 1, op);
    return value;
  }

  // ---- local::Array (contiguous; the array's device and default stream unless given) ----
  /// In-place all_reduce of `a` (on its device's default stream, or on `s`).
  template <Element T, int R>
  void all_reduce(local::Array<T, R>& a, ReduceOp op) const {
    all_reduce(a.data(), a.data(), checked(a), dtype_v<T>, op, stream_of(a));
  }
  template <Element T, int R>
  void all_reduce(local::Array<T, R>& a, ReduceOp op, const Stream& s) const {
    all_reduce(a.data(), a.data(), checked(a), dtype_v<T>, op, s);
  }
  /// Copies root's `a` into every rank's `a`.
  template <Element T, int R>
  void broadcast(local::Array<T, R>& a, int root) const {
    broadcast(a.data(), a.data(), checked(a), dtype_v<T>, root, stream_of(a));
  }
  /// all_gather of arrays: recv holds size() blocks of send's size.
  template <Element T, int R1, int R2>
  void all_gather(const local::Array<T, R1>& send, local::Array<T, R2>& recv) const {
    same_device(send, recv, "all_gather");
    all_gather(send.data(), recv.data(), checked(send), dtype_v<T>, stream_of(send));
  }
  /// all_to_all of arrays: send splits into size() equal blocks.
  template <Element T, int R1, int R2>
  void all_to_all(const local::Array<T, R1>& send, local::Array<T, R2>& recv) const {
    same_device(send, recv, "all_to_all");
    all_to_all(send.data(), recv.data(), checked(send) / size(), dtype_v<T>, stream_of(send));
  }
  /// reduce_scatter of arrays: send holds size() blocks of recv's size.
  template <Element T, int R1, int R2>
  void reduce_scatter(const local::Array<T, R1>& send, local::Array<T, R2>& recv, ReduceOp op) const {
    same_device(send, recv, "reduce_scatter");
    reduce_scatter(send.data(), recv.data(), checked(recv), dtype_v<T>, op, stream_of(send));
  }
  /// Sends `a` to rank `peer`.
  template <Element T, int R>
  void send(const local::Array<T, R>& a, int peer) const { send(a.data(), checked(a), dtype_v<T>, peer, stream_of(a)); }
  /// Receives `a` from rank `peer`.
  template <Element T, int R>
  void recv(local::Array<T, R>& a, int peer) const { recv(a.data(), checked(a), dtype_v<T>, peer, stream_of(a)); }

  struct State;  // implementation detail, shared with the backends

 private:
  friend class ParallelFile;  // posts MPI-IO under the group's deadline
  explicit ProcessGroup(std::shared_ptr<State> s) : state_(std::move(s)) {}
  template <class A>
  static std::size_t checked(const A& a) {
    if (!a.is_contiguous()) throw_noncontiguous(a.size());
    return static_cast<std::size_t>(a.size());
  }
  template <class A>
  static Stream& stream_of(const A& a) { return Stream::default_for(a.device()); }
  template <class A, class B>
  static void same_device(const A& a, const B& b, const char* op) {
    if (a.device() != b.device()) throw_device_mismatch(op, a.device(), b.device());
  }
  [[noreturn]] static void throw_noncontiguous(long long size);
  [[noreturn]] static void throw_device_mismatch(const char* op, const Device& a, const Device& b);
  std::shared_ptr<State> state_;
};

/// Groups collectives so that they progress together (the only way to do several sends and
/// receives between the same ranks without deadlock): ncclGroupStart/End for device buffers;
/// MPI non-blocking calls completed by one waitall for host buffers. Groups nest; the outermost
/// end() launches and waits. The destructor ends a group that end() did not (and swallows the
/// error if an exception is already unwinding).
class Group {
 public:
  /// Starts a group (nested in any open one).
  Group();
  /// Ends the group if end() was not called. Non-copyable.
  ~Group() noexcept(false);
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  /// Ends the group: the outermost end() launches the grouped calls and waits.
  void end();

 private:
  bool ended_ = false;
  int uncaught_ = 0;
};

}  // namespace tessera::comm
