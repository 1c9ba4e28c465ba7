// Whether MPI-IO transfers are collective (.npy, HDF5). Open MPI 4.1's OMPIO corrupts write_all
// (zeros in other ranks' data, about every other run at 3-4 ranks) unless one fcoll component is
// forced by hand; ROMIO and independent I/O on the same views are right every time, so under
// Open MPI 4 every rank does independent I/O. TESSERA_MPIIO_COLLECTIVE=1 (e.g. with --mca io
// romio321) or =0 overrides the choice.
#pragma once
#include <mpi.h>

#include "tessera/io/settings.hpp"
#include "tessera/local/settings.hpp"

namespace tessera::io::detail {

inline bool collective_io() {
  if (const auto forced = io::settings().mpiio_collective) return *forced;
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
  return false;
#else
  return true;
#endif
}

}  // namespace tessera::io::detail
