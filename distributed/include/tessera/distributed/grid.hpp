// ProcessGrid: an N-D Cartesian grid of the ranks of a ProcessGroup (row-major: the last grid
// axis varies fastest; ranks keep their order). Copies share one state.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/comm/process_group.hpp"

namespace tessera::distributed {

/// An N-D Cartesian grid of a process group's ranks.
class ProcessGrid {
 public:
  /// dims: the grid's extents; 0 entries are chosen as MPI_Dims_create does. Empty dims: a 1-D
  /// grid of all ranks. periodic: per grid axis (default: none). Collective over `group`.
  explicit ProcessGrid(const comm::ProcessGroup& group, std::vector<int> dims = {}, std::vector<bool> periodic = {});
  /// A grid of `ndims` axes with extents chosen like MPI_Dims_create.
  static ProcessGrid balanced(const comm::ProcessGroup& group, int ndims, std::vector<bool> periodic = {});

  /// Number of axes, extents, periodicity, this rank, rank count.
  int ndims() const noexcept;
  const std::vector<int>& dims() const noexcept;
  const std::vector<bool>& periodic() const noexcept;
  int rank() const noexcept;
  int size() const noexcept;
  /// The grid coordinates of this rank, or of `rank`.
  const std::vector<int>& coords() const noexcept;
  std::vector<int> coords(int rank) const;
  /// The rank at `coords`, wrapping periodic axes; -1 off a non-periodic edge.
  int rank_at(std::vector<int> coords) const;
  /// The rank `disp` steps along `axis` from this one (-1 off a non-periodic edge).
  int neighbour(int axis, int disp) const;
  /// The Cartesian group of the grid; the ranks that share this rank's coordinates on all grid
  /// axes but `axis` (a row or column; made collectively on first use, then cached).
  const comm::ProcessGroup& group() const noexcept;
  const comm::ProcessGroup& axis_group(int axis) const;

  /// Same ranks' group and shape.
  bool operator==(const ProcessGrid& o) const noexcept;
  /// For messages: "grid 2x2 (periodic 1,0) of 4 ranks".
  std::string str() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace tessera::distributed
