// The rule that combines the ranks' partial (value, global index) pairs of argmin/argmax for
// output element j: the best value wins, ties go to the smallest global index, and index -1
// marks a part with no elements. Shared by the host loop and the CUDA kernel.
#pragma once
#include "tessera/local/array.hpp"

#include "tessera/local/hd.hpp"

namespace tessera::distributed::detail {

template <class T>
TESSERA_HD inline local::index_t arg_combine_one(const T* vals, const local::index_t* idx, int parts,
                                                 local::index_t m, local::index_t j, bool is_min) {
  local::index_t best = -1;
  T bv{};
  for (int p = 0; p < parts; ++p) {
    const local::index_t i = idx[p * m + j];
    if (i < 0) continue;
    const T v = vals[p * m + j];
    const bool better = is_min ? v < bv : bv < v;
    if (best < 0 || better || (!(v < bv) && !(bv < v) && i < best)) best = i, bv = v;
  }
  return best;
}

}  // namespace tessera::distributed::detail
