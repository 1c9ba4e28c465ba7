// HDF5 through parallel HDF5 (built where CMake found it: TESSERA_HAVE_HDF5): save_hdf5 writes a
// distributed array as one dataset of an HDF5 file (created, or opened and the dataset replaced)
// by collective hyperslab writes, optionally chunked and deflate-compressed; load_hdf5 reads a
// dataset into any layout. Complex numbers are h5py's compound {r, i} and bool h5py's enum, so
// h5py reads them as numpy arrays. write_xdmf writes the XDMF sidecar (.xmf) that lets ParaView
// and VisIt open a 2-D or 3-D dataset as a uniform grid. Collective over the layout's grid; errors
// are IoError on every rank, naming the file and the problem.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/config.hpp"
#include "tessera/io/error.hpp"
#include "tessera/local/dtype.hpp"

#if TESSERA_HAVE_HDF5
#include "tessera/distributed/array.hpp"
#include "tessera/distributed/layout.hpp"

namespace tessera::io {

/// How save_hdf5 writes a dataset.
struct Hdf5WriteOptions {
  std::vector<std::int64_t> chunks;  // HDF5 chunk shape; empty: contiguous (fastest)
  int deflate = 0;                   // gzip level 1-9 (needs chunks); 0: none
};

/// Writes `a` (interior) as dataset `name` of the HDF5 file `path`, replacing one of that name.
/// A name with groups ("fields/p") creates those that are missing. Collective over a's grid.
template <class T, int R>
void save_hdf5(const std::string& path, const std::string& name, const distributed::Array<T, R>& a,
               const Hdf5WriteOptions& options = {});

/// Reads dataset `name` ("p", "fields/p") of `path` onto `layout` and `d` (halos not filled); its
/// type must be T's (either byte order) and its shape the layout's global shape.
template <class T, int R>
distributed::Array<T, R> load_hdf5(const std::string& path, const std::string& name, const distributed::Layout<R>& layout,
                                   Device d);

}  // namespace tessera::io
#endif

namespace tessera::io {

/// Writes an XDMF file at `xmf` describing dataset `name` of HDF5 file `h5` (a path relative to
/// the .xmf, as ParaView resolves it) as node values of a uniform 2-D or 3-D grid of `shape`
/// with the given spacing (same for every axis) and origin 0. Real and integer types only. The
/// names may hold any character XML 1.0 can (escaped); others are InvalidArgument.
/// Local: call it on one rank.
void write_xdmf(const std::string& xmf, const std::string& h5, const std::string& name,
                const std::vector<std::int64_t>& shape, DType t, double spacing = 1.0);

}  // namespace tessera::io
