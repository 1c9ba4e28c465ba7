#include "tessera/distributed/settings.hpp"
#include "tessera/distributed/consistency.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "tessera/local/settings.hpp"

namespace tessera::distributed {

namespace {
// -1: as settings().check (TESSERA_CHECK); else set_consistency_checks' 0/1.
std::atomic<int> checks_state{-1};

// FNV-1a, 64 bits: stable across processes and builds (std::hash is not).
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Each rank's description travels in a fixed-size record on the mismatch path.
constexpr std::size_t kRecord = 480;

std::string ranks_str(const std::vector<int>& ranks) {
  std::string s = ranks.size() > 1 ? "ranks " : "rank ";
  for (std::size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  return s;
}
}  // namespace

void set_consistency_checks(bool on) { checks_state.store(on ? 1 : 0, std::memory_order_relaxed); }

bool consistency_checks() noexcept {
  const int s = checks_state.load(std::memory_order_relaxed);
  if (s >= 0) return s == 1;
  try {
    return distributed::settings().check;
  } catch (...) {  // a bad setting is reported by the Runtime, not here
    return false;
  }
}

CallSignature::CallSignature(std::string_view op, DType t, const Device& d) : op_(op) {
  text_ = op_ + "<" + dtype_name(t) + "> on " + (d.is_cuda() ? "cuda" : "host");
}

CallSignature& CallSignature::add(std::string_view key, std::string_view value) {
  text_ += ", ";
  text_ += key;
  text_ += " ";
  text_ += value;
  return *this;
}

CallSignature& CallSignature::add(std::string_view key, long long value) { return add(key, std::to_string(value)); }

std::uint64_t CallSignature::hash() const noexcept { return fnv1a(text_); }

int& CheckScope::depth() noexcept {
  thread_local int d = 0;
  return d;
}

void check_consistent(const comm::ProcessGroup& g, const CallSignature& s) {
  // min of {h, ~h} gives the least hash and the complement of the greatest: one all-reduce.
  const auto h = static_cast<std::int64_t>(s.hash());
  std::int64_t mm[2] = {h, ~h};
  g.all_reduce(mm, 2, comm::ReduceOp::min);
  if (mm[0] == ~mm[1]) return;

  // Mismatch: gather every rank's description and group the ranks by it.
  const std::size_t words = kRecord / sizeof(std::int64_t);
  std::vector<std::int64_t> mine(words, 0), all(words * g.size(), 0);
  std::memcpy(mine.data(), s.text().data(), std::min(s.text().size(), kRecord - 1));
  g.all_gather(mine.data(), all.data(), words, DType::int64, Stream::default_for(Device::host()));
  std::map<std::string, std::vector<int>> by_text;
  std::vector<std::string> order;
  for (int r = 0; r < g.size(); ++r) {
    const char* p = reinterpret_cast<const char*>(all.data() + r * words);
    std::string t(p, strnlen(p, kRecord));
    if (by_text.find(t) == by_text.end()) order.push_back(t);
    by_text[t].push_back(r);
  }
  std::string msg = "consistency check failed in " + s.op() + ": the " + std::to_string(g.size()) +
                    " ranks of the group called different operations or arguments: ";
  for (std::size_t i = 0; i < order.size(); ++i)
    msg += (i ? "; " : "") + ranks_str(by_text[order[i]]) + ": " + order[i];
  throw ConsistencyError(msg);
}

}  // namespace tessera::distributed
