// ParallelFile (parallel_file.hpp): checked MPI-IO, collective transfers under the deadline.
#include "tessera/comm/parallel_file.hpp"

#include <climits>

#include "../detail/state.hpp"

namespace tessera::comm {

std::string ParallelFile::failed(const char* what, int rc) const {
  return path_ + ": " + what + " (" + detail::mpi_error_text(rc) + ")";
}

ParallelFile::ParallelFile(const ProcessGroup& g, const std::string& path, Mode mode, std::string& error)
    : group_(g), path_(path) {
  const int amode = mode == Mode::read ? MPI_MODE_RDONLY : (MPI_MODE_WRONLY | MPI_MODE_CREATE);
  if (const int rc = MPI_File_open(g.mpi_comm(), path.c_str(), amode, MPI_INFO_NULL, &file_); rc != MPI_SUCCESS) {
    if (error.empty()) error = failed("cannot open", rc);
    file_ = MPI_FILE_NULL;
  }
}

ParallelFile::~ParallelFile() {
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);  // nothing to report from a destructor
  if (block_ != MPI_DATATYPE_NULL && block_ != element_) MPI_Type_free(&block_);
  if (element_ != MPI_DATATYPE_NULL) MPI_Type_free(&element_);
}

void ParallelFile::view_block(std::size_t element_bytes, const std::vector<std::int64_t>& global,
                              const std::vector<std::int64_t>& lo, const std::vector<std::int64_t>& count,
                              std::size_t offset, std::string& error) {
  auto check = [&](int rc, const char* what) {
    if (rc != MPI_SUCCESS && error.empty()) error = failed(what, rc);
    return rc == MPI_SUCCESS;
  };
  if (element_ == MPI_DATATYPE_NULL && check(MPI_Type_contiguous(static_cast<int>(element_bytes), MPI_BYTE, &element_), "element type"))
    check(MPI_Type_commit(&element_), "element type");
  const int r = static_cast<int>(global.size());
  bool empty = false;
  std::vector<int> sizes(r), sub(r), starts(r);
  for (int a = 0; a < r; ++a) {
    if (global[a] > INT_MAX && error.empty())
      error = path_ + ": extent " + std::to_string(global[a]) + " too large for an MPI file view";
    empty = empty || count[a] == 0;
    sizes[a] = static_cast<int>(std::min<std::int64_t>(global[a], INT_MAX));
    sub[a] = static_cast<int>(std::min<std::int64_t>(count[a], INT_MAX));
    starts[a] = static_cast<int>(std::min<std::int64_t>(lo[a], INT_MAX));
  }
  if (block_ != MPI_DATATYPE_NULL && block_ != element_) MPI_Type_free(&block_);
  block_ = element_;
  if (!empty && error.empty() && r > 0 &&
      check(MPI_Type_create_subarray(r, sizes.data(), sub.data(), starts.data(), MPI_ORDER_C, element_, &block_),
            "cannot describe the block")) {
    check(MPI_Type_commit(&block_), "cannot describe the block");
  }
  if (block_ == MPI_DATATYPE_NULL) block_ = element_;
  // Collective: every rank calls it, also those whose earlier steps failed.
  check(MPI_File_set_view(file_, static_cast<MPI_Offset>(offset), element_, block_, "native", MPI_INFO_NULL),
        "cannot set the file view");
}

void ParallelFile::write_at(std::size_t offset, const void* data, std::size_t bytes, std::string& error) {
  if (bytes > INT_MAX) {
    if (error.empty()) error = path_ + ": " + std::to_string(bytes) + " bytes are too many for one MPI call";
    return;
  }
  MPI_Status st;
  const int rc = MPI_File_write_at(file_, static_cast<MPI_Offset>(offset), data, static_cast<int>(bytes), MPI_BYTE, &st);
  if (rc != MPI_SUCCESS && error.empty()) error = failed("cannot write", rc);
}

namespace {
// Elements of the view between two file positions (etype units).
std::size_t moved(MPI_File f, MPI_Offset before) {
  MPI_Offset after = before;
  if (MPI_File_get_position(f, &after) != MPI_SUCCESS) return 0;
  return static_cast<std::size_t>(after - before);
}
}  // namespace

void ParallelFile::write(const void* data, std::size_t elements, bool collective, std::string& error) {
  if (elements > INT_MAX && error.empty()) error = path_ + ": " + std::to_string(elements) + " elements in one MPI call";
  const int n = elements > INT_MAX ? 0 : static_cast<int>(elements);
  if (!collective) {
    MPI_Status st;
    const int rc = MPI_File_write(file_, data, n, element_, &st);
    if (rc != MPI_SUCCESS && error.empty()) error = failed("write failed", rc);
    return;
  }
  int rc = MPI_SUCCESS;
  detail::mpi_run(*group_.state_, Call{"MPI-IO write_all", elements, DType::boolean}, [&](detail::MpiPending& p) {
    p.requests.emplace_back();
    rc = MPI_File_iwrite_all(file_, data, n, element_, &p.requests.back());
    if (rc != MPI_SUCCESS) p.requests.pop_back();
  });
  if (rc != MPI_SUCCESS && error.empty()) error = failed("collective write failed", rc);
}

std::size_t ParallelFile::read(void* data, std::size_t elements, bool collective, std::string& error) {
  if (elements > INT_MAX && error.empty()) error = path_ + ": " + std::to_string(elements) + " elements in one MPI call";
  const int n = elements > INT_MAX ? 0 : static_cast<int>(elements);
  MPI_Offset before = 0;
  int rc = MPI_File_get_position(file_, &before);
  if (rc != MPI_SUCCESS) {
    if (error.empty()) error = failed("cannot read the file position", rc);
    return 0;
  }
  if (!collective) {
    MPI_Status st;
    rc = MPI_File_read(file_, data, n, element_, &st);
  } else {
    detail::mpi_run(*group_.state_, Call{"MPI-IO read_all", elements, DType::boolean}, [&](detail::MpiPending& p) {
      p.requests.emplace_back();
      rc = MPI_File_iread_all(file_, data, n, element_, &p.requests.back());
      if (rc != MPI_SUCCESS) p.requests.pop_back();
    });
  }
  if (rc != MPI_SUCCESS) {
    if (error.empty()) error = failed(collective ? "collective read failed" : "read failed", rc);
    return 0;
  }
  return moved(file_, before);
}

}  // namespace tessera::comm
