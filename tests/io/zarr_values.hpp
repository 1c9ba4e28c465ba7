// The values the Zarr tests write and check (test_io_zarr.cpp, zarr_interop.cpp, and in Python
// zarr_check.py / tensorstore_interop.py): element `flat` (the global row-major index) is
// flat + 1 (never the fill value 0), complex (flat + 1, -flat / 2), bool flat % 3 == 1.
#pragma once
#include <type_traits>

#include "tessera/distributed/box.hpp"
#include "tessera/local/dtype.hpp"

namespace tessera::testing::zarr_values {

template <class T>
T value(distributed::index_t flat) {
  if constexpr (std::is_same_v<T, bool>) return flat % 3 == 1;
  else if constexpr (is_complex_v<T>) return T(typename T::value_type(flat + 1), typename T::value_type(-0.5 * flat));
  else return T(flat + 1);
}

// The global flat index of element k of box b (row-major within b) of an array of shape `global`.
template <int R>
distributed::index_t flat_of(const distributed::Box<R>& b, const distributed::Index<R>& global, distributed::index_t k) {
  distributed::index_t rem = k, f = 0, stride = 1;
  for (int ax = R - 1; ax >= 0; --ax) {
    f += (b.lo[ax] + rem % b.shape()[ax]) * stride;
    rem /= b.shape()[ax], stride *= global[ax];
  }
  return f;
}

}  // namespace tessera::testing::zarr_values
