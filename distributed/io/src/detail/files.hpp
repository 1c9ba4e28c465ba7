// POSIX file writing shared by the formats (zarr.cpp, checkpoint.cpp): whole files that appear
// under their name complete or not at all, durable (fsynced) on request. Errors are IoError
// naming the path and errno's text.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::io::detail {

/// Throws IoError "<what> <path> (<strerror(errno)>)".
[[noreturn]] void fail_errno(const std::string& what, const std::filesystem::path& p);
/// Writes the pieces one after the other to `p`.tmp and renames it to `p` (never half a file
/// under p). Durable: fsynced before the rename, written in slices handed to writeback as they
/// land in the page cache, so that the disk writes while the rest is copied.
void write_file(const std::filesystem::path& p, const std::vector<std::string_view>& pieces, bool durable);
void write_file(const std::filesystem::path& p, const char* data, std::size_t n, bool durable);
void write_text(const std::filesystem::path& p, const std::string& s, bool durable);
/// Writes `bytes` at offset `at` of the open file `fd` (`p` names it in errors). Durable: in
/// slices handed to writeback as they land in the page cache, so that the disk writes while the
/// rest is copied (the caller's fsync then waits for less); the file is not fsynced here.
void write_at(int fd, const std::filesystem::path& p, std::string_view bytes, std::size_t at, bool durable);
/// fsync of a file or a directory (file systems that cannot sync directories are let be).
void fsync_path(const std::filesystem::path& p, bool directory);

}  // namespace tessera::io::detail
