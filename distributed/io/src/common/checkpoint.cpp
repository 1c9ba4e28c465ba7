// Checkpoints (tessera/io/checkpoint.hpp): the temporary directory, checkpoint.json, the
// fsync-and-rename commit and the reader's fallback to <dir>.old. Fields are written by the
// public save_zarr (durable) and read by load_zarr (every chunk required).
#include "tessera/io/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "../detail/error_text.hpp"
#include "../detail/checkpoint_chunks.hpp"
#include "../detail/zarr_json.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::io {
namespace {

namespace fs = std::filesystem;
using Vec = std::vector<std::int64_t>;
constexpr const char* kFormat = "tessera-checkpoint";
constexpr int kVersion = 1;

const Stream& host_stream() { return Stream::default_for(Device::host()); }

// `s` of rank `root` on every rank (packed into int64 words: the groups move typed elements).
std::string broadcast_string(const comm::ProcessGroup& g, const std::string& s, int root) {
  std::int64_t n = static_cast<std::int64_t>(s.size());
  g.broadcast(&n, &n, 1, DType::int64, root, host_stream());
  std::vector<std::int64_t> words((n + 7) / 8);
  if (g.rank() == root && n > 0) std::memcpy(words.data(), s.data(), s.size());  // data() of empty: null
  if (!words.empty()) g.broadcast(words.data(), words.data(), words.size(), DType::int64, root, host_stream());
  return std::string(reinterpret_cast<const char*>(words.data()), static_cast<std::size_t>(n));
}

// Every rank throws the same IoError if any rank has a non-empty `err` (the lowest rank's).
void agree(const comm::ProcessGroup& g, const std::string& err) {
  const std::int32_t first = g.all_reduce<std::int32_t>(err.empty() ? g.size() : g.rank(), comm::ReduceOp::min);
  if (first == g.size()) return;
  std::string msg = broadcast_string(g, err, first);
  if (g.size() > 1) msg += " (found by rank " + std::to_string(first) + ")";
  throw IoError(msg);
}

// "a/b/" -> "a/b": the temporary and .old siblings are made by appending to the name.
std::string normalize(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir == "/" || dir == "." || dir == "..")
    throw InvalidArgument("checkpoint: '" + dir + "' cannot be a checkpoint directory");
  return dir;
}

bool valid_name(const std::string& n) {
  if (n.empty() || n[0] == '.' || n == "checkpoint.json") return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

[[noreturn]] void throw_errno(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + " (" + std::strerror(errno) + ")");
}

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) throw_errno("cannot open", path);
  if (::fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file system that cannot sync directories
    const int e = errno;
    ::close(fd);
    errno = e;
    throw_errno("cannot fsync", path);
  }
  ::close(fd);
}

void write_durable(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("cannot create", path);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = errno;
      ::close(fd);
      errno = e;
      throw_errno("cannot write", path);
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw_errno("cannot write", path);
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      o += '\\', o += ch;
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += ch;
    }
  }
  return o + "\"";
}
std::string json_ints(const Vec& v) {
  std::string o = "[";
  for (std::size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + std::to_string(v[i]);
  return o + "]";
}
std::string json_double(double x) {
  if (std::isnan(x)) return "\"NaN\"";
  if (std::isinf(x)) return x > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", x);  // 17 significant digits: the same double when read back
  return b;
}

std::string checkpoint_json(std::int64_t step, double time, const std::map<std::string, std::string>& attrs,
                            const std::vector<CheckpointField>& fields) {
  std::string o = "{\n  \"format\": \"" + std::string(kFormat) + "\",\n  \"version\": " + std::to_string(kVersion) +
                  ",\n  \"step\": " + std::to_string(step) + ",\n  \"time\": " + json_double(time) + ",\n  \"attributes\": {";
  bool first = true;
  for (const auto& [k, v] : attrs) o += (first ? "\n    " : ",\n    ") + json_string(k) + ": " + json_string(v), first = false;
  o += attrs.empty() ? "},\n  \"fields\": [" : "\n  },\n  \"fields\": [";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    o += (i ? ",\n    " : "\n    ") + std::string("{\"name\": ") + json_string(f.name) + ", \"dtype\": " + json_string(f.dtype) +
         ", \"shape\": " + json_ints(f.shape) + ", \"chunks\": " + json_ints(f.chunks) + "}";
  }
  return o + (fields.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

std::string read_whole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_errno("cannot open", path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw std::runtime_error("cannot read " + path);
  return ss.str();
}

// Where the last complete checkpoint is: `dir`, or `dir`.old when a commit stopped between its
// two renames (`dir` missing).
std::string resolve(const std::string& dir) {
  const fs::path d(dir), old(dir + ".old");
  if (fs::exists(d / "checkpoint.json")) return dir;
  if (!fs::exists(d)) {
    if (fs::exists(old / "checkpoint.json")) return old.string();
    throw std::runtime_error("no checkpoint there (the directory does not exist)");
  }
  throw std::runtime_error("not a complete checkpoint (no checkpoint.json)");
}

}  // namespace

namespace detail {
std::vector<std::int64_t> checkpoint_chunks(const std::vector<Vec>& lo, const std::vector<Vec>& hi, std::size_t elem) {
  Vec c(lo.empty() ? 0 : lo[0].size(), 1);
  for (std::size_t r = 0; r < lo.size(); ++r)
    for (std::size_t a = 0; a < c.size(); ++a) c[a] = std::max(c[a], hi[r][a] - lo[r][a]);
  const auto bytes = [&] {
    double b = static_cast<double>(elem);
    for (auto x : c) b *= static_cast<double>(x);
    return b;
  };
  while (!c.empty() && bytes() > double(64 << 20)) {
    auto& longest = *std::max_element(c.begin(), c.end());
    if (longest == 1) break;
    longest = (longest + 1) / 2;
  }
  return c;
}
}  // namespace detail

// ---- writer ----

CheckpointWriter::CheckpointWriter(std::string dir, comm::ProcessGroup group)
    : dir_(normalize(std::move(dir))), group_(std::move(group)) {
  std::string err;
  if (group_.rank() == 0) {
    try {
      const fs::path d(dir_);
      if (d.has_parent_path()) fs::create_directories(d.parent_path());
      std::random_device rd;
      for (int attempt = 0; tmp_.empty(); ++attempt) {
        char id[40];
        std::snprintf(id, sizeof id, ".tmp-%ld-%08x", static_cast<long>(::getpid()), static_cast<unsigned>(rd()));
        if (fs::create_directory(dir_ + id)) tmp_ = dir_ + id;
        else if (attempt == 100) throw std::runtime_error("no free temporary name");
      }
    } catch (const std::exception& e) {
      err = "checkpoint " + dir_ + ": cannot create a temporary directory: " + tessera::detail::message_of(e);
    }
  }
  agree(group_, err);
  tmp_ = broadcast_string(group_, tmp_, 0);
}

CheckpointWriter::~CheckpointWriter() {
  if (!committed_ && group_.rank() == 0 && !tmp_.empty()) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);  // best effort: a later commit removes leftovers too
  }
}

void CheckpointWriter::begin_field(const std::string& name, const comm::ProcessGroup& array_group) {
  const std::string where = "checkpoint " + dir_ + ": field '" + name + "': ";
  if (committed_) throw InvalidArgument(where + "the checkpoint is already committed");
  if (!valid_name(name))
    throw InvalidArgument(where + "names are letters, digits, '_', '-' and '.', not starting with '.'");
  for (const auto& f : fields_)
    if (f.name == name) throw InvalidArgument(where + "added twice");
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(group_.mpi_comm(), array_group.mpi_comm(), &cmp);
  const std::int32_t same = cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
  if (group_.all_reduce<std::int32_t>(same, comm::ReduceOp::min) == 0)
    throw InvalidArgument(where + "the array's grid is not over the checkpoint's group (same ranks, same order)");
}

template <class T, int R>
void CheckpointWriter::add(const std::string& name, const distributed::Array<T, R>& a, Compressor c) {
  std::vector<Vec> lo, hi;
  for (int r = 0; r < a.layout().grid().size(); ++r) {
    const auto b = a.layout().local_box(r);
    lo.emplace_back(b.lo.begin(), b.lo.end()), hi.emplace_back(b.hi.begin(), b.hi.end());
  }
  const Vec v = detail::checkpoint_chunks(lo, hi, sizeof(T));
  distributed::Index<R> chunks{};
  std::copy(v.begin(), v.end(), chunks.begin());
  add(name, a, chunks, c);
}

template <class T, int R>
void CheckpointWriter::add(const std::string& name, const distributed::Array<T, R>& a,
                           std::type_identity_t<distributed::Index<R>> chunks, Compressor c) {
  begin_field(name, a.layout().grid().group());
  // Every file fsynced by the rank that wrote it; IoError on every rank if any rank fails.
  save_zarr(tmp_ + "/" + name, a, chunks, ZarrWriteOptions{c, /*durable=*/true});
  const auto& g = a.layout().global_shape();
  fields_.push_back(CheckpointField{name, zarr_dtype(dtype_v<T>), Vec(g.begin(), g.end()), Vec(chunks.begin(), chunks.end())});
}

#define TESSERA_CHECKPOINT_INSTANTIATE(T, R)                                                                    \
  template void CheckpointWriter::add<T, R>(const std::string&, const distributed::Array<T, R>&, Compressor); \
  template void CheckpointWriter::add<T, R>(const std::string&, const distributed::Array<T, R>&,              \
                                            distributed::Index<R>, Compressor);
#define TESSERA_CHECKPOINT_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_CHECKPOINT_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_CHECKPOINT_RANKS)
#undef TESSERA_CHECKPOINT_RANKS
#undef TESSERA_CHECKPOINT_INSTANTIATE

void CheckpointWriter::commit() {
  if (committed_) throw InvalidArgument("checkpoint " + dir_ + ": committed twice");
  group_.barrier();  // every rank's files are written and fsynced
  std::string err;
  if (group_.rank() == 0) {
    try {
      const fs::path d(dir_), old(dir_ + ".old"), tmp(tmp_);
      const fs::path parent = d.has_parent_path() ? d.parent_path() : fs::path(".");
      write_durable((tmp / "checkpoint.json").string(), checkpoint_json(step_, time_, attrs_, fields_));
      for (const auto& f : fields_) fsync_path((tmp / f.name).string(), true);
      fsync_path(tmp_, true);
      // Replace: the previous checkpoint becomes .old (a stale .old, left when a commit stopped
      // before removing it, goes first: `d` is complete), the new one takes its name.
      if (fs::exists(d / "checkpoint.json")) {
        fs::remove_all(old);
        fs::rename(d, old);
      } else if (fs::exists(d)) {
        if (!fs::is_directory(d) || !fs::is_empty(d))
          throw std::runtime_error("exists and is not a checkpoint (no checkpoint.json): not replaced");
        fs::remove(d);
      }
      fs::rename(tmp, d);
      fsync_path(parent.string(), true);
      // Committed. Clean-up failures are harmless: readers take `d`.
      std::error_code ec;
      fs::remove_all(old, ec);
      const std::string prefix = d.filename().string() + ".tmp-";
      for (const auto& e : fs::directory_iterator(parent, ec))
        if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(e.path(), ec);
    } catch (const std::exception& e) {
      err = "checkpoint " + dir_ + ": commit failed: " + tessera::detail::message_of(e);
    }
  }
  agree(group_, err);
  committed_ = true;
}

// ---- reader ----

CheckpointReader::CheckpointReader(std::string dir, comm::ProcessGroup group) : dir_(normalize(std::move(dir))) {
  std::string err, text;
  if (group.rank() == 0) {
    try {
      path_ = resolve(dir_);
      text = read_whole(path_ + "/checkpoint.json");
    } catch (const std::exception& e) {
      err = "checkpoint " + dir_ + ": " + tessera::detail::message_of(e);
    }
  }
  agree(group, err);
  path_ = broadcast_string(group, path_, 0);
  text = broadcast_string(group, text, 0);

  // Every rank parses the same bytes: the same result, or the same IoError, everywhere.
  const std::string where = "checkpoint " + path_ + "/checkpoint.json: ";
  detail::Json doc;
  try {
    doc = detail::JsonParser(text).parse_document();
  } catch (const std::runtime_error& e) {
    throw IoError(where + e.what());
  }
  const auto bad = [&](const std::string& what) { throw IoError(where + what); };
  const auto member = [&](const detail::Json& o, const char* key, detail::Json::Kind kind) -> const detail::Json& {
    const auto it = o.members.find(key);
    if (it == o.members.end() || it->second.kind != kind) bad(std::string("\"") + key + "\" missing or of the wrong type");
    return it->second;
  };
  const auto int64 = [&](const detail::Json& v, const char* what) {
    std::int64_t x = 0;
    const auto [p, ec] = std::from_chars(v.str.data(), v.str.data() + v.str.size(), x);
    if (v.kind != detail::Json::number || !v.integral || ec != std::errc() || p != v.str.data() + v.str.size())
      bad(std::string(what) + " is not a 64-bit integer");
    return x;
  };
  const auto ints = [&](const detail::Json& o, const char* key, std::int64_t min) {
    Vec r;
    for (const auto& x : member(o, key, detail::Json::array).items) {
      r.push_back(int64(x, key));
      if (r.back() < min) bad(std::string("\"") + key + "\" holds a value below " + std::to_string(min));
    }
    return r;
  };
  if (doc.kind != detail::Json::object) bad("not a JSON object");
  if (member(doc, "format", detail::Json::string).str != kFormat) bad("not a Tessera checkpoint (\"format\")");
  if (int64(member(doc, "version", detail::Json::number), "version") != kVersion) bad("unsupported version");
  step_ = int64(member(doc, "step", detail::Json::number), "step");
  const auto it = doc.members.find("time");
  if (it == doc.members.end()) bad("\"time\" missing");
  const auto& t = it->second;
  if (t.kind == detail::Json::number) time_ = t.num;
  else if (t.kind == detail::Json::string && t.str == "NaN") time_ = NAN;
  else if (t.kind == detail::Json::string && (t.str == "Infinity" || t.str == "-Infinity")) time_ = t.str[0] == '-' ? -INFINITY : INFINITY;
  else bad("\"time\" is not a number");
  for (const auto& [k, v] : member(doc, "attributes", detail::Json::object).members) {
    if (v.kind != detail::Json::string) bad("attribute \"" + k + "\" is not a string");
    attrs_[k] = v.str;
  }
  std::set<std::string> seen;
  for (const auto& f : member(doc, "fields", detail::Json::array).items) {
    if (f.kind != detail::Json::object) bad("a field is not an object");
    CheckpointField cf{member(f, "name", detail::Json::string).str, member(f, "dtype", detail::Json::string).str,
                       ints(f, "shape", 0), ints(f, "chunks", 1)};
    if (!valid_name(cf.name) || !seen.insert(cf.name).second) bad("bad or repeated field name \"" + cf.name + "\"");
    if (cf.chunks.size() != cf.shape.size()) bad("field \"" + cf.name + "\": shape and chunks differ in length");
    fields_.push_back(std::move(cf));
  }
}

const std::string& CheckpointReader::get(const std::string& key) const {
  const auto it = attrs_.find(key);
  if (it == attrs_.end()) throw IoError("checkpoint " + path_ + ": no attribute '" + key + "'");
  return it->second;
}

std::vector<std::string> CheckpointReader::names() const {
  std::vector<std::string> n;
  for (const auto& f : fields_) n.push_back(f.name);
  return n;
}

const CheckpointField& CheckpointReader::field(const std::string& name) const {
  for (const auto& f : fields_)
    if (f.name == name) return f;
  throw IoError("checkpoint " + path_ + ": no field '" + name + "'");
}

void CheckpointReader::check_field(const std::string& name, const std::string& dtype, const Vec& shape) const {
  const auto& f = field(name);
  if (f.dtype != dtype || f.shape != shape)
    throw IoError("checkpoint " + path_ + ": field '" + name + "' is " + f.dtype + " " + json_ints(f.shape) + ", asked for " +
                  dtype + " " + json_ints(shape));
}

}  // namespace tessera::io
