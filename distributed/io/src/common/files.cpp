// Whole-file writes, durable on request (detail/files.hpp).
#include "../detail/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "tessera/io/error.hpp"

namespace tessera::io::detail {

namespace fs = std::filesystem;

void fail_errno(const std::string& what, const fs::path& p) {
  throw IoError(what + " " + p.string() + " (" + std::strerror(errno) + ")");
}

void write_at(int fd, const fs::path& p, std::string_view bytes, std::size_t at, bool durable) {
  // Slices of 16 MiB: all-then-fsync left the disk idle during the copies.
  constexpr std::size_t kSlice = std::size_t(16) << 20;
  std::size_t queued = 0;  // bytes handed to writeback
  for (std::size_t done = 0; done < bytes.size();) {
    const std::size_t n = durable ? std::min(bytes.size() - done, kSlice) : bytes.size() - done;
    const ssize_t w = ::pwrite(fd, bytes.data() + done, n, static_cast<off_t>(at + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = w < 0 ? errno : EIO;  // (a write of none sets no errno; the message's strings may)
      const std::string what = "cannot write " + std::to_string(n) + " bytes at " + std::to_string(at + done) + " of";
      errno = e;
      fail_errno(what, p);
    }
    done += static_cast<std::size_t>(w);
#ifdef SYNC_FILE_RANGE_WRITE
    if (durable && (done - queued >= kSlice || done == bytes.size())) {  // a hint: errors surface in the fsync
      (void)::sync_file_range(fd, static_cast<off_t>(at + queued), static_cast<off_t>(done - queued),
                              SYNC_FILE_RANGE_WRITE);
      queued = done;
    }
#endif
  }
  (void)queued;
}

void write_file(const fs::path& p, const std::vector<std::string_view>& pieces, bool durable) {
  const fs::path tmp = p.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot create", tmp);
  try {
    std::size_t at = 0;
    for (const auto piece : pieces) write_at(fd, tmp, piece, at, durable), at += piece.size();
    if (durable && ::fsync(fd) != 0) fail_errno("cannot fsync", tmp);
  } catch (...) {
    ::close(fd), ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) fail_errno("cannot close", tmp);
  if (::rename(tmp.c_str(), p.c_str()) != 0) fail_errno("cannot rename to", p);
}

void write_file(const fs::path& p, const char* data, std::size_t n, bool durable) {
  write_file(p, std::vector<std::string_view>{std::string_view(data, n)}, durable);
}

void write_text(const fs::path& p, const std::string& s, bool durable) { write_file(p, s.data(), s.size(), durable); }

void fsync_path(const fs::path& p, bool directory) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) fail_errno("cannot open", p);
  if (::fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file system that cannot sync directories
    const int e = errno;
    ::close(fd), errno = e;
    fail_errno("cannot fsync", p);
  }
  ::close(fd);
}

}  // namespace tessera::io::detail
