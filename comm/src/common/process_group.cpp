// ProcessGroup: communicator ownership, sub-groups, Cartesian grids, failure state.
#include "tessera/comm/process_group.hpp"
#include "tessera/comm/settings.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>

#include "../detail/state.hpp"
#include "tessera/local/settings.hpp"

namespace tessera::comm {

using State = ProcessGroup::State;

State::State(MPI_Comm user) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw Error("ProcessGroup needs MPI: construct a tessera::Runtime first");
  timeout = comm::settings().comm_timeout;
  TESSERA_CHECK_MPI(MPI_Comm_dup(user, &comm));
  TESSERA_CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  TESSERA_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  TESSERA_CHECK_MPI(MPI_Comm_size(comm, &size));
  int topo = MPI_UNDEFINED;
  TESSERA_CHECK_MPI(MPI_Topo_test(comm, &topo));
  cartesian = topo == MPI_CART;
  TESSERA_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm));
  TESSERA_CHECK_MPI(MPI_Comm_rank(node_comm, &local_rank));
  TESSERA_CHECK_MPI(MPI_Comm_size(node_comm, &local_size));
  if (const int k = comm::settings().emulate_nodes; k > 1) split_into_emulated_node(k, user == MPI_COMM_WORLD);
}

namespace {
// This process's emulated node on its real node (TESSERA_EMULATE_NODES), numbered from the world
// group's ranks so that every group agrees: -1 until the world group is made.
int emulated_node_ = -1;

// NCCL takes ranks with different host ids for ranks of different hosts (network transport, no
// refusal of two ranks on one GPU); on one machine its sockets go over loopback. The caller's own
// values stay.
void tell_nccl_the_emulated_node(int node) {
  char host[256] = "host";
  (void)gethostname(host, sizeof host - 1);
  const std::string id = std::string(host) + "-tessera-emulated-node-" + std::to_string(node);
  setenv("NCCL_HOSTID", id.c_str(), 0);
  setenv("NCCL_SOCKET_IFNAME", "lo", 0);
}
}  // namespace

// Splits node_comm (the ranks of this group on this real node) into the emulated nodes: the
// world's node-local ranks in k contiguous blocks.
void State::split_into_emulated_node(int k, bool is_world) {
  if (emulated_node_ < 0 && is_world) {
    emulated_node_ = static_cast<int>(static_cast<long long>(local_rank) * k / local_size);
    tell_nccl_the_emulated_node(emulated_node_);
  }
  const int color =
      emulated_node_ >= 0 ? emulated_node_ : static_cast<int>(static_cast<long long>(local_rank) * k / local_size);
  MPI_Comm emulated = MPI_COMM_NULL;
  TESSERA_CHECK_MPI(MPI_Comm_split(node_comm, color, rank, &emulated));
  TESSERA_CHECK_MPI(MPI_Comm_free(&node_comm));
  node_comm = emulated;
  TESSERA_CHECK_MPI(MPI_Comm_rank(node_comm, &local_rank));
  TESSERA_CHECK_MPI(MPI_Comm_size(node_comm, &local_size));
}

State::~State() {
  try {
    detail::nccl_release(*this);
  } catch (...) {  // a destructor must not throw; the communicator is gone either way
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // the program finalized MPI first; nothing left to free
  // Requests of timed-out collectives can never complete: their communicator is leaked too.
  if (!orphans.empty()) return;
  if (node_comm != MPI_COMM_NULL) MPI_Comm_free(&node_comm);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

void State::check() const {
  if (failed.load()) {
    std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(mu));
    throw CommError("process group failed earlier: " + failure);
  }
}

void State::fail(const std::string& reason, bool abort_now) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (failed.load()) return;
    failure = reason;
    failed = true;
  }
  if (abort_now) detail::nccl_abort(*this);
}

std::string State::describe(const Call& c) const {
  std::ostringstream os;
  os << c.op << " (" << c.count << " x " << dtype_name(c.type) << ") on a " << describe();
  return os.str();
}

std::string State::describe() const {
  return "group of " + std::to_string(size) + " ranks, rank " + std::to_string(rank);
}

std::string reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
  }
  return "ReduceOp(" + std::to_string(static_cast<int>(op)) + ")";
}

std::string transport_name(Transport t) {
  const auto i = static_cast<std::size_t>(t);
  return i < transport_names.size() ? std::string(transport_names[i]) : "Transport(" + std::to_string(i) + ")";
}
std::optional<Transport> transport_from_name(std::string_view name) {
  for (std::size_t i = 0; i < transport_names.size(); ++i)
    if (transport_names[i] == name) return static_cast<Transport>(i);
  return std::nullopt;
}

ProcessGroup ProcessGroup::world() { return ProcessGroup(MPI_COMM_WORLD); }
ProcessGroup::ProcessGroup(MPI_Comm comm) : state_(std::make_shared<State>(comm)) {}

int ProcessGroup::rank() const noexcept { return state_->rank; }
int ProcessGroup::size() const noexcept { return state_->size; }
int ProcessGroup::local_rank() const noexcept { return state_->local_rank; }
int ProcessGroup::local_size() const noexcept { return state_->local_size; }
int ProcessGroup::emulated_node() noexcept { return emulated_node_; }
MPI_Comm ProcessGroup::mpi_comm() const noexcept { return state_->comm; }

void ProcessGroup::barrier() const {
  state_->check();
  detail::mpi_run(*state_, Call{"barrier", 0, DType::int32}, [&](detail::MpiPending& p) {
    p.requests.emplace_back();
    TESSERA_CHECK_MPI(MPI_Ibarrier(state_->comm, &p.requests.back()));
  });
}

bool ProcessGroup::same_ranks(const ProcessGroup& other) const noexcept {
  if (state_ == other.state_) return true;
  int cmp = MPI_UNEQUAL;
  if (MPI_Comm_compare(state_->comm, other.state_->comm, &cmp) != MPI_SUCCESS) return false;  // a freed communicator
  return cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
}

std::string ProcessGroup::first_error(const std::string& error) const {
  const int first = all_reduce<std::int32_t>(error.empty() ? size() : rank(), ReduceOp::min);
  if (first == size()) return {};
  std::string message = error;
  broadcast(message, first);
  if (size() > 1) message += " (found by rank " + std::to_string(first) + ")";
  return message;
}

void ProcessGroup::broadcast(std::string& s, int root) const {
  std::int64_t n = static_cast<std::int64_t>(s.size());
  broadcast(&n, &n, 1, DType::int64, root, Stream::default_for(Device::host()));
  s.resize(static_cast<std::size_t>(n));
  if (n == 0) return;
  state_->check();
  detail::mpi_run(*state_, Call{"broadcast", static_cast<std::size_t>(n), DType::boolean},
                  [&](detail::MpiPending& p) { detail::mpi_post_bytes_bcast(*state_, s.data(), s.size(), root, p); });
}

ProcessGroup ProcessGroup::split(int color, int key) const {
  if (color < 0) throw InvalidArgument("ProcessGroup::split: color must be >= 0, got " + std::to_string(color));
  state_->check();
  MPI_Comm sub = MPI_COMM_NULL;
  TESSERA_CHECK_MPI(MPI_Comm_split(state_->comm, color, key, &sub));
  ProcessGroup g(sub);  // duplicates `sub`, so free ours
  MPI_Comm_free(&sub);
  return g;
}

ProcessGroup ProcessGroup::mpi_only() const {
  ProcessGroup g = split(0, rank());
  g.state_->mpi_only = true;
  g.state_->timeout = state_->timeout.load();
  return g;
}

ProcessGroup ProcessGroup::nccl_policy(CtaPolicy p) const {
  ProcessGroup g = split(0, rank());
  g.state_->cta_policy = static_cast<int>(p);
  g.state_->timeout = state_->timeout.load();
  return g;
}

bool ProcessGroup::has_symmetric_windows(const Device& d) const {
  return !d.is_host() && local_size() == size() && device_transport(d) == Transport::nccl &&
         detail::nccl_symmetric_windows();
}

std::shared_ptr<void> ProcessGroup::symmetric_buffer(std::size_t bytes, const Device& d) const {
  if (d.is_host() || device_transport(d) != Transport::nccl)
    throw BackendUnavailable("ProcessGroup::symmetric_buffer(" + std::to_string(bytes) + " bytes) on " + d.str() +
                             ": the group's device buffers do not travel through NCCL here");
  return detail::nccl_symmetric_buffer(state_, bytes, d);
}

void ProcessGroup::set_timeout(double seconds) {
  if (!(seconds > 0)) throw InvalidArgument("ProcessGroup::set_timeout: seconds must be > 0, got " + std::to_string(seconds));
  state_->timeout = seconds;
}
double ProcessGroup::timeout() const noexcept { return state_->timeout.load(); }
bool ProcessGroup::failed() const noexcept { return state_->failed.load(); }
std::string ProcessGroup::failure() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->failure;
}
void ProcessGroup::abort(const std::string& reason) const { state_->fail("aborted by the program: " + reason); }

void ProcessGroup::throw_noncontiguous(long long size) {
  throw InvalidArgument("collective on a non-contiguous array view of " + std::to_string(size) +
                        " elements: copy it into a contiguous array first");
}
void ProcessGroup::throw_device_mismatch(const char* op, const Device& a, const Device& b) {
  throw DeviceMismatch(std::string(op) + ": send array on " + a.str() + " but receive array on " + b.str());
}

// ---- Cartesian grids ----

namespace {
void require_cart(const State& st, const char* what) {
  if (!st.cartesian)
    throw InvalidArgument(std::string("ProcessGroup::") + what + ": not a Cartesian group (make one with cartesian())");
}
int cart_ndims(const State& st) {
  int nd = 0;
  TESSERA_CHECK_MPI(MPI_Cartdim_get(st.comm, &nd));
  return nd;
}
std::string list_str(const std::vector<int>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}
// cartesian() and sub(): the group made for `key` before, else make()'s, kept. Every rank asks for
// the same keys in the same order (a collective), so every rank finds or makes the same group.
// make() runs outside the lock: MPI works there, and the watchdog takes the lock.
template <class Map, class Make>
ProcessGroup made_once(State& st, Map& made, const typename Map::key_type& key, Make make) {
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (auto it = made.find(key); it != made.end()) return it->second;
  }
  ProcessGroup g = make();
  std::lock_guard<std::mutex> lock(st.mu);
  return made.emplace(key, std::move(g)).first->second;
}
}  // namespace

ProcessGroup ProcessGroup::cartesian(std::vector<int> dims, std::vector<bool> periods) const {
  const int nd = static_cast<int>(dims.size());
  if (nd == 0) throw InvalidArgument("ProcessGroup::cartesian: dims must not be empty");
  if (!periods.empty() && periods.size() != dims.size())
    throw InvalidArgument("ProcessGroup::cartesian: " + std::to_string(periods.size()) + " periods for " +
                          std::to_string(nd) + " dims");
  int fixed = 1;
  for (int d : dims) {
    if (d < 0) throw InvalidArgument("ProcessGroup::cartesian: negative dimension in " + list_str(dims));
    if (d > 0) fixed *= d;
  }
  if (fixed == 0 || size() % fixed != 0)
    throw InvalidArgument("ProcessGroup::cartesian: dims " + list_str(dims) + " do not divide a group of " +
                          std::to_string(size()) + " ranks");
  TESSERA_CHECK_MPI(MPI_Dims_create(size(), nd, dims.data()));
  const int product = std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<int>());
  if (product != size())
    throw InvalidArgument("ProcessGroup::cartesian: dims " + list_str(dims) + " hold " + std::to_string(product) +
                          " ranks, the group has " + std::to_string(size()));
  std::vector<int> per(dims.size(), 0);
  for (std::size_t i = 0; i < periods.size(); ++i) per[i] = periods[i] ? 1 : 0;
  state_->check();
  return made_once(*state_, state_->carts, std::make_pair(dims, per), [&] {
    MPI_Comm cart = MPI_COMM_NULL;
    TESSERA_CHECK_MPI(MPI_Cart_create(state_->comm, nd, dims.data(), per.data(), /*reorder=*/0, &cart));
    ProcessGroup g(cart);  // MPI_Comm_dup keeps the topology
    MPI_Comm_free(&cart);
    return g;
  });
}

bool ProcessGroup::is_cartesian() const noexcept { return state_->cartesian; }

std::vector<int> ProcessGroup::dims() const {
  require_cart(*state_, "dims");
  const int nd = cart_ndims(*state_);
  std::vector<int> d(nd), p(nd), c(nd);
  TESSERA_CHECK_MPI(MPI_Cart_get(state_->comm, nd, d.data(), p.data(), c.data()));
  return d;
}

std::vector<bool> ProcessGroup::periods() const {
  require_cart(*state_, "periods");
  const int nd = cart_ndims(*state_);
  std::vector<int> d(nd), p(nd), c(nd);
  TESSERA_CHECK_MPI(MPI_Cart_get(state_->comm, nd, d.data(), p.data(), c.data()));
  return std::vector<bool>(p.begin(), p.end());
}

std::vector<int> ProcessGroup::coords(int r) const {
  require_cart(*state_, "coords");
  if (r < 0 || r >= size())
    throw InvalidArgument("ProcessGroup::coords: rank " + std::to_string(r) + " outside a group of " + std::to_string(size()));
  std::vector<int> c(cart_ndims(*state_));
  TESSERA_CHECK_MPI(MPI_Cart_coords(state_->comm, r, static_cast<int>(c.size()), c.data()));
  return c;
}

int ProcessGroup::rank_at(std::vector<int> c) const {
  const auto d = dims();
  const auto p = periods();
  if (c.size() != d.size())
    throw InvalidArgument("ProcessGroup::rank_at: " + std::to_string(c.size()) + " coordinates for a " +
                          std::to_string(d.size()) + "-D grid");
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (p[i]) c[i] = ((c[i] % d[i]) + d[i]) % d[i];
    else if (c[i] < 0 || c[i] >= d[i]) return -1;  // off a non-periodic edge
  }
  int r = 0;
  TESSERA_CHECK_MPI(MPI_Cart_rank(state_->comm, c.data(), &r));
  return r;
}

std::pair<int, int> ProcessGroup::shift(int axis, int disp) const {
  require_cart(*state_, "shift");
  const int nd = cart_ndims(*state_);
  if (axis < 0 || axis >= nd)
    throw InvalidArgument("ProcessGroup::shift: axis " + std::to_string(axis) + " of a " + std::to_string(nd) + "-D grid");
  int src = 0, dst = 0;
  TESSERA_CHECK_MPI(MPI_Cart_shift(state_->comm, axis, disp, &src, &dst));
  return {src == MPI_PROC_NULL ? -1 : src, dst == MPI_PROC_NULL ? -1 : dst};
}

ProcessGroup ProcessGroup::sub(const std::vector<bool>& keep) const {
  require_cart(*state_, "sub");
  const int nd = cart_ndims(*state_);
  if (static_cast<int>(keep.size()) != nd)
    throw InvalidArgument("ProcessGroup::sub: " + std::to_string(keep.size()) + " flags for a " + std::to_string(nd) +
                          "-D grid");
  std::vector<int> k(keep.begin(), keep.end());
  state_->check();
  return made_once(*state_, state_->subs, k, [&] {
    MPI_Comm s = MPI_COMM_NULL;
    TESSERA_CHECK_MPI(MPI_Cart_sub(state_->comm, k.data(), &s));
    ProcessGroup g(s);
    MPI_Comm_free(&s);
    return g;
  });
}

}  // namespace tessera::comm
