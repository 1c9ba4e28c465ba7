// The TESSERA_* variables, owned by their layers: each layer declares its own (name, default,
// accepted values, what it does) beside a Settings value of its own, parses them with the helpers
// below and registers itself here (register_layer, from a static initializer in its settings.cpp).
// environment_value is the one function that reads the environment (a test greps the sources for
// others). A Runtime installs every registered layer's settings at start, so that a bad value fails
// fast on every rank; `tessera_settings` prints them, and docs/settings.md's table is generated
// from the declarations (`tessera_settings --markdown`; a test compares them).
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::config {

using Lookup = std::function<std::optional<std::string>(std::string_view)>;

/// One variable as its layer declares it.
struct Variable {
  std::string name;      ///< TESSERA_...
  std::string fallback;  ///< the default, as the table shows it
  std::string accepted;  ///< the values it takes
  std::string doc;       ///< what it does
};

/// The process environment's value of `name`, nothing when unset.
std::optional<std::string> environment_value(std::string_view name);
/// A lookup over given values instead of the environment (tests, other front ends).
Lookup lookup_of(std::map<std::string, std::string> values);

// ---- parsers: an unset or empty variable gives `fallback`; a bad value throws InvalidArgument
// "invalid setting NAME='value': expected <accepted>" ----
[[noreturn]] void bad(std::string_view name, const std::string& value, const std::string& accepted);
bool parse_bool(const Lookup& get, std::string_view name, bool fallback);
std::int64_t parse_int(const Lookup& get, std::string_view name, std::int64_t fallback, std::int64_t least,
                       const char* accepted);
std::uint64_t parse_count(const Lookup& get, std::string_view name, std::uint64_t fallback, const char* accepted);
double parse_seconds(const Lookup& get, std::string_view name, double fallback);
/// The index of the value among `names` (fallback when unset).
int parse_choice(const Lookup& get, std::string_view name, std::span<const std::string_view> names, int fallback);

/// A layer's settings as the registry sees them.
struct Layer {
  std::string name;                               ///< "local", "comm", "distributed", "io"
  std::function<std::vector<Variable>()> variables;
  std::function<void(const Lookup&)> install;     ///< parses all of them, installs only if all are good
  std::function<std::string()> str;               ///< "NAME=value" lines of the current value
};
/// Adds a layer (layers register once, from their settings.cpp).
void register_layer(Layer layer);
/// The registered layers, bottom first.
std::vector<Layer> layers();
/// Every registered layer read from `get` and installed; throws naming the first bad variable
/// (the layers before it are installed, those after it are not).
void install_all(const Lookup& get = environment_value);
/// "NAME=value" lines of every layer's current settings.
std::string str_all();
/// The markdown table of every layer's variables: | Variable | Layer | Default | Values | Meaning |.
std::string markdown_table();

/// A layer's current settings: installed by install_all or set(), else read from the environment
/// on first use. References stay valid (every value ever installed is kept).
template <class S>
class Current {
 public:
  const S& get() {
    if (const S* s = current_.load(std::memory_order_acquire)) return *s;
    S fresh = S::parse(environment_value);  // may throw; nothing is installed then
    std::lock_guard<std::mutex> lock(mu_);
    if (const S* s = current_.load(std::memory_order_acquire)) return *s;
    return put(std::move(fresh));
  }
  void set(const S& s) {
    std::lock_guard<std::mutex> lock(mu_);
    put(s);
  }

 private:
  const S& put(S s) {
    kept_.push_back(std::move(s));
    current_.store(&kept_.back(), std::memory_order_release);
    return kept_.back();
  }
  std::mutex mu_;
  std::deque<S> kept_;
  std::atomic<const S*> current_{nullptr};
};

/// The current settings of the layer whose Settings type is S (S::parse, S::variables, S::str),
/// registered under `layer` on first use: each layer calls it once from a static initializer of
/// its settings.cpp (so that a Runtime's install_all sees it) and from its settings()/set_settings().
template <class S>
Current<S>& layer(const char* name) {
  static Current<S>* const current = [name] {
    auto* c = new Current<S>();  // never destroyed: settings are read until exit
    register_layer({name, &S::variables, [c](const Lookup& get) { c->set(S::parse(get)); },
                    [c] { return c->get().str(); }});
    return c;
  }();
  return *current;
}

}  // namespace tessera::config
