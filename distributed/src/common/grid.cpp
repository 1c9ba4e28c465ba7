#include "tessera/distributed/grid.hpp"

#include <map>
#include <mutex>

#include "tessera/local/error.hpp"

namespace tessera::distributed {

struct ProcessGrid::State {
  comm::ProcessGroup cart;
  std::vector<int> dims, coords;
  std::vector<bool> periodic;
  std::mutex mu;
  std::map<int, comm::ProcessGroup> axis_groups;
  State(comm::ProcessGroup g) : cart(std::move(g)) {}
};

ProcessGrid::ProcessGrid(const comm::ProcessGroup& group, std::vector<int> dims, std::vector<bool> periodic) {
  if (dims.empty()) dims = {group.size()};
  if (periodic.empty()) periodic.assign(dims.size(), false);
  state_ = std::make_shared<State>(group.cartesian(dims, periodic));
  state_->dims = state_->cart.dims();
  state_->periodic = state_->cart.periods();
  state_->coords = state_->cart.coords();
}

ProcessGrid ProcessGrid::balanced(const comm::ProcessGroup& group, int ndims, std::vector<bool> periodic) {
  if (ndims < 1) throw InvalidArgument("ProcessGrid::balanced: ndims must be >= 1, got " + std::to_string(ndims));
  return ProcessGrid(group, std::vector<int>(ndims, 0), std::move(periodic));
}

int ProcessGrid::ndims() const noexcept { return static_cast<int>(state_->dims.size()); }
const std::vector<int>& ProcessGrid::dims() const noexcept { return state_->dims; }
const std::vector<bool>& ProcessGrid::periodic() const noexcept { return state_->periodic; }
int ProcessGrid::rank() const noexcept { return state_->cart.rank(); }
int ProcessGrid::size() const noexcept { return state_->cart.size(); }
const std::vector<int>& ProcessGrid::coords() const noexcept { return state_->coords; }
const comm::ProcessGroup& ProcessGrid::group() const noexcept { return state_->cart; }

std::vector<int> ProcessGrid::coords(int r) const {
  if (r < 0 || r >= size())
    throw InvalidArgument("ProcessGrid::coords: rank " + std::to_string(r) + " outside " + str());
  std::vector<int> c(dims().size());
  for (int a = ndims() - 1; a >= 0; --a) c[a] = r % dims()[a], r /= dims()[a];  // row-major, not reordered
  return c;
}

int ProcessGrid::rank_at(std::vector<int> c) const {
  if (static_cast<int>(c.size()) != ndims())
    throw InvalidArgument("ProcessGrid::rank_at: " + std::to_string(c.size()) + " coordinates for " + str());
  int r = 0;
  for (int a = 0; a < ndims(); ++a) {
    const int d = dims()[a];
    if (periodic()[a]) c[a] = ((c[a] % d) + d) % d;
    else if (c[a] < 0 || c[a] >= d) return -1;
    r = r * d + c[a];
  }
  return r;
}

int ProcessGrid::neighbour(int axis, int disp) const {
  if (axis < 0 || axis >= ndims())
    throw InvalidArgument("ProcessGrid::neighbour: axis " + std::to_string(axis) + " of " + str());
  auto c = coords();
  c[axis] += disp;
  return rank_at(c);
}

const comm::ProcessGroup& ProcessGrid::axis_group(int axis) const {
  if (axis < 0 || axis >= ndims())
    throw InvalidArgument("ProcessGrid::axis_group: axis " + std::to_string(axis) + " of " + str());
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->axis_groups.find(axis);
  if (it == state_->axis_groups.end()) {
    std::vector<bool> keep(ndims(), false);
    keep[axis] = true;
    it = state_->axis_groups.emplace(axis, state_->cart.sub(keep)).first;
  }
  return it->second;
}

bool ProcessGrid::operator==(const ProcessGrid& o) const noexcept {
  if (state_ == o.state_) return true;
  if (dims() != o.dims() || periodic() != o.periodic()) return false;
  return group().same_ranks(o.group());
}

std::string ProcessGrid::str() const {
  std::string s = "grid ";
  for (int a = 0; a < ndims(); ++a) s += (a ? "x" : "") + std::to_string(dims()[a]);
  bool any = false;
  for (bool p : periodic()) any = any || p;
  if (any) {
    s += " (periodic ";
    for (int a = 0; a < ndims(); ++a) s += (a ? "," : "") + std::to_string(periodic()[a] ? 1 : 0);
    s += ")";
  }
  return s + " of " + std::to_string(size()) + " ranks";
}

}  // namespace tessera::distributed
