// Parallel .npy I/O: save_npy writes a distributed array to one NumPy .npy file (C order,
// little-endian) and load_npy reads one (C or Fortran order, either byte order: each rank transposes
// or swaps its own block) into any layout, both collectively with MPI-IO on the
// grid's communicator (a subarray file view of this rank's block, written/read in chunks of
// whole leading-axis slabs staged through pinned host memory). Errors are IoError on every rank.
//
// Instantiated in the library for the 7 element types (bool, int32, int64, float, double,
// complex64, complex128) and ranks 1-4, like the other distributed operations.
#pragma once
#include <string>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/io/error.hpp"

namespace tessera::io {

/// Writes `a` (interior only) to `path` as one .npy file. Collective over a's grid.
template <class T, int R>
void save_npy(const std::string& path, const distributed::Array<T, R>& a);

/// Reads the .npy file at `path` into a new array of `layout` on `d` (halos left uninitialized).
/// Collective over the layout's grid; dtype and shape must match T and layout.global_shape().
template <class T, int R>
distributed::Array<T, R> load_npy(const std::string& path, const distributed::Layout<R>& layout, Device d);

}  // namespace tessera::io
