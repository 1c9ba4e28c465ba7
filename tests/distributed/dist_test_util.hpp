// Helpers shared by the distributed test suites.
#pragma once
#include <algorithm>
#include <vector>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/grid.hpp"
#include "tessera/local/basic_ops.hpp"

namespace tessera::distributed::testing {

// The global array on the host of every rank (interiors all-gathered, placed by local_box).
template <class T, int R>
std::vector<T> gather_to_host(const Array<T, R>& a) {
  const auto& l = a.layout();
  const auto& group = l.grid().group();
  const auto mine = local::to_host(local::to(a.interior(), Device::host()));
  std::vector<std::size_t> counts(group.size()), displs(group.size());
  std::size_t total = 0;
  for (int r = 0; r < group.size(); ++r) displs[r] = total, total += counts[r] = l.local_box(r).size();
  std::vector<T> all(total);
  group.all_gatherv(mine.data(), mine.size(), all.data(), counts, displs, dtype_v<T>, Stream::default_for(Device::host()));
  std::vector<T> out(l.global_size());
  const auto gs = local::row_major_strides(l.global_shape());
  for (int r = 0; r < group.size(); ++r) {
    const auto box = l.local_box(r);
    const auto s = box.shape();
    for (index_t k = 0; k < box.size(); ++k) {
      index_t rem = k, g = 0;
      for (int ax = R - 1; ax >= 0; --ax) g += (box.lo[ax] + rem % s[ax]) * gs[ax], rem /= s[ax];
      out[g] = all[displs[r] + k];
    }
  }
  return out;
}

// Layouts of one 17x13x5 array over `world` covering 1-, 2- and 3-D grids, halos, uneven and
// empty blocks (explicit offsets) and replicated grid axes.
inline std::vector<Layout<3>> varied_layouts_17x13x5(const comm::ProcessGroup& world) {
  const int p = world.size();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2), g3 = ProcessGrid::balanced(world, 3);
  std::vector<index_t> skew(p + 1, 0);  // all but the last block empty on axis 0
  skew[p] = 17;
  std::vector<index_t> uneven(p + 1);
  for (int c = 0; c <= p; ++c) uneven[c] = c == p ? 13 : std::min<index_t>(13, 5 * c);
  return {
      Layout<3>::block(g3, {17, 13, 5}),
      Layout<3>::block(g3, {17, 13, 5}, {1, 1, 1}),
      Layout<3>(g1, {17, 13, 5}, {-1, -1, 0}),             // the short last axis over all ranks
      Layout<3>(g2, {17, 13, 5}, {1, -1, -1}, {0, 2, 0}),  // grid axis 0 replicates
      Layout<3>(g1, {17, 13, 5}, {0, -1, -1}, {skew, {0, 13}, {0, 5}}, {0, 0, 0}),
      Layout<3>(g1, {17, 13, 5}, {-1, 0, -1}, {std::vector<index_t>{0, 17}, uneven, {0, 5}}, {1, 1, 0}),
  };
}

}  // namespace tessera::distributed::testing
