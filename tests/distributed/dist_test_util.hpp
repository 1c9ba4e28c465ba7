// Helpers shared by the distributed test suites.
#pragma once
#include <vector>

#include "tessera/distributed/array.hpp"
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

}  // namespace tessera::distributed::testing
