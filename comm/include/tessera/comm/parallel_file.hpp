// ParallelFile: MPI-IO on a process group's communicator, for the file formats above (.npy).
// Every MPI call is checked; a failure becomes the `error` string of the call (not an exception)
// so that every rank keeps making the same collective calls and the caller agrees on the error
// afterwards (ProcessGroup::agree). Collective reads and writes are posted non-blocking
// (MPI_File_iread_all / iwrite_all) and waited under the group's deadline like its other
// collectives; independent ones are plain calls.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/comm/process_group.hpp"

namespace tessera::comm {

class ParallelFile {
 public:
  enum class Mode { read, write };  // write: create if missing, never truncate
  /// Collective open over `g`; on failure `error` names the path and MPI's reason.
  ParallelFile(const ProcessGroup& g, const std::string& path, Mode mode, std::string& error);
  /// Closes the file (collective).
  ~ParallelFile();
  ParallelFile(const ParallelFile&) = delete;
  ParallelFile& operator=(const ParallelFile&) = delete;

  /// Collective: this rank sees the C-order block [lo, lo + count) of an array of extents
  /// `global` with elements of `element_bytes`, starting at byte `offset`; a block with a zero
  /// extent sees nothing. Extents above INT_MAX are an error (MPI's subarray type takes int).
  void view_block(std::size_t element_bytes, const std::vector<std::int64_t>& global,
                  const std::vector<std::int64_t>& lo, const std::vector<std::int64_t>& count, std::size_t offset,
                  std::string& error);
  /// Independent: `bytes` bytes at byte `offset` of the file (before any view is set).
  void write_at(std::size_t offset, const void* data, std::size_t bytes, std::string& error);
  /// `elements` elements of the view from the file position on: collective (every rank calls,
  /// with 0 elements where it has none) or independent. read returns the elements read.
  void write(const void* data, std::size_t elements, bool collective, std::string& error);
  std::size_t read(void* data, std::size_t elements, bool collective, std::string& error);

 private:
  std::string failed(const char* what, int rc) const;
  ProcessGroup group_;
  std::string path_;
  MPI_File file_ = MPI_FILE_NULL;
  MPI_Datatype element_ = MPI_DATATYPE_NULL, block_ = MPI_DATATYPE_NULL;
};

}  // namespace tessera::comm
