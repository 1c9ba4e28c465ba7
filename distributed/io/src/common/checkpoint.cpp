// Checkpoints (tessera/io/checkpoint.hpp): the temporary directory, the Zarr group's metadata
// (written last: it marks a complete checkpoint), the fsync-and-rename commit and the reader's
// fallback to <dir>.old. Fields are written by the public save_zarr (durable) and read by
// load_zarr (every chunk required).
#include "tessera/io/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../detail/error_text.hpp"
#include "../detail/files.hpp"
#include "../detail/checkpoint_chunks.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::io {
namespace {

namespace fs = std::filesystem;
using Vec = std::vector<std::int64_t>;
constexpr const char* kFormat = "tessera-checkpoint";
constexpr int kVersion = 2;  // 2: a Zarr group (1 was checkpoint.json)
using json = nlohmann::json;

const Stream& host_stream() { return Stream::default_for(Device::host()); }

// `s` of rank `root` on every rank (packed into int64 words: the groups move typed elements).
// "a/b/" -> "a/b": the temporary and .old siblings are made by appending to the name.
std::string normalize(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir == "/" || dir == "." || dir == "..")
    throw InvalidArgument("checkpoint: '" + dir + "' cannot be a checkpoint directory");
  return dir;
}

bool valid_name(const std::string& n) {
  if (n.empty() || n[0] == '.' || n == "zarr.json") return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

using detail::fsync_path;

std::string json_ints(const Vec& v) {
  std::string o = "[";
  for (std::size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + std::to_string(v[i]);
  return o + "]";
}
json json_double(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return x;
}

// The group's attributes: step, time, the user's attributes and the fields.
std::string group_attributes(std::int64_t step, double time, const std::map<std::string, std::string>& attrs,
                             const std::vector<CheckpointField>& fields) {
  json f = json::array();
  for (const auto& x : fields) f.push_back({{"name", x.name}, {"dtype", x.dtype}, {"shape", x.shape}, {"chunks", x.chunks}});
  return json{{"format", kFormat}, {"version", kVersion}, {"step", step}, {"time", json_double(time)}, {"attributes", attrs}, {"fields", f}}
      .dump(2);
}
bool complete(const fs::path& d) { return fs::exists(d / "zarr.json") || (fs::exists(d / ".zgroup") && fs::exists(d / ".zattrs")); }

std::string read_whole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) detail::fail_errno("cannot open", path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw std::runtime_error("cannot read " + path);
  return ss.str();
}

// Where the last complete checkpoint is: `dir`, or `dir`.old when a commit stopped between its
// two renames (`dir` missing).
std::string resolve(const std::string& dir) {
  const fs::path d(dir), old(dir + ".old");
  if (complete(d)) return dir;
  if (!fs::exists(d)) {
    if (complete(old)) return old.string();
    throw std::runtime_error("no checkpoint there (the directory does not exist)");
  }
  throw std::runtime_error("not a complete checkpoint (no zarr.json)");
}

}  // namespace

namespace detail {
std::vector<std::int64_t> checkpoint_chunks(const std::vector<distributed::DynBox>& blocks, std::size_t elem) {
  Vec c(blocks.empty() ? 0 : blocks[0].lo.size(), 1);
  for (const auto& b : blocks) {
    const auto s = b.shape();
    for (std::size_t a = 0; a < c.size(); ++a) c[a] = std::max(c[a], s[a]);
  }
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
  group_.agree<IoError>(err);
  group_.broadcast(tmp_, 0);
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
  const std::int32_t same = group_.same_ranks(array_group);
  if (group_.all_reduce<std::int32_t>(same, comm::ReduceOp::min) == 0)
    throw InvalidArgument(where + "the array's grid is not over the checkpoint's group (same ranks, same order)");
}

template <class T, int R>
void CheckpointWriter::add(const std::string& name, const distributed::Array<T, R>& a, const Codec& c) {
  std::vector<distributed::DynBox> blocks;
  for (int r = 0; r < a.layout().grid().size(); ++r) blocks.emplace_back(a.layout().local_box(r));
  const Vec v = detail::checkpoint_chunks(blocks, sizeof(T));
  distributed::Index<R> chunks{};  // one per axis (element-wise: GCC 13 misreads a std::copy here)
  for (int d = 0; d < R; ++d) chunks[d] = v.at(static_cast<std::size_t>(d));
  add(name, a, chunks, c);
}

template <class T, int R>
void CheckpointWriter::add(const std::string& name, const distributed::Array<T, R>& a,
                           std::type_identity_t<distributed::Index<R>> chunks, const Codec& c) {
  add(name, a, chunks, CheckpointFieldOptions{c});
}

template <class T, int R>
void CheckpointWriter::add(const std::string& name, const distributed::Array<T, R>& a,
                           std::type_identity_t<distributed::Index<R>> chunks, const CheckpointFieldOptions& f) {
  begin_field(name, a.layout().grid().group());
  if (!f.shard.empty() && format_ != 3)
    throw InvalidArgument("checkpoint " + dir_ + ": field '" + name + "': shards need Zarr format 3, not " +
                          std::to_string(format_));
  // Every file fsynced by the rank that wrote it; IoError on every rank if any rank fails.
  ZarrWriteOptions o{f.codec, /*durable=*/true};
  o.format = format_;
  o.shard = f.shard;
  save_zarr(tmp_ + "/" + name, a, chunks, o);
  const auto& g = a.layout().global_shape();
  fields_.push_back(CheckpointField{name, zarr_dtype(dtype_v<T>), Vec(g.begin(), g.end()), Vec(chunks.begin(), chunks.end())});
}

#define TESSERA_CHECKPOINT_INSTANTIATE(T, R)                                                                      \
  template void CheckpointWriter::add<T, R>(const std::string&, const distributed::Array<T, R>&, const Codec&); \
  template void CheckpointWriter::add<T, R>(const std::string&, const distributed::Array<T, R>&,                \
                                            distributed::Index<R>, const Codec&);                                 \
  template void CheckpointWriter::add<T, R>(const std::string&, const distributed::Array<T, R>&,                \
                                            distributed::Index<R>, const CheckpointFieldOptions&);
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
      const std::string attrs = group_attributes(step_, time_, attrs_, fields_);
      if (format_ == 3) {
        detail::write_text(tmp / "zarr.json",
                           json{{"zarr_format", 3}, {"node_type", "group"}, {"attributes", json::parse(attrs)}}.dump(2),
                           true);
      } else {
        detail::write_text(tmp / ".zgroup", "{\n  \"zarr_format\": 2\n}", true);
        detail::write_text(tmp / ".zattrs", attrs, true);
      }
      for (const auto& f : fields_) fsync_path((tmp / f.name).string(), true);
      fsync_path(tmp_, true);
      // Replace: the previous checkpoint becomes .old (a stale .old, left when a commit stopped
      // before removing it, goes first: `d` is complete), the new one takes its name.
      if (complete(d)) {
        fs::remove_all(old);
        fs::rename(d, old);
      } else if (fs::exists(d)) {
        if (!fs::is_directory(d) || !fs::is_empty(d))
          throw std::runtime_error("exists and is not a checkpoint (no zarr.json): not replaced");
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
  group_.agree<IoError>(err);
  committed_ = true;
}

// ---- reader ----

CheckpointReader::CheckpointReader(std::string dir, comm::ProcessGroup group) : dir_(normalize(std::move(dir))) {
  std::string err, text, file;
  if (group.rank() == 0) {
    try {
      path_ = resolve(dir_);
      file = path_ + (fs::exists(path_ + "/zarr.json") ? "/zarr.json" : "/.zattrs");
      text = read_whole(file);
    } catch (const std::exception& e) {
      err = "checkpoint " + dir_ + ": " + tessera::detail::message_of(e);
    }
  }
  group.agree<IoError>(err);
  group.broadcast(path_, 0);
  group.broadcast(file, 0);
  group.broadcast(text, 0);

  // Every rank parses the same bytes: the same result, or the same IoError, everywhere.
  const std::string where = "checkpoint " + file + ": ";
  const auto bad = [&](const std::string& what) { throw IoError(where + what); };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    bad(std::string("bad JSON: ") + e.what());
  }
  if (doc.is_object() && doc.contains("node_type")) {
    if (doc["node_type"] != "group" || !doc.contains("attributes")) bad("not a Zarr group with attributes");
    doc = doc["attributes"];
  }
  const auto member = [&](const json& o, const char* key, json::value_t kind) -> const json& {
    const auto it = o.find(key);
    const bool ok = it != o.end() && (it->type() == kind || (kind == json::value_t::number_integer && it->is_number_integer()));
    if (!ok) bad(std::string("\"") + key + "\" missing or of the wrong type");
    return *it;
  };
  const auto ints = [&](const json& o, const char* key, std::int64_t min) {
    Vec r;
    for (const auto& x : member(o, key, json::value_t::array)) {
      if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<std::uint64_t>() > INT64_MAX)) bad(std::string(key) + " is not a 64-bit integer");
      r.push_back(x.get<std::int64_t>());
      if (r.back() < min) bad(std::string("\"") + key + "\" holds a value below " + std::to_string(min));
    }
    return r;
  };
  if (!doc.is_object()) bad("not a JSON object");
  if (member(doc, "format", json::value_t::string) != kFormat) bad("not a Tessera checkpoint (\"format\")");
  if (member(doc, "version", json::value_t::number_integer) != kVersion) bad("unsupported version");
  const auto& st = member(doc, "step", json::value_t::number_integer);
  if (st.is_number_unsigned() && st.get<std::uint64_t>() > INT64_MAX) bad("step is not a 64-bit integer");
  step_ = st.get<std::int64_t>();
  const auto it = doc.find("time");
  if (it == doc.end()) bad("\"time\" missing");
  if (it->is_number()) time_ = it->get<double>();
  else if (*it == "NaN") time_ = NAN;
  else if (*it == "Infinity" || *it == "-Infinity") time_ = *it == "Infinity" ? INFINITY : -INFINITY;
  else bad("\"time\" is not a number");
  for (const auto& [k, v] : member(doc, "attributes", json::value_t::object).items()) {
    if (!v.is_string()) bad("attribute \"" + k + "\" is not a string");
    attrs_[k] = v.get<std::string>();
  }
  std::set<std::string> seen;
  for (const auto& f : member(doc, "fields", json::value_t::array)) {
    if (!f.is_object()) bad("a field is not an object");
    CheckpointField cf{member(f, "name", json::value_t::string).get<std::string>(),
                       member(f, "dtype", json::value_t::string).get<std::string>(), ints(f, "shape", 0), ints(f, "chunks", 1)};
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
