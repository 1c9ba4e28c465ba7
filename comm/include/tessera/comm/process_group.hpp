// ProcessGroup: a set of ranks over an MPI communicator. Copies share one duplicated
// communicator (MPI_ERRORS_RETURN set on it); a user's communicator is never freed.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>

namespace tessera::comm {

enum class ReduceOp { sum, prod, min, max };

class ProcessGroup {
 public:
  // The group of all ranks (a duplicate of MPI_COMM_WORLD).
  static ProcessGroup world();
  // A group over the user's communicator (duplicated; `comm` itself is left alone).
  explicit ProcessGroup(MPI_Comm comm);

  int rank() const noexcept;
  int size() const noexcept;
  // Rank and size among the ranks of this group on the same node (MPI_Comm_split_type).
  int local_rank() const noexcept;
  int local_size() const noexcept;
  MPI_Comm mpi_comm() const noexcept;

  void barrier() const;
  // Ranks with the same colour form a sub-group, ordered by key (then by rank).
  ProcessGroup split(int color, int key) const;

  // Host-buffer all-reduce, in place. T: int, long long, float, double.
  template <class T>
  void all_reduce(T* data, std::size_t count, ReduceOp op) const;
  template <class T>
  T all_reduce(T value, ReduceOp op) const {
    all_reduce(&value, 1, op);
    return value;
  }

 private:
  struct State;
  explicit ProcessGroup(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

}  // namespace tessera::comm
