// IoError: the one exception of tessera::io (.npy, Zarr, checkpoints). Kept apart from the
// MPI-dependent headers so that the file-format parsers build on their own (the fuzz targets).
#pragma once
#include "tessera/local/error.hpp"

namespace tessera::io {

/// A file that cannot be read or written, or whose contents are not what was asked for. The
/// message names the path and what is wrong; collective I/O throws it on every rank.
class IoError : public Error {
  using Error::Error;
};

}  // namespace tessera::io
