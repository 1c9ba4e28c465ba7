#include "tessera/comm/process_group.hpp"

#include <climits>
#include <string>

#include "tessera/comm/error.hpp"

namespace tessera::comm {

struct ProcessGroup::State {
  MPI_Comm comm = MPI_COMM_NULL;        // our duplicate, freed with the last copy
  MPI_Comm node_comm = MPI_COMM_NULL;   // ranks of this group on the same node
  int rank = 0, size = 1, local_rank = 0, local_size = 1;

  explicit State(MPI_Comm user) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw Error("ProcessGroup needs MPI: construct a tessera::Runtime first");
    TESSERA_CHECK_MPI(MPI_Comm_dup(user, &comm));
    TESSERA_CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    TESSERA_CHECK_MPI(MPI_Comm_rank(comm, &rank));
    TESSERA_CHECK_MPI(MPI_Comm_size(comm, &size));
    TESSERA_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm));
    TESSERA_CHECK_MPI(MPI_Comm_rank(node_comm, &local_rank));
    TESSERA_CHECK_MPI(MPI_Comm_size(node_comm, &local_size));
  }
  ~State() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;  // the program finalized MPI first; nothing left to free
    if (node_comm != MPI_COMM_NULL) MPI_Comm_free(&node_comm);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

ProcessGroup ProcessGroup::world() { return ProcessGroup(MPI_COMM_WORLD); }
ProcessGroup::ProcessGroup(MPI_Comm comm) : state_(std::make_shared<State>(comm)) {}

int ProcessGroup::rank() const noexcept { return state_->rank; }
int ProcessGroup::size() const noexcept { return state_->size; }
int ProcessGroup::local_rank() const noexcept { return state_->local_rank; }
int ProcessGroup::local_size() const noexcept { return state_->local_size; }
MPI_Comm ProcessGroup::mpi_comm() const noexcept { return state_->comm; }

void ProcessGroup::barrier() const { TESSERA_CHECK_MPI(MPI_Barrier(state_->comm)); }

ProcessGroup ProcessGroup::split(int color, int key) const {
  if (color < 0) throw InvalidArgument("ProcessGroup::split: color must be >= 0, got " + std::to_string(color));
  MPI_Comm sub = MPI_COMM_NULL;
  TESSERA_CHECK_MPI(MPI_Comm_split(state_->comm, color, key, &sub));
  ProcessGroup g(sub);  // duplicates `sub`, so free ours
  MPI_Comm_free(&sub);
  return g;
}

namespace {
template <class T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> MPI_Datatype mpi_type<long long>() { return MPI_LONG_LONG; }
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  throw InvalidArgument("unknown ReduceOp " + std::to_string(static_cast<int>(op)));
}
}  // namespace

template <class T>
void ProcessGroup::all_reduce(T* data, std::size_t count, ReduceOp op) const {
  // MPI counts are int: reduce in pieces so that large host buffers work.
  constexpr std::size_t max_chunk = INT_MAX / 2;
  for (std::size_t off = 0; off < count; off += max_chunk) {
    const int n = static_cast<int>(count - off < max_chunk ? count - off : max_chunk);
    TESSERA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, data + off, n, mpi_type<T>(), mpi_op(op), state_->comm));
  }
}

template void ProcessGroup::all_reduce<int>(int*, std::size_t, ReduceOp) const;
template void ProcessGroup::all_reduce<long long>(long long*, std::size_t, ReduceOp) const;
template void ProcessGroup::all_reduce<float>(float*, std::size_t, ReduceOp) const;
template void ProcessGroup::all_reduce<double>(double*, std::size_t, ReduceOp) const;

}  // namespace tessera::comm
