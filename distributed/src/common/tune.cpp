// The autotuner (tune.hpp): measuring candidates with agreement across ranks, the wisdom file,
// and choose(), which the FFT plans, redistribute and matmul call.
#include "tessera/distributed/tune.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/config.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/settings.hpp"
#if TESSERA_HAVE_NCCL
#include <nccl.h>  // NCCL_VERSION_CODE; it includes cuda_runtime.h (CUDART_VERSION)
#endif

namespace tessera::distributed::tune {
namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}
}  // namespace

// ---- measuring ----

std::string Report::str() const {
  std::string s = operation + ": " + source + " " + (names.empty() ? std::string("?") : choice());
  bool any = false;
  for (double t : times_ms) any = any || t >= 0;
  if (any) {
    s += " (";
    for (std::size_t i = 0; i < names.size(); ++i) {
      s += (i ? ", " : "") + names[i] + " ";
      if (i < times_ms.size() && times_ms[i] >= 0) s += fixed(times_ms[i], 3) + " ms";
      else s += "not timed";
      if (i < runs.size() && runs[i] > 0) s += " x" + std::to_string(runs[i]);
      if (i < notes.size() && !notes[i].empty()) s += " " + notes[i];
    }
    s += ")";
  }
  if (source == "measured") s += " in " + fixed(tuning_ms, 1) + " ms (making plans " + fixed(setup_ms, 1) + " ms)";
  return s;
}

Report measure(const comm::ProcessGroup& g, const std::vector<Candidate>& c, const Measure& m) {
  const int n = static_cast<int>(c.size());
  if (n == 0) throw InvalidArgument("tune::measure: no candidates");
  const double budget = m.budget_ms >= 0 ? m.budget_ms : static_cast<double>(settings().tune_budget_ms);
  const auto start = Clock::now();
  Report r;
  for (const auto& x : c) r.names.push_back(x.name);
  r.times_ms.assign(n, -1.0), r.runs.assign(n, 0), r.notes.assign(n, "");
  r.source = "measured";
  // One run of candidate i, started together on every rank; this rank's milliseconds.
  auto timed = [&](int i, int rep) {
    g.barrier();
    const auto t0 = Clock::now();
    c[i].run();
    const double t = ms_since(t0);
    return m.timer ? m.timer(i, rep, t) : t;
  };
  double spent = 0;  // agreed: the sum of the slowest rank's times (preparing and warm-ups included)
  double best = std::numeric_limits<double>::infinity();  // the best agreed timed run so far
  std::vector<char> alive(n, 0);
  // The screen: preparing, warm-ups and one timed run per candidate while the budget lasts
  // (candidate 0 always); a candidate whose last warm-up is slower than `screen` times the best
  // so far gets no timed run: one run of the slow paths (MPI through the host where ipc is 15x
  // faster) is the most the search spends on them.
  for (int i = 0; i < n; ++i) {
    if (i > 0 && spent >= budget) {
      r.notes[i] = "budget";
      continue;
    }
    double setup = 0, last_warm = 0, prepared = 0;
    if (c[i].prepare) {
      g.barrier();
      const auto t0 = Clock::now();
      c[i].prepare();
      setup = prepared = ms_since(t0);
    }
    const int warmups = c[i].warm ? 0 : m.warmups;
    for (int w = 0; w < warmups; ++w) {
      last_warm = timed(i, -1 - w);
      setup += last_warm;
    }
    // Whether to agree is decided from what every rank has alike (the candidate, the settings),
    // never from a rank's own clock: a rank that skipped the all-reduce would hang the others.
    if (c[i].prepare || warmups > 0) {
      double v[3] = {last_warm, setup, prepared};
      g.all_reduce(v, 3, comm::ReduceOp::max);
      spent += v[1], r.setup_ms += v[2];
      if (i > 0 && warmups > 0 && m.screen > 0 && v[0] > m.screen * best) {
        r.times_ms[i] = v[0], r.notes[i] = "slow warm-up";
        continue;
      }
    }
    const double t = g.all_reduce(timed(i, 0), comm::ReduceOp::max);
    r.times_ms[i] = t, r.runs[i] = 1, spent += t, alive[i] = 1;
    best = std::min(best, t);
  }
  auto prune = [&](double factor) {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i)
      if (alive[i]) best = std::min(best, r.times_ms[i]);
    for (int i = 0; i < n; ++i)
      if (alive[i] && r.times_ms[i] > factor * best) alive[i] = 0, r.notes[i] = "pruned";
  };
  // Far behind after one run: no rounds.
  if (const double first = m.prune_first > 0 ? m.prune_first : m.screen; first > 0) prune(first);
  // Rounds: one timed run of each survivor, one all-reduce of the round's times; pruning from the
  // first round on (one sample each is too few to drop a candidate on: a stray slow run).
  for (int rep = 1; rep < m.repetitions; ++rep) {
    std::vector<int> live;
    double round = 0;
    for (int i = 0; i < n; ++i)
      if (alive[i]) live.push_back(i), round += r.times_ms[i];
    if (live.size() < 2 || spent + round > budget) break;  // agreed values: every rank stops here
    std::vector<double> v;
    for (int i : live) v.push_back(timed(i, rep));
    g.all_reduce(v.data(), v.size(), comm::ReduceOp::max);
    for (std::size_t k = 0; k < live.size(); ++k) {
      const int i = live[k];
      r.times_ms[i] = std::min(r.times_ms[i], v[k]), ++r.runs[i], spent += v[k];
    }
    prune(m.prune);
  }
  // The winner, from agreed times only: the lowest index within 1% of the fastest.
  best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i)
    if (r.runs[i] > 0) best = std::min(best, r.times_ms[i]);
  for (int i = 0; i < n; ++i)
    if (r.runs[i] > 0 && r.times_ms[i] <= best * 1.01) {
      r.chosen = i;
      break;
    }
  r.tuning_ms = g.all_reduce(ms_since(start), comm::ReduceOp::max);
  return r;
}

// ---- keys ----

std::string Key::str() const {
  const json j = {{"device", device},     {"gpus_per_node", gpus_per_node}, {"ranks_per_node", ranks_per_node},
                  {"ranks", ranks},       {"nodes", nodes},                 {"operation", operation},
                  {"shape", shape},       {"dtype", dtype},                 {"layouts", layouts},
                  {"versions", versions}};
  return j.dump();  // objects are sorted by name: one text per key
}

namespace {
std::string versions() {
  std::string v = std::string("tessera ") + TESSERA_VERSION_STRING;
#if TESSERA_HAVE_NCCL
  v += ", nccl " + std::to_string(NCCL_VERSION_CODE);
#ifdef CUDART_VERSION
  v += ", cuda " + std::to_string(CUDART_VERSION);
#endif
#endif
  return v;
}
}  // namespace

Key key_for(const comm::ProcessGroup& g, Device d, std::string operation, std::vector<long long> shape,
            std::string dtype, std::string layouts) {
  Key k;
  {  // asked once per device (a CUDA device's properties are not free)
    static std::mutex mu;
    static std::map<std::string, std::string> described;
    std::lock_guard lock(mu);
    auto it = described.find(d.str());
    if (it == described.end()) it = described.emplace(d.str(), device_description(d)).first;
    k.device = it->second;
  }
  k.gpus_per_node = d.is_cuda() ? cuda_device_count() : 0;
  k.ranks_per_node = g.local_size();
  k.ranks = g.size();
  // Not collective: the ranks over those on rank 0's node, rounded up (exact where nodes hold
  // equal numbers of ranks, as launchers place them).
  k.nodes = (g.size() + std::max(1, g.local_size()) - 1) / std::max(1, g.local_size());
  k.operation = std::move(operation);
  k.shape = std::move(shape);
  k.dtype = std::move(dtype);
  k.layouts = std::move(layouts);
  k.versions = versions();
  return k;
}

// ---- the wisdom file ----

namespace {
constexpr const char* kFormat = "tessera-wisdom";
constexpr int kVersion = 1;

void warn_once(const std::string& path, const std::string& why) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard lock(mu);
  if (!warned.insert(path).second) return;
  std::fprintf(stderr, "tessera: warning: wisdom file %s ignored: %s\n", path.c_str(), why.c_str());
}

json entry_json(const Key& k, const Entry& e) {
  json c = json::array();
  for (std::size_t i = 0; i < e.names.size(); ++i)
    c.push_back({{"name", e.names[i]}, {"ms", i < e.times_ms.size() ? e.times_ms[i] : -1.0}});
  return {{"key", json::parse(k.str())}, {"choice", e.choice}, {"candidates", c}};
}

// The entries of a file's text, by key text; nullopt (why in `why`) when it is not wisdom of this format.
std::optional<std::map<std::string, json>> parse_file(const std::string& text, std::string& why) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return why = "not valid JSON", std::nullopt;
  if (!j.is_object() || j.value("format", "") != kFormat) return why = "not a tessera wisdom file", std::nullopt;
  if (j.value("version", 0) != kVersion)
    return why = "format version " + j.value("version", json(0)).dump() + ", not " + std::to_string(kVersion),
           std::nullopt;
  if (!j.contains("entries") || !j["entries"].is_object()) return why = "no entries object", std::nullopt;
  std::map<std::string, json> out;
  for (auto& [key, e] : j["entries"].items()) {
    if (!e.is_object() || !e.contains("choice") || !e["choice"].is_string() || !e.contains("candidates") ||
        !e["candidates"].is_array())
      return why = "a damaged entry", std::nullopt;
    out[key] = e;
  }
  return out;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// An advisory lock on path + ".lock" for as long as it lives (flock: between processes and
// between the open file descriptions of threads alike).
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) ::close(fd_), fd_ = -1;
  }
  ~FileLock() {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN), ::close(fd_);
  }
  bool held() const { return fd_ >= 0; }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};
}  // namespace

struct Wisdom::Data {
  mutable std::mutex mu;
  std::map<std::string, json> entries;
};

Wisdom::Wisdom(std::string path) : path_(std::move(path)), data_(std::make_shared<Data>()) {}

void Wisdom::load() {
  std::map<std::string, json> got;
  if (!path_.empty()) {
    if (auto text = read_text(path_)) {
      std::string why;
      if (auto e = parse_file(*text, why)) got = std::move(*e);
      else warn_once(path_, why);
    }
  }
  std::lock_guard lock(data_->mu);
  data_->entries = std::move(got);
}

std::optional<Entry> Wisdom::find(const Key& k) const {
  std::lock_guard lock(data_->mu);
  auto it = data_->entries.find(k.str());
  if (it == data_->entries.end()) return std::nullopt;
  Entry e;
  e.choice = it->second["choice"].get<std::string>();
  for (const auto& c : it->second["candidates"]) {
    e.names.push_back(c.value("name", ""));
    e.times_ms.push_back(c.value("ms", -1.0));
  }
  return e;
}

std::size_t Wisdom::size() const {
  std::lock_guard lock(data_->mu);
  return data_->entries.size();
}

bool Wisdom::store(const Key& k, const Entry& e) {
  const json mine = entry_json(k, e);
  {
    std::lock_guard lock(data_->mu);
    data_->entries[k.str()] = mine;
  }
  if (path_.empty()) return true;
  std::error_code ec;
  const fs::path p(path_);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  FileLock lock(path_);
  if (!lock.held()) return warn_once(path_ + " (write)", "cannot lock " + path_ + ".lock"), false;
  // What is on disk now (another job may have added to it since we read it), plus ours.
  std::map<std::string, json> merged;
  if (auto text = read_text(path_)) {
    std::string why;
    if (auto got = parse_file(*text, why)) merged = std::move(*got);
    else warn_once(path_, why + " (replaced)");
  }
  {
    std::lock_guard l(data_->mu);
    for (const auto& [key, v] : data_->entries) merged[key] = v;
    data_->entries = merged;
  }
  json out = {{"format", kFormat}, {"version", kVersion}, {"entries", json::object()}};
  for (const auto& [key, v] : merged) out["entries"][key] = v;
  std::random_device rd;
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    const std::string text = out.dump(1) + "\n";
    if (!f || !f.write(text.data(), static_cast<std::streamsize>(text.size())) || !f.flush()) {
      f.close();
      fs::remove(tmp, ec);
      return warn_once(path_ + " (write)", "cannot write " + tmp), false;
    }
  }
  fs::rename(tmp, path_, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return warn_once(path_ + " (write)", "cannot rename over it: " + ec.message()), false;
  }
  return true;
}

Wisdom& process_wisdom() {
  static std::mutex mu;
  static std::unique_ptr<Wisdom> w;
  std::lock_guard lock(mu);
  const std::string path = settings().wisdom_path();
  if (!w || w->path() != path) {
    w = std::make_unique<Wisdom>(path);
    w->load();
  }
  return *w;
}

// ---- choosing ----

namespace {
std::mutex history_mu;
std::vector<Report> history_;
thread_local bool searching = false;  // inside a search (a candidate's run may choose too)
// Decisions made in this process, by group (its communicator's handle, as the plan caches key
// groups), key, candidates and mode: an operation called again decides with no collective. Every
// rank of a group makes the same calls on it, so all ranks hit or miss together.
std::mutex memo_mu;
std::map<std::string, Report> memo_;
}  // namespace

void record(const comm::ProcessGroup& g, const Report& r) {
  {
    std::lock_guard lock(history_mu);
    if (history_.size() >= 4096) history_.erase(history_.begin(), history_.begin() + 2048);  // the recent ones
    history_.push_back(r);
  }
  if (tessera::settings().verbose && g.rank() == 0) std::fprintf(stderr, "tessera tune: %s\n", r.str().c_str());
}

namespace {
std::string operation_of(const Key& k) {
  std::string s = k.operation + " " + k.dtype + " [";
  for (std::size_t a = 0; a < k.shape.size(); ++a) s += (a ? "," : "") + std::to_string(k.shape[a]);
  return s + "] on " + std::to_string(k.ranks) + (k.ranks == 1 ? " rank" : " ranks");
}
}  // namespace

namespace {
Report choose_with(const comm::ProcessGroup& g, Tune mode, const Key& k, const std::string& rule,
                   const std::string& variant, const std::function<bool(const std::string&)>& usable,
                   const std::function<Report()>& search) {
  Report r;
  r.names = {rule}, r.times_ms = {-1.0}, r.runs = {0}, r.notes = {""};
  r.operation = operation_of(k);
  const std::string memo_key = std::to_string(static_cast<long long>(MPI_Comm_c2f(g.mpi_comm()))) + "\n" +
                               tune_name(mode) + "\n" + settings().wisdom_path() + "\n" + rule + "\n" + variant + "\n" + k.str();
  {
    std::lock_guard lock(memo_mu);
    if (auto it = memo_.find(memo_key); it != memo_.end()) {
      Report again = it->second;
      if (again.source == "measured") again.source = "wisdom", again.tuning_ms = 0;  // remembered
      return again;
    }
  }
  auto remember = [&](const Report& x) {
    std::lock_guard lock(memo_mu);
    memo_[memo_key] = x;
  };
  if (mode == Tune::off) {
    record(g, r), remember(r);
    return r;
  }
  // Rank 0 of g looks the key up and broadcasts the entry (empty: none).
  std::string found;
  if (g.rank() == 0)
    if (auto e = process_wisdom().find(k)) found = entry_json(k, *e).dump();
  g.broadcast(found, 0);
  if (!found.empty()) {
    const json e = json::parse(found);
    const auto choice = e["choice"].get<std::string>();
    if (usable(choice)) {  // a choice that is no longer a candidate is not used
      Report w;
      w.operation = r.operation, w.source = "wisdom";
      for (const auto& c : e["candidates"]) {
        w.names.push_back(c.value("name", "")), w.times_ms.push_back(c.value("ms", -1.0));
        w.runs.push_back(0), w.notes.push_back("");
      }
      const auto at = std::find(w.names.begin(), w.names.end(), choice);
      if (at == w.names.end()) w.names.push_back(choice), w.times_ms.push_back(-1), w.runs.push_back(0), w.notes.push_back("");
      w.chosen = static_cast<int>(std::find(w.names.begin(), w.names.end(), choice) - w.names.begin());
      record(g, w), remember(w);
      return w;
    }
  }
  if (mode == Tune::measure && !searching) {  // choices inside a candidate's run: wisdom, else the rule
    searching = true;
    Report m;
    try {
      m = search();
    } catch (...) {
      searching = false;
      throw;
    }
    searching = false;
    m.operation = r.operation, m.source = "measured";
    if (g.rank() == 0) process_wisdom().store(k, {m.choice(), m.names, m.times_ms});
    record(g, m), remember(m);
    return m;
  }
  record(g, r), remember(r);
  return r;
}
}  // namespace

Report choose(const comm::ProcessGroup& g, Tune mode, const Key& k, const std::string& rule,
              const std::function<bool(const std::string&)>& usable, const std::function<Report()>& search) {
  return choose_with(g, mode, k, rule, "", usable, search);
}

Report choose(const comm::ProcessGroup& g, Tune mode, const Key& k, const std::vector<std::string>& names,
              const std::function<std::vector<Candidate>()>& make, const Measure& m) {
  if (names.empty()) throw InvalidArgument("tune::choose: no candidates");
  if (names.size() == 1) mode = Tune::off;  // nothing to choose
  std::string variant;
  for (const auto& n : names) variant += n + "\t";
  return choose_with(
      g, mode, k, names[0], variant, [&](const std::string& c) { return std::find(names.begin(), names.end(), c) != names.end(); },
      [&] { return measure(g, make(), m); });
}

Report merge(const std::vector<Report>& stages, const std::string& winner) {
  Report r;
  if (!stages.empty()) r.operation = stages[0].operation, r.source = stages[0].source;
  for (const auto& s : stages) {
    r.tuning_ms += s.tuning_ms, r.setup_ms += s.setup_ms;
    for (std::size_t i = 0; i < s.names.size(); ++i) {
      auto at = std::find(r.names.begin(), r.names.end(), s.names[i]);
      if (at == r.names.end()) {
        r.names.push_back(s.names[i]), r.times_ms.push_back(s.times_ms[i]), r.runs.push_back(s.runs[i]);
        r.notes.push_back(s.notes[i]);
        continue;
      }
      const auto j = at - r.names.begin();
      if (s.runs[i] > 0)  // a later stage's time: the one its decision was made on
        r.times_ms[j] = s.times_ms[i], r.runs[j] = s.runs[i], r.notes[j] = s.notes[i];
    }
  }
  auto at = std::find(r.names.begin(), r.names.end(), winner);
  if (at == r.names.end()) r.names.push_back(winner), r.times_ms.push_back(-1), r.runs.push_back(0), r.notes.push_back("");
  r.chosen = static_cast<int>(std::find(r.names.begin(), r.names.end(), winner) - r.names.begin());
  return r;
}

}  // namespace tessera::distributed::tune

namespace tessera::distributed {
std::string candidate_name(const ExchangeOptions& o) {
  return transport_name(o.transport.value_or(Transport::automatic)) + "/" +
         (o.chunks > 0 ? std::to_string(o.chunks) : std::string("auto")) + "/" +
         (!o.taper ? "auto" : *o.taper ? "taper" : "flat");
}
ExchangeOptions exchange_candidate(const std::string& name) {
  const auto bar = name.find('/'), bar2 = bar == std::string::npos ? bar : name.find('/', bar + 1);
  const auto bad = [&] {
    return InvalidArgument("exchange: '" + name + "' is not a candidate name (transport/chunks/taper)");
  };
  if (bar2 == std::string::npos) throw bad();
  const auto t = transport_from_name(name.substr(0, bar));
  if (!t) throw bad();
  ExchangeOptions o;
  o.tune = Tune::off;
  if (*t != Transport::automatic) o.transport = *t;
  const std::string ch = name.substr(bar + 1, bar2 - bar - 1), tp = name.substr(bar2 + 1);
  if (tp == "taper" || tp == "flat") o.taper = tp == "taper";
  else if (tp != "auto") throw bad();
  if (ch != "auto") {
    char* end = nullptr;
    const long k = std::strtol(ch.c_str(), &end, 10);
    if (ch.empty() || *end || k < 1 || k > 1024) throw bad();
    o.chunks = static_cast<int>(k);
  }
  return o;
}
}  // namespace tessera::distributed

namespace tessera::distributed::tune {
std::vector<Report> history() {
  std::lock_guard lock(history_mu);
  return history_;
}
void clear_history() {
  {
    std::lock_guard lock(history_mu);
    history_.clear();
  }
  std::lock_guard lock(memo_mu);
  memo_.clear();
}

}  // namespace tessera::distributed::tune
