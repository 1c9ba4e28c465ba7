// The settings registry and parsers (config.hpp); the one place that reads the environment.
#include "tessera/local/config.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <sstream>

#include "tessera/local/error.hpp"

namespace tessera::config {

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Layer>& registry() {
  static auto* v = new std::vector<Layer>();  // never destroyed: layers may be read at exit
  return *v;
}
// The registry's order: the floors bottom up, whatever order the libraries were loaded in.
int floor_of(const std::string& layer) {
  static const std::string order[] = {"local", "comm", "distributed", "io"};
  const auto* it = std::find(std::begin(order), std::end(order), layer);
  return static_cast<int>(it - std::begin(order));
}
}  // namespace

std::optional<std::string> environment_value(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

Lookup lookup_of(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    const auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

void bad(std::string_view name, const std::string& value, const std::string& accepted) {
  throw InvalidArgument("invalid setting " + std::string(name) + "='" + value + "': expected " + accepted);
}

bool parse_bool(const Lookup& get, std::string_view name, bool fallback) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  if (*v == "1" || *v == "true" || *v == "on" || *v == "yes") return true;
  if (*v == "0" || *v == "false" || *v == "off" || *v == "no") return false;
  bad(name, *v, "0, 1, true, false, on, off, yes or no");
}

std::int64_t parse_int(const Lookup& get, std::string_view name, std::int64_t fallback, std::int64_t least,
                       const char* accepted) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  std::int64_t out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size() || out < least) bad(name, *v, accepted);
  return out;
}

std::uint64_t parse_count(const Lookup& get, std::string_view name, std::uint64_t fallback, const char* accepted) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  std::uint64_t out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size()) bad(name, *v, accepted);
  return out;
}

double parse_seconds(const Lookup& get, std::string_view name, double fallback) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (end != v->c_str() + v->size() || !(d > 0) || d > 1e9) bad(name, *v, "a number of seconds > 0");
  return d;
}

int parse_choice(const Lookup& get, std::string_view name, std::span<const std::string_view> names, int fallback) {
  const auto v = get(name);
  if (!v || v->empty()) return fallback;
  const auto it = std::find(names.begin(), names.end(), std::string_view(*v));
  if (it != names.end()) return static_cast<int>(it - names.begin());
  std::string accepted;
  for (std::size_t i = 0; i < names.size(); ++i)
    accepted += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  bad(name, *v, accepted);
}

void register_layer(Layer layer) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& r = registry();
  for (const auto& l : r)
    if (l.name == layer.name) return;  // a library loaded twice (dlopen) registers once
  const auto at = std::find_if(r.begin(), r.end(), [&](const Layer& l) { return floor_of(l.name) > floor_of(layer.name); });
  r.insert(at, std::move(layer));
}

std::vector<Layer> layers() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry();
}

void install_all(const Lookup& get) {
  for (const auto& l : layers()) l.install(get);
}

std::string str_all() {
  std::string s;
  for (const auto& l : layers()) s += l.str();
  return s;
}

namespace {
std::string cell(std::string s) {
  for (std::size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}
}  // namespace

std::string markdown_table() {
  std::ostringstream o;
  o << "| Variable | Layer | Default | Values | Meaning |\n|---|---|---|---|---|\n";
  for (const auto& l : layers())
    for (const auto& v : l.variables())
      o << "| `" << v.name << "` | " << l.name << " | " << (v.fallback.empty() ? "" : "`" + v.fallback + "`") << " | "
        << cell(v.accepted) << " | " << cell(v.doc) << " |\n";
  return o.str();
}

}  // namespace tessera::config
