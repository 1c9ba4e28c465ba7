// Zarr v2/v3 array metadata (detail/zarr_meta.hpp): no MPI, no CUDA, fuzzed by tests/fuzz.
#include "../detail/zarr_meta.hpp"

#include <cmath>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

namespace tessera::io {
namespace {

using json = nlohmann::json;
using Vec = std::vector<std::int64_t>;

struct Bad {
  std::string where;
  [[noreturn]] void operator()(const std::string& what) const { throw IoError(where + what); }
};

// Strict JSON: nlohmann's parser, plus no duplicate keys and at most 64 levels of nesting.
json parse_json(std::string_view text, const Bad& bad) {
  std::vector<std::set<std::string>> keys;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (depth > 64) bad("bad JSON: nesting too deep");
    if (ev == json::parse_event_t::object_start) keys.emplace_back();
    else if (ev == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    else if (ev == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      bad("bad JSON: duplicate key \"" + parsed.get<std::string>() + "\"");
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check);
  } catch (const json::exception& e) {
    bad(std::string("bad JSON: ") + e.what());
  }
}

const json& member(const json& o, const char* key, const Bad& bad) {
  auto it = o.find(key);
  if (it == o.end()) bad(std::string("missing key \"") + key + "\"");
  return *it;
}

std::int64_t int_value(const json& v, std::int64_t min, const std::string& what, const Bad& bad) {
  if (!v.is_number_integer()) bad(what + " is not an integer");
  if (v.is_number_unsigned() ? v.get<std::uint64_t>() > 9'000'000'000'000'000ull
                             : (v.get<std::int64_t>() < min || v.get<std::int64_t>() > 9'000'000'000'000'000ll))
    bad(what + " is out of range");
  const auto x = v.get<std::int64_t>();
  if (x < min) bad(what + " is below " + std::to_string(min));
  return x;
}

Vec ints(const json& v, std::int64_t min, const std::string& what, const Bad& bad) {
  if (!v.is_array()) bad(what + " is not an array");
  if (v.size() > 32) bad(what + " has more than 32 axes");
  Vec r;
  for (const auto& x : v) r.push_back(int_value(x, min, what + " holds a value that", bad));
  return r;
}

void check_grid(const ZarrayMeta& m, const Bad& bad) {
  if (m.shape.size() != m.chunks.size())
    bad("shape has " + std::to_string(m.shape.size()) + " axes but chunks " + std::to_string(m.chunks.size()));
  // The element count of one chunk must fit (a reader allocates one chunk's bytes).
  double elems = 1;
  for (auto c : m.chunks) elems *= static_cast<double>(c);
  if (elems > 1e15) bad("chunks of " + std::to_string(elems) + " elements are too large");
}

double scalar_fill(const json& v, const std::string& dtype, const Bad& bad) {
  if (v.is_number()) return v.get<double>();
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_null()) return 0;
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "NaN") return NAN;
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
    if (s.size() > 2 && s.size() <= 18 && s.rfind("0x", 0) == 0) {  // v3: the bits of a float
      std::uint64_t bits = 0;
      for (char c : s.substr(2)) {
        const int h = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
        if (h < 0) bad("fill_value " + s + " is not hexadecimal");
        bits = bits << 4 | static_cast<unsigned>(h);
      }
      if (dtype_swap_unit(dtype) == 4 && s.size() == 10) {
        float f;
        const auto b32 = static_cast<std::uint32_t>(bits);
        std::memcpy(&f, &b32, 4);
        return f;
      }
      if (dtype_swap_unit(dtype) == 8 && s.size() == 18) {
        double d;
        std::memcpy(&d, &bits, 8);
        return d;
      }
      bad("fill_value " + s + " does not match dtype " + dtype);
    }
  }
  bad("unsupported fill_value");
}

void parse_fill(ZarrayMeta& m, const json& fv, const Bad& bad) {
  if (fv.is_array()) {
    if (fv.size() != 2) bad("complex fill_value is not [real, imag]");
    m.fill_real = scalar_fill(fv[0], m.dtype, bad), m.fill_imag = scalar_fill(fv[1], m.dtype, bad);
  } else {
    m.fill_real = scalar_fill(fv, m.dtype, bad);
  }
}

std::vector<int> reversed_axes(std::size_t n) {
  std::vector<int> p;
  for (std::size_t a = n; a-- > 0;) p.push_back(static_cast<int>(a));
  return n > 1 ? p : std::vector<int>{};
}

int blosc_shuffle(const json& v, const Bad& bad) {
  if (v.is_number_integer() && v.get<std::int64_t>() >= -1 && v.get<std::int64_t>() <= 2) return v.get<int>();
  if (v == "noshuffle") return 0;
  if (v == "shuffle") return 1;
  if (v == "bitshuffle") return 2;
  bad("blosc shuffle is not noshuffle, shuffle or bitshuffle");
}

// A bytes -> bytes codec from its v2 compressor object or v3 configuration.
BytesCodec bytes_codec(const std::string& id, const json& conf, const Bad& bad) {
  BytesCodec c{id};
  auto opt_int = [&](const char* key, int lo, int hi, int& out) {
    auto it = conf.find(key);
    if (it == conf.end() || it->is_null()) return;
    out = static_cast<int>(int_value(*it, lo, id + " " + key, bad));
    if (out > hi) bad(id + " " + key + " is above " + std::to_string(hi));
  };
  if (id == "zlib" || id == "gzip") {  // v3 "zlib": not a v3 codec, but what Tessera wrote before gzip
    opt_int("level", -1, 9, c.level);
  } else if (id == "zstd") {
    opt_int("level", -131072, 22, c.level);
    if (auto it = conf.find("checksum"); it != conf.end() && !it->is_boolean()) bad("zstd checksum is not a boolean");
  } else if (id == "blosc") {
    c.level = 5;
    opt_int("clevel", 0, 9, c.level);
    if (auto it = conf.find("cname"); it != conf.end()) {
      if (!it->is_string()) bad("blosc cname is not a string");
      c.cname = it->get<std::string>();
      if (c.cname != "lz4" && c.cname != "lz4hc" && c.cname != "blosclz" && c.cname != "zstd" && c.cname != "zlib")
        bad("blosc cname " + c.cname + " is not supported");
    }
    if (auto it = conf.find("shuffle"); it != conf.end()) c.shuffle = blosc_shuffle(*it, bad);
    opt_int("typesize", 0, 255, c.typesize);
    opt_int("blocksize", 0, 1 << 30, c.blocksize);
  } else if (id != "crc32c") {
    bad("codec " + id + " is not supported");
  }
  return c;
}

// The configuration object of a v3 codec (absent: empty).
const json& configuration(const json& codec, const Bad& bad) {
  static const json empty = json::object();
  auto it = codec.find("configuration");
  if (it == codec.end()) return empty;
  if (!it->is_object()) bad("a codec configuration is not an object");
  return *it;
}

ChunkCodecs codec_chain(const json& list, std::size_t rank, const Vec& chunk, int depth, const Bad& bad);

std::shared_ptr<ShardSpec> sharding(const json& conf, std::size_t rank, const Vec& chunk, int depth, const Bad& bad) {
  if (depth > 2) bad("sharding nested too deep");
  auto s = std::make_shared<ShardSpec>();
  s->inner = ints(member(conf, "chunk_shape", bad), 1, "sharding chunk_shape", bad);
  if (s->inner.size() != rank) bad("sharding chunk_shape has the wrong number of axes");
  double n = 1;
  for (std::size_t a = 0; a < rank; ++a) {
    if (chunk[a] % s->inner[a] != 0) bad("sharding chunk_shape does not divide the chunk shape");
    n *= static_cast<double>(chunk[a] / s->inner[a]);
  }
  if (n > 1e8) bad("shards of more than 1e8 inner chunks");
  s->codecs = codec_chain(member(conf, "codecs", bad), rank, s->inner, depth + 1, bad);
  if (auto it = conf.find("index_codecs"); it != conf.end()) {
    s->index_codecs = codec_chain(*it, 2, {static_cast<std::int64_t>(n), 2}, depth + 1, bad);
    if (!s->index_codecs.transpose.empty() || s->index_codecs.shard) bad("index_codecs other than bytes and crc32c");
    for (const auto& c : s->index_codecs.bytes)
      if (c.id != "crc32c") bad("index_codecs other than bytes and crc32c");
  }
  if (auto it = conf.find("index_location"); it != conf.end()) {
    if (*it != "start" && *it != "end") bad("index_location is not start or end");
    s->index_at_end = *it == "end";
  }
  return s;
}

ChunkCodecs codec_chain(const json& list, std::size_t rank, const Vec& chunk, int depth, const Bad& bad) {
  if (!list.is_array()) bad("codecs is not an array");
  ChunkCodecs c;
  bool array_to_bytes = false;
  for (const auto& codec : list) {
    if (!codec.is_object() || !codec.contains("name") || !codec["name"].is_string()) bad("a codec has no \"name\"");
    const auto name = codec["name"].get<std::string>();
    const json& conf = configuration(codec, bad);
    if (name == "transpose") {
      if (array_to_bytes) bad("transpose after the array -> bytes codec");
      std::vector<int> order;
      const json& o = member(conf, "order", bad);
      if (o == "C") order.clear();
      else if (o == "F") order = reversed_axes(rank);
      else {
        const Vec v = ints(o, 0, "transpose order", bad);
        std::vector<bool> seen(rank, false);
        if (v.size() != rank) bad("transpose order has the wrong number of axes");
        for (auto x : v) {
          if (x >= static_cast<std::int64_t>(rank) || seen[x]) bad("transpose order is not a permutation");
          seen[x] = true, order.push_back(static_cast<int>(x));
        }
      }
      if (!order.empty()) {  // compose with an earlier transpose
        if (!c.transpose.empty())
          for (auto& x : order) x = c.transpose[x];
        c.transpose = order;
      }
    } else if (name == "bytes" || name == "endian") {
      if (array_to_bytes) bad("two array -> bytes codecs");
      array_to_bytes = true;
      if (auto it = conf.find("endian"); it != conf.end()) {
        if (*it != "little" && *it != "big") bad("bytes endian is not little or big");
        c.big_endian = *it == "big";
      }
    } else if (name == "sharding_indexed") {
      if (array_to_bytes) bad("two array -> bytes codecs");
      array_to_bytes = true;
      Vec permuted = chunk;
      for (std::size_t k = 0; k < c.transpose.size(); ++k) permuted[k] = chunk[c.transpose[k]];
      c.shard = sharding(conf, rank, permuted, depth, bad);
    } else {
      if (!array_to_bytes) bad("codec " + name + " before the array -> bytes codec");
      if (c.shard && c.bytes.size() > 8) bad("too many codecs");
      c.bytes.push_back(bytes_codec(name, conf, bad));
    }
  }
  if (!array_to_bytes) bad("no array -> bytes codec (bytes or sharding_indexed)");
  if (c.bytes.size() > 8) bad("too many codecs");
  return c;
}

const char* v3_type(const std::string& d) {
  if (d == "|b1") return "bool";
  if (d == "<i4") return "int32";
  if (d == "<i8") return "int64";
  if (d == "<f4") return "float32";
  if (d == "<f8") return "float64";
  if (d == "<c8") return "complex64";
  if (d == "<c16") return "complex128";
  return nullptr;
}

json fill_json(const ZarrayMeta& m) {
  auto one = [&](double v) -> json {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    if (m.dtype == "|b1") return v != 0;
    if (m.dtype[1] == 'i') return static_cast<std::int64_t>(v);
    return v;
  };
  if (m.dtype[1] == 'c') return json::array({one(m.fill_real), one(m.fill_imag)});
  return one(m.fill_real);
}

json bytes_json(const BytesCodec& c, int format, std::size_t elem) {
  if (c.id == "blosc") {
    static const char* shuffles[] = {"noshuffle", "shuffle", "bitshuffle"};
    const int sh = c.shuffle < 0 ? (elem == 1 ? 2 : 1) : c.shuffle;
    json j = {{"cname", c.cname}, {"clevel", c.level}, {"blocksize", c.blocksize}};
    if (format == 2) j["shuffle"] = sh, j["id"] = "blosc";
    else j["shuffle"] = shuffles[sh], j["typesize"] = c.typesize ? c.typesize : static_cast<int>(elem);
    return j;
  }
  json j = json::object();
  if (c.id != "crc32c") j["level"] = c.level;
  if (format == 2) j["id"] = c.id;
  if (c.id == "zstd" && format == 3) j["checksum"] = false;
  return j;
}

json chain_json(const ChunkCodecs& c, std::size_t elem) {
  json list = json::array();
  if (!c.transpose.empty()) list.push_back({{"name", "transpose"}, {"configuration", {{"order", c.transpose}}}});
  if (c.shard) {
    const auto& s = *c.shard;
    list.push_back({{"name", "sharding_indexed"},
                    {"configuration",
                     {{"chunk_shape", s.inner},
                      {"codecs", chain_json(s.codecs, elem)},
                      {"index_codecs", chain_json(s.index_codecs, 8)},
                      {"index_location", s.index_at_end ? "end" : "start"}}}});
  } else {
    list.push_back({{"name", "bytes"}, {"configuration", {{"endian", c.big_endian ? "big" : "little"}}}});
  }
  for (const auto& b : c.bytes) {
    json j = {{"name", b.id}};
    if (b.id != "crc32c") j["configuration"] = bytes_json(b, 3, elem);
    list.push_back(j);
  }
  return list;
}

}  // namespace

std::size_t dtype_size(const std::string& d) {
  if (d.size() < 3) return 0;
  const auto n = std::strtoul(d.c_str() + 2, nullptr, 10);
  return n <= 16 ? n : 0;
}
std::size_t dtype_swap_unit(const std::string& d) {
  const std::size_t n = dtype_size(d);
  return d.size() > 1 && d[1] == 'c' ? n / 2 : n;
}

ZarrayMeta parse_zarray(std::string_view text) {
  const Bad bad{".zarray: "};
  const json doc = parse_json(text, bad);
  if (!doc.is_object()) bad("not a JSON object");
  ZarrayMeta m;
  const auto& fmt = member(doc, "zarr_format", bad);
  if (!fmt.is_number() || fmt.get<double>() != 2) bad("zarr_format is not 2");
  m.shape = ints(member(doc, "shape", bad), 0, "\"shape\"", bad);
  m.chunks = ints(member(doc, "chunks", bad), 1, "\"chunks\"", bad);
  check_grid(m, bad);
  const auto& dt = member(doc, "dtype", bad);
  if (!dt.is_string()) bad("dtype is not a string (structured dtypes are not supported)");
  m.dtype = dt.get<std::string>();
  if (m.dtype.size() >= 3 && (m.dtype[0] == '<' || m.dtype[0] == '>' || m.dtype[0] == '|')) {
    m.codecs.big_endian = m.dtype[0] == '>' && dtype_size(m.dtype) > 1;
    m.dtype[0] = dtype_size(m.dtype) == 1 ? '|' : '<';
  }
  const auto& order = member(doc, "order", bad);
  if (order != "C" && order != "F") bad("order is not \"C\" or \"F\"");
  m.order = order.get<std::string>()[0];
  if (m.order == 'F') m.codecs.transpose = reversed_axes(m.shape.size());
  const auto& comp = member(doc, "compressor", bad);
  if (comp.is_object()) {
    auto id = comp.find("id");
    if (id == comp.end() || !id->is_string()) bad("compressor has no \"id\"");
    m.compressor = id->get<std::string>();
    if (*m.compressor == "crc32c") bad("compressor crc32c is not supported");
    m.codecs.bytes.push_back(bytes_codec(*m.compressor, comp, bad));
    if (auto lv = comp.find("level"); lv != comp.end() && lv->is_number_integer()) m.level = lv->get<int>();
  } else if (!comp.is_null()) {
    bad("compressor is neither an object nor null");
  }
  auto f = doc.find("filters");
  if (f != doc.end() && !f->is_null() && !(f->is_array() && f->empty())) bad("filters are not supported");
  if (auto sep = doc.find("dimension_separator"); sep != doc.end()) {
    if (*sep != "." && *sep != "/") bad("dimension_separator is not \".\" or \"/\"");
    m.separator = sep->get<std::string>()[0];
  }
  parse_fill(m, member(doc, "fill_value", bad), bad);
  return m;
}

ZarrayMeta parse_zarr_json(std::string_view text) {
  const Bad bad{"zarr.json: "};
  const json doc = parse_json(text, bad);
  if (!doc.is_object()) bad("not a JSON object");
  ZarrayMeta m;
  m.format = 3;
  const auto& fmt = member(doc, "zarr_format", bad);
  if (!fmt.is_number() || fmt.get<double>() != 3) bad("zarr_format is not 3");
  if (member(doc, "node_type", bad) != "array") bad("node_type is not \"array\" (a group?)");
  m.shape = ints(member(doc, "shape", bad), 0, "\"shape\"", bad);
  const auto& grid = member(doc, "chunk_grid", bad);
  if (!grid.is_object() || member(grid, "name", bad) != "regular") bad("chunk_grid is not \"regular\"");
  m.chunks = ints(member(configuration(grid, bad), "chunk_shape", bad), 1, "chunk_shape", bad);
  check_grid(m, bad);
  const auto& dt = member(doc, "data_type", bad);
  if (!dt.is_string()) bad("data_type is not a string");
  m.dtype = dt.get<std::string>();
  static const std::pair<const char*, const char*> types[] = {{"bool", "|b1"},    {"int32", "<i4"},     {"int64", "<i8"},
                                                              {"float32", "<f4"}, {"float64", "<f8"},   {"complex64", "<c8"},
                                                              {"complex128", "<c16"}};
  for (const auto& [v3, v2] : types)
    if (m.dtype == v3) m.dtype = v2;
  m.separator = '/', m.key_prefix = true;
  if (auto k = doc.find("chunk_key_encoding"); k != doc.end()) {
    if (!k->is_object()) bad("chunk_key_encoding is not an object");
    const auto& name = member(*k, "name", bad);
    if (name != "default" && name != "v2") bad("chunk_key_encoding is not default or v2");
    m.key_prefix = name == "default";
    m.separator = m.key_prefix ? '/' : '.';
    if (auto s = configuration(*k, bad).find("separator"); s != configuration(*k, bad).end()) {
      if (*s != "." && *s != "/") bad("chunk key separator is not \".\" or \"/\"");
      m.separator = s->get<std::string>()[0];
    }
  }
  if (auto st = doc.find("storage_transformers"); st != doc.end() && !(st->is_array() && st->empty()))
    bad("storage_transformers are not supported");
  m.codecs = codec_chain(member(doc, "codecs", bad), m.shape.size(), m.chunks, 0, bad);
  parse_fill(m, member(doc, "fill_value", bad), bad);
  if (auto a = doc.find("attributes"); a != doc.end()) {
    if (!a->is_object()) bad("attributes is not an object");
    m.attributes = a->dump();
  }
  return m;
}

std::string make_zarray(const ZarrayMeta& m) {
  const std::size_t es = dtype_size(m.dtype);
  json j = {{"zarr_format", 2}, {"shape", m.shape}, {"chunks", m.chunks}, {"filters", nullptr},
            {"order", m.codecs.transpose.empty() ? "C" : "F"}, {"dimension_separator", std::string(1, m.separator)},
            {"fill_value", fill_json(m)}};
  std::string dtype = m.dtype;
  if (m.codecs.big_endian && es > 1) dtype[0] = '>';
  j["dtype"] = dtype;
  j["compressor"] = m.codecs.bytes.empty() ? json(nullptr) : bytes_json(m.codecs.bytes[0], 2, es);
  // zarr-python's layout, with arrays on one line ("shape": [10, 6]): easier to read and to grep.
  std::string out = "{";
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string v;
    if (it->is_array()) {
      for (const auto& x : *it) v += (v.empty() ? "" : ", ") + x.dump();
      v = "[" + v + "]";
    } else {
      v = it->dump(4);
      for (std::size_t p = 0; (p = v.find('\n', p)) != std::string::npos; p += 5) v.insert(p + 1, "    ");
    }
    out += (it == j.begin() ? "\n    \"" : ",\n    \"") + it.key() + "\": " + v;
  }
  return out + "\n}";
}

std::string make_zarr_json(const ZarrayMeta& m) {
  const char* type = v3_type(m.dtype);
  if (!type) throw IoError("zarr.json: dtype " + m.dtype + " has no Zarr v3 name");
  json j = {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", m.shape},
            {"data_type", type},
            {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", m.chunks}}}}},
            {"chunk_key_encoding",
             {{"name", m.key_prefix ? "default" : "v2"}, {"configuration", {{"separator", std::string(1, m.separator)}}}}},
            {"fill_value", fill_json(m)},
            {"codecs", chain_json(m.codecs, dtype_size(m.dtype))},
            {"attributes", json::parse(m.attributes)}};
  return j.dump(4);
}

std::string chunk_key(const ZarrayMeta& m, const std::vector<std::int64_t>& idx) {
  std::string s = m.key_prefix ? "c" : "";
  for (std::size_t a = 0; a < idx.size(); ++a) s += (a || m.key_prefix ? std::string(1, m.separator) : "") + std::to_string(idx[a]);
  return s.empty() ? "0" : s;
}

}  // namespace tessera::io
