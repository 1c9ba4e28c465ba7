// The MPI transport: non-blocking MPI calls completed by a polling wait with the group's
// deadline (a blocking MPI call cannot time out), deferred to the enclosing Group if any.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "../detail/state.hpp"

namespace tessera::comm::detail {

using State = ProcessGroup::State;

// ---- The note a rank leaves when the launcher ends it inside a collective ----
// When one rank dies, mpirun (and srun --kill-on-bad-exit) end the others with SIGTERM about a
// second later, long before any deadline fires. Without a note they would vanish without saying
// what they were waiting for. The note is formatted when a wait begins (the handler only
// copies bytes), and printed only if the process still had SIGTERM's default action, which it
// then gets back, so the exit status is unchanged.
namespace {
struct InFlight {
  std::atomic<bool> active{false};
  std::atomic<std::int64_t> since_ns{0};
  char text[384] = {};  // the last byte stays '\0'
};
InFlight in_flight;

std::int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// Async-signal-safe appends.
void put(char* buf, std::size_t& n, std::size_t cap, const char* s) {
  while (*s && n + 1 < cap) buf[n++] = *s++;
}
void put_tenths(char* buf, std::size_t& n, std::size_t cap, std::int64_t tenths) {
  char digits[24];
  int k = 0;
  const std::int64_t whole = tenths / 10;
  std::int64_t v = whole;
  do digits[k++] = char('0' + v % 10), v /= 10; while (v && k < 20);
  while (k && n + 1 < cap) buf[n++] = digits[--k];
  if (n + 2 < cap) buf[n++] = '.', buf[n++] = char('0' + tenths % 10);
}

void on_sigterm(int sig) {
  if (in_flight.active.load(std::memory_order_acquire)) {
    char msg[640];
    std::size_t n = 0;
    const std::int64_t waited = monotonic_ns() - in_flight.since_ns.load(std::memory_order_relaxed);
    put(msg, n, sizeof msg, "tessera: terminated by SIGTERM after ");
    put_tenths(msg, n, sizeof msg, waited > 0 ? waited / 100000000 : 0);
    put(msg, n, sizeof msg, " s waiting in ");
    put(msg, n, sizeof msg, in_flight.text);
    put(msg, n, sizeof msg, ": the launcher ended the job, probably because another rank died\n");
    ssize_t rc = write(STDERR_FILENO, msg, n);
    (void)rc;
    // Open MPI's mpirun SIGKILLs every rank as soon as the first SIGTERMed one exits: linger a
    // little, so that the other ranks, which may not have run yet, get to leave their notes.
    timespec linger{0, 200000000};
    nanosleep(&linger, nullptr);
  }
  signal(sig, SIG_DFL);
  raise(sig);  // delivered when this handler returns: the default action, as without us
}

void install_sigterm_note() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction cur {};
    if (sigaction(SIGTERM, nullptr, &cur) != 0) return;
    if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL) return;  // the program's own
    struct sigaction sa {};
    sa.sa_handler = on_sigterm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
  });
}
}  // namespace

void in_flight_begin(const State& st, const Call& c, const char* context) {
  install_sigterm_note();
  in_flight.active.store(false, std::memory_order_relaxed);
  std::snprintf(in_flight.text, sizeof in_flight.text - 1, "%s%s (%zu x %s) on a group of %d ranks, rank %d",
                context ? context : "", c.op, c.count, dtype_name(c.type).c_str(), st.size, st.rank);
  in_flight.since_ns.store(monotonic_ns(), std::memory_order_relaxed);
  in_flight.active.store(true, std::memory_order_release);
}
void in_flight_end() { in_flight.active.store(false, std::memory_order_release); }

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
  struct Noted {  // set once the first test found the requests pending
    bool on = false;
    ~Noted() { if (on) in_flight_end(); }
  } noted;
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
    if (!noted.on) in_flight_begin(st, c, nullptr), noted.on = true;
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
