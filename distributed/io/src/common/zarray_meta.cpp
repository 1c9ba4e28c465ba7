// `.zarray` parsing and validation (detail/zarray_meta.hpp): no MPI, no CUDA, fuzzed by tests/fuzz.
#include "../detail/zarray_meta.hpp"

#include <cmath>

#include "../detail/zarr_json.hpp"

namespace tessera::io {

ZarrayMeta parse_zarray(std::string_view text) {
  detail::Json doc;
  try {
    doc = detail::JsonParser(text).parse_document();
  } catch (const std::runtime_error& e) {
    throw IoError(std::string(".zarray: ") + e.what());
  }
  auto bad = [](const std::string& what) { throw IoError(".zarray: " + what); };
  if (doc.kind != detail::Json::object) bad("not a JSON object");
  auto get = [&](const char* key) -> const detail::Json& {
    auto it = doc.members.find(key);
    if (it == doc.members.end()) bad(std::string("missing key \"") + key + "\"");
    return it->second;
  };
  auto ints = [&](const char* key, std::int64_t min) {
    const auto& v = get(key);
    if (v.kind != detail::Json::array) bad(std::string("\"") + key + "\" is not an array");
    std::vector<std::int64_t> r;
    for (const auto& x : v.items) {
      if (x.kind != detail::Json::number || !x.integral || x.num < static_cast<double>(min) || x.num > 9e15)
        bad(std::string("\"") + key + "\" holds a value that is not an integer >= " + std::to_string(min));
      r.push_back(static_cast<std::int64_t>(x.num));
    }
    return r;
  };
  ZarrayMeta m;
  const auto& fmt = get("zarr_format");
  if (fmt.kind != detail::Json::number || fmt.num != 2) bad("zarr_format is not 2");
  m.shape = ints("shape", 0);
  m.chunks = ints("chunks", 1);
  if (m.shape.size() != m.chunks.size())
    bad("shape has " + std::to_string(m.shape.size()) + " axes but chunks " + std::to_string(m.chunks.size()));
  // The element count of one chunk must fit (a reader allocates one chunk's bytes).
  double chunk_elems = 1;
  for (auto c : m.chunks) chunk_elems *= static_cast<double>(c);
  if (chunk_elems > 1e15) bad("chunks of " + std::to_string(chunk_elems) + " elements are too large");
  const auto& dt = get("dtype");
  if (dt.kind != detail::Json::string) bad("dtype is not a string (structured dtypes are not supported)");
  m.dtype = dt.str;
  const auto& order = get("order");
  if (order.kind != detail::Json::string || (order.str != "C" && order.str != "F")) bad("order is not \"C\" or \"F\"");
  m.order = order.str[0];
  const auto& comp = get("compressor");
  if (comp.kind == detail::Json::object) {
    auto id = comp.members.find("id");
    if (id == comp.members.end() || id->second.kind != detail::Json::string) bad("compressor has no \"id\"");
    m.compressor = id->second.str;
    auto lv = comp.members.find("level");
    if (lv != comp.members.end() && lv->second.kind == detail::Json::number) {
      if (!lv->second.integral || std::fabs(lv->second.num) > 1e6) bad("compressor level is not a small integer");
      m.level = static_cast<int>(lv->second.num);
    }
  } else if (comp.kind != detail::Json::null) {
    bad("compressor is neither an object nor null");
  }
  auto f = doc.members.find("filters");
  if (f != doc.members.end() && f->second.kind != detail::Json::null &&
      !(f->second.kind == detail::Json::array && f->second.items.empty()))
    bad("filters are not supported");
  auto sep = doc.members.find("dimension_separator");
  if (sep != doc.members.end()) {
    if (sep->second.kind != detail::Json::string || (sep->second.str != "." && sep->second.str != "/"))
      bad("dimension_separator is not \".\" or \"/\"");
    m.separator = sep->second.str[0];
  }
  const auto& fv = get("fill_value");
  auto scalar = [&](const detail::Json& v) -> double {
    if (v.kind == detail::Json::number) return v.num;
    if (v.kind == detail::Json::boolean) return v.b ? 1 : 0;
    if (v.kind == detail::Json::null) return 0;
    if (v.kind == detail::Json::string) {
      if (v.str == "NaN") return NAN;
      if (v.str == "Infinity") return INFINITY;
      if (v.str == "-Infinity") return -INFINITY;
    }
    bad("unsupported fill_value");
    return 0;
  };
  if (fv.kind == detail::Json::array) {
    if (fv.items.size() != 2) bad("complex fill_value is not [real, imag]");
    m.fill_real = scalar(fv.items[0]), m.fill_imag = scalar(fv.items[1]);
  } else {
    m.fill_real = scalar(fv);
  }
  return m;
}

}  // namespace tessera::io
