// The MPI transport: non-blocking MPI calls completed by a polling wait with the group's
// deadline (a blocking MPI call cannot time out), deferred to the enclosing Group if any.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <thread>

#include "../detail/state.hpp"

namespace tessera::comm::detail {

using State = ProcessGroup::State;

MPI_Datatype mpi_type(DType t, std::size_t* factor) {
  *factor = 1;
  switch (t) {
    case DType::boolean: return MPI_UINT8_T;
    case DType::int32: return MPI_INT32_T;
    case DType::int64: return MPI_INT64_T;
    case DType::float32: return MPI_FLOAT;
    case DType::float64: return MPI_DOUBLE;
    case DType::complex64: *factor = 2; return MPI_FLOAT;   // sum only: component-wise
    case DType::complex128: *factor = 2; return MPI_DOUBLE;
  }
  throw InvalidArgument("no MPI type for dtype " + std::to_string(static_cast<int>(t)));
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  throw InvalidArgument("unknown ReduceOp " + std::to_string(static_cast<int>(op)));
}

namespace {
constexpr std::size_t max_message = std::size_t(1) << 30;  // MPI counts are int: 1 GiB pieces

void post_pieces(State& st, bool is_send, const void* src, void* dst, std::size_t bytes, int peer, int tag,
                 MpiPending& p) {
  for (std::size_t off = 0; off < bytes; off += max_message) {
    const int n = static_cast<int>(std::min(max_message, bytes - off));
    p.requests.emplace_back();
    if (is_send)
      TESSERA_CHECK_MPI(MPI_Isend(static_cast<const char*>(src) + off, n, MPI_BYTE, peer, tag, st.comm,
                                  &p.requests.back()));
    else
      TESSERA_CHECK_MPI(MPI_Irecv(static_cast<char*>(dst) + off, n, MPI_BYTE, peer, tag, st.comm,
                                  &p.requests.back()));
  }
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}
}  // namespace

void mpi_post_transfers(State& st, const std::vector<Transfer>& xfers, int tag, MpiPending& p,
                        const std::function<void(void*, const void*, std::size_t)>& local_copy) {
  // Receives first, so that the matching sends find them posted.
  for (const auto& x : xfers)
    if (x.bytes && x.dst && !x.src) post_pieces(st, false, nullptr, x.dst, x.bytes, x.peer, tag, p);
  for (const auto& x : xfers)
    if (x.bytes && x.src && !x.dst) post_pieces(st, true, x.src, nullptr, x.bytes, x.peer, tag, p);
  for (const auto& x : xfers)
    if (x.bytes && x.src && x.dst) local_copy(x.dst, x.src, x.bytes);
}

void mpi_post_bytes_bcast(State& st, void* buf, std::size_t bytes, int root, MpiPending& p) {
  for (std::size_t off = 0; off < bytes; off += max_message) {
    const int n = static_cast<int>(std::min(max_message, bytes - off));
    p.requests.emplace_back();
    TESSERA_CHECK_MPI(MPI_Ibcast(static_cast<char*>(buf) + off, n, MPI_BYTE, root, st.comm, &p.requests.back()));
  }
}

// Polls until every request is done or the deadline passes. Returns false on timeout.
bool mpi_wait_until(std::vector<MPI_Request>& reqs, Clock::time_point deadline, State& st, const Call& c) {
  long spins = 0;
  while (true) {
    int done = 0;
    const int rc = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING] = {};
      int len = 0;
      MPI_Error_string(rc, text, &len);
      const std::string msg = st.describe(c) + ": MPI failed: " + text;
      st.fail(msg);
      throw CommError(msg);
    }
    if (done) return true;
    if (Clock::now() > deadline) return false;
    // Yield so that oversubscribed ranks (more ranks than cores) still make progress.
    if (++spins > 64) std::this_thread::yield();
  }
}

[[noreturn]] void mpi_timed_out(State& st, const Call& c, std::vector<MPI_Request>& reqs, Clock::time_point start) {
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string msg = st.describe(c) + ": no completion after " + seconds(waited) + " (timeout " +
                          seconds(st.timeout.load()) +
                          ", TESSERA_COMM_TIMEOUT): a rank skipped this collective, died or is stuck";
  {
    std::lock_guard<std::mutex> lock(st.mu);
    // MPI forbids freeing a pending collective request: keep them, and the communicator.
    st.orphans.insert(st.orphans.end(), reqs.begin(), reqs.end());
  }
  st.fail(msg);
  throw CommError(msg);
}

namespace {
void wait_now(State& st, const Call& c, MpiPending& p) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(st.timeout.load()));
  if (!mpi_wait_until(p.requests, deadline, st, c)) mpi_timed_out(st, c, p.requests, start);
  for (auto& f : p.after) f();
}
}  // namespace

void mpi_run(State& st, const Call& c, const std::function<void(MpiPending&)>& post) {
  MpiPending p;
  post(p);
  if (group_depth() > 0) return group_add_mpi(st, c, std::move(p));
  wait_now(st, c, p);
}

void mpi_bcast_bytes(State& st, void* buf, std::size_t bytes, int root, const char* why) {
  st.check();
  MpiPending p;
  mpi_post_bytes_bcast(st, buf, bytes, root, p);
  wait_now(st, Call{why, bytes, DType::boolean}, p);
}

int mpi_all_reduce_min(State& st, int value, const char* why) {
  st.check();
  MpiPending p;
  p.requests.emplace_back();
  TESSERA_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MIN, st.comm, &p.requests.back()));
  wait_now(st, Call{why, 1, DType::int32}, p);
  return value;
}

}  // namespace tessera::comm::detail
