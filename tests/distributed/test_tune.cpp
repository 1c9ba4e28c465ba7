// The autotuner (tune.hpp) and the fixed rule (rule.hpp): agreement under skewed per-rank
// timings (injected, never slept), pruning and the budget, wisdom round trips, key mismatches,
// corrupt and concurrently written wisdom files, TESSERA_TUNE=off giving the rule's choices, and
// tuned FFT plans, redistributes and products checked against serial references.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../device_test.hpp"
#include "dist_test_util.hpp"
#include "fft_test_util.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/distributed/linalg.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/distributed/rule.hpp"
#include "tessera/distributed/tune.hpp"
#include "tessera/fft/fft.hpp"

namespace {
namespace ts = tessera;
namespace td = tessera::distributed;
namespace tune = tessera::distributed::tune;
namespace fft = tessera::fft;
namespace fs = std::filesystem;
using td::Transport;
using td::Tune;
using ts::local::index_t;

const ts::comm::ProcessGroup& world() { return ts::testing::world(); }

// A directory of this test program's, the same path on every rank (rank 0's pid), made empty.
std::string shared_dir(const std::string& name) {
  std::string base = (fs::temp_directory_path() / ("tessera_test_tune_" + std::to_string(::getpid()))).string();
  world().broadcast(base, 0);
  const std::string dir = base + "/" + name;
  if (world().rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  world().barrier();
  return dir;
}

// Settings changed for one test, restored after it (and the tuner's history cleared).
class SettingsScope {
 public:
  SettingsScope(Tune mode, std::string wisdom) : saved_(td::settings()) {
    auto s = saved_;
    s.tune = mode;
    s.wisdom = std::move(wisdom);
    td::set_settings(s);
    tune::clear_history();
    fft::clear_plan_cache();
  }
  ~SettingsScope() {
    td::set_settings(saved_);
    fft::clear_plan_cache();
  }

 private:
  td::Settings saved_;
};

// Candidates that do nothing but count their runs.
struct Counted {
  std::vector<int> calls;
  std::vector<tune::Candidate> candidates;
  explicit Counted(int n) : calls(n, 0) {
    for (int i = 0; i < n; ++i) candidates.push_back({"c" + std::to_string(i), [this, i] { ++calls[i]; }});
  }
};

tune::Key some_key(const std::string& op = "test") {
  tune::Key k;
  k.device = "Test GPU (cc 9.0, 141 GiB)";
  k.gpus_per_node = 4, k.ranks_per_node = 4, k.ranks = 4, k.nodes = 1;
  k.operation = op, k.shape = {64, 64, 64}, k.dtype = "complex64", k.layouts = "slabs";
  k.versions = "tessera 0.1.0, nccl 22803, cuda 13000";
  return k;
}

bool same_on_all_ranks(int v) {
  return world().all_reduce(v, ts::comm::ReduceOp::min) == world().all_reduce(v, ts::comm::ReduceOp::max);
}

}  // namespace

// ---- the fixed rule: today's choices, in one place ----

TEST(TuneRule, TheFixedRuleIsTodaysRule) {
  EXPECT_EQ(td::rule::exchange_chunks(true), 8);
  EXPECT_EQ(td::rule::exchange_chunks(false), 1);
  EXPECT_EQ(td::rule::fft_chunks(true, std::uint64_t{64} << 20), 4);
  EXPECT_EQ(td::rule::fft_chunks(true, std::uint64_t{512} << 20), 8);
  EXPECT_EQ(td::rule::fft_chunks(false, std::uint64_t{512} << 20), 1);
  td::rule::TransportFacts f;
  f.global_bytes = std::size_t{1} << 30;
  EXPECT_EQ(td::rule::transport(f), Transport::nccl);  // host
  f.host = false, f.ranks = 2, f.one_node = true, f.own_gpus = true;
  EXPECT_EQ(td::rule::transport(f), Transport::ipc);
  f.ranks = 4;
  EXPECT_EQ(td::rule::transport(f), Transport::nccl);  // no windows
  f.symmetric_windows = true;
  EXPECT_EQ(td::rule::transport(f), Transport::nccl_window);
  f.global_bytes = 4 * 4 * (td::rule::ipc_min_pair_bytes - 1);
  EXPECT_EQ(td::rule::transport(f), Transport::nccl);  // small
  f.global_bytes = std::size_t{1} << 30, f.one_node = false;
  EXPECT_EQ(td::rule::transport(f), Transport::nccl);  // several nodes
  f.one_node = true, f.own_gpus = false;
  EXPECT_EQ(td::rule::transport(f), Transport::nccl);  // NCCL off: MPI
  f.shared_gpus = true;
  EXPECT_EQ(td::rule::transport(f), Transport::ipc);  // ranks share a GPU: not MPI through the host
  f.global_bytes = 4 * 4 * (td::rule::ipc_min_pair_bytes - 1);
  EXPECT_EQ(td::rule::transport(f), Transport::nccl);  // small: the group's own
  EXPECT_TRUE(td::rule::fft_pencil(3, 8, 4));
  EXPECT_FALSE(td::rule::fft_pencil(3, 4, 4));
  EXPECT_FALSE(td::rule::fft_pencil(2, 8, 4));
  EXPECT_EQ(td::rule::summa_panel(5000), 1024);
  EXPECT_EQ(td::rule::summa_panel(300), 300);
  EXPECT_EQ(td::rule::summa_grid(4), (std::vector<int>{2, 2}));
  EXPECT_EQ(td::rule::summa_grid(6), (std::vector<int>{3, 2}));
}

TEST(TuneSettings, ParsedAndValidated) {
  const auto d = td::Settings::parse(ts::config::lookup_of({}));
  EXPECT_EQ(d.tune, Tune::wisdom);
  EXPECT_EQ(d.tune_budget_ms, 2000);
  EXPECT_FALSE(d.wisdom.has_value());
  const auto s = td::Settings::parse(ts::config::lookup_of(
      {{"TESSERA_TUNE", "measure"}, {"TESSERA_TUNE_BUDGET_MS", "50"}, {"TESSERA_WISDOM", "/x/w.json"}}));
  EXPECT_EQ(s.tune, Tune::measure);
  EXPECT_EQ(s.tune_budget_ms, 50);
  EXPECT_EQ(s.wisdom_path(), "/x/w.json");
  EXPECT_EQ(td::Settings::parse(ts::config::lookup_of({{"TESSERA_WISDOM", ""}})).wisdom_path(), "");
  EXPECT_THROW(td::Settings::parse(ts::config::lookup_of({{"TESSERA_TUNE", "fast"}})), ts::InvalidArgument);
  EXPECT_THROW(td::Settings::parse(ts::config::lookup_of({{"TESSERA_TUNE_BUDGET_MS", "-1"}})), ts::InvalidArgument);
}

// ---- measuring ----

// Every rank sees a different candidate as fast (its own number), with rank-dependent noise:
// alone, each would pick another one. The slowest rank's time decides, so all pick the same.
TEST(TuneMeasure, SkewedPerRankTimingsStillAgree) {
  const int P = world().size(), me = world().rank(), n = 4;
  const double base[n] = {3.0, 2.0, 2.5, 4.0};
  auto t = [&](int c, int rank, int rep) {
    const double noise = 0.01 * ((rank * 7 + rep * 3 + c) % 5);
    return (c == rank % n ? 0.1 : base[c]) * (1 + rank) + noise;
  };
  Counted cs(n);
  tune::Measure m;
  m.budget_ms = 1e9, m.prune = 100, m.screen = 0, m.repetitions = 3;
  m.timer = [&](int c, int rep, double) { return t(c, me, rep); };
  const auto r = tune::measure(world(), cs.candidates, m);
  EXPECT_TRUE(same_on_all_ranks(r.chosen)) << r.str();
  // The expected winner: the best repetition of the slowest rank's times, the lowest index within 1%.
  std::vector<double> worst(n, 1e300);
  for (int c = 0; c < n; ++c)
    for (int rep = 0; rep < 3; ++rep) {
      double mx = 0;
      for (int q = 0; q < P; ++q) mx = std::max(mx, t(c, q, rep));
      worst[c] = std::min(worst[c], mx);
    }
  const double best = *std::min_element(worst.begin(), worst.end());
  int want = 0;
  while (worst[want] > best * 1.01) ++want;
  EXPECT_EQ(r.chosen, want) << r.str();
  for (int c = 0; c < n; ++c) EXPECT_DOUBLE_EQ(r.times_ms[c], worst[c]) << c;
}

TEST(TuneMeasure, SlowCandidatesArePrunedAfterTheFirstRound) {
  Counted cs(3);
  tune::Measure m;
  m.warmups = 1, m.repetitions = 4, m.prune = 1.5, m.budget_ms = 1e9;
  m.timer = [&](int c, int, double) { return c == 1 ? 2.0 : c == 2 ? 1.2 : 1.0; };  // 2x: below the screen's 3x
  const auto r = tune::measure(world(), cs.candidates, m);
  EXPECT_EQ(r.chosen, 0);
  EXPECT_EQ(cs.calls[1], 3) << "a warm-up, the screen and the first round, then dropped";
  EXPECT_EQ(r.notes[1], "pruned");
  EXPECT_EQ(cs.calls[0], 1 + 4);
  EXPECT_EQ(cs.calls[2], 1 + 4);
  EXPECT_EQ(r.runs[0], 4);
  EXPECT_EQ(r.runs[1], 2);
}

// A candidate far behind the best stops after its warm-up; preparing is counted in the budget
// but not compared, and the first candidate (the rule's) is always timed.
TEST(TuneMeasure, FarSlowerWarmUpsGetNoTimedRun) {
  Counted cs(4);
  std::vector<int> prepared(4, 0);
  for (int i = 0; i < 4; ++i) cs.candidates[i].prepare = [&prepared, i] { ++prepared[i]; };
  tune::Measure m;
  m.warmups = 1, m.repetitions = 3, m.prune = 1.5, m.screen = 3.0, m.budget_ms = 1e9;
  // Candidate 1 is 15x the best (the MPI path where ipc is fast); candidate 2's warm-up is 2.5x,
  // under the screen, but its timed runs are fast; candidate 3 is the best.
  m.timer = [&](int c, int rep, double) {
    if (c == 1) return 15.0;
    if (c == 2) return rep < 0 ? 2.5 : 1.1;
    return c == 3 ? 1.0 : 1.2;
  };
  const auto r = tune::measure(world(), cs.candidates, m);
  EXPECT_EQ(prepared, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(cs.calls[1], 1) << "its warm-up only";
  EXPECT_EQ(r.runs[1], 0);
  EXPECT_EQ(r.notes[1], "slow warm-up");
  EXPECT_DOUBLE_EQ(r.times_ms[1], 15.0) << "the warm-up's time, shown";
  EXPECT_GE(r.runs[2], 1) << "2.5x is within the screen";
  EXPECT_EQ(r.chosen, 3) << r.str();
  // The first candidate is timed whatever its warm-up.
  Counted slow_rule(2);
  m.timer = [&](int c, int, double) { return c == 0 ? 50.0 : 1.0; };
  const auto z = tune::measure(world(), slow_rule.candidates, m);
  EXPECT_GE(z.runs[0], 1);
  EXPECT_EQ(z.chosen, 1);
  // A fast warm-up but a timed run past the screen: dropped after that one run.
  Counted late(2);
  m.timer = [&](int c, int rep, double) { return c == 1 && rep >= 0 ? 5.0 : 1.0; };
  const auto l = tune::measure(world(), late.candidates, m);
  EXPECT_EQ(l.runs[1], 1);
  EXPECT_EQ(l.notes[1], "pruned");
  // prune_first: a candidate 1.6x the best after one run is out at 1.3, in at the screen's 3.
  Counted first(2);
  m.timer = [&](int c, int, double) { return c == 1 ? 1.6 : 1.0; };
  m.prune_first = 1.3;
  const auto f1 = tune::measure(world(), first.candidates, m);
  EXPECT_EQ(f1.runs[1], 1);
  EXPECT_EQ(f1.notes[1], "pruned");
  m.prune_first = 0;
  Counted second(2);
  EXPECT_EQ(tune::measure(world(), second.candidates, m).runs[1], 2) << "a round, then pruned at 1.5x";
  // screen <= 0: never screened.
  Counted unscreened(2);
  m.screen = 0, m.timer = [&](int c, int, double) { return c == 1 ? 15.0 : 1.0; };
  const auto u = tune::measure(world(), unscreened.candidates, m);
  EXPECT_EQ(u.runs[1], 2) << "the screen and the first round, then pruned";
  EXPECT_EQ(u.notes[1], "pruned");
}

TEST(TuneMeasure, TheBudgetBoundsTheSearch) {
  Counted cs(4);
  tune::Measure m;
  m.warmups = 1, m.repetitions = 3, m.budget_ms = 25;
  m.timer = [&](int, int, double) { return 10.0; };  // a screen costs 20 agreed ms
  const auto r = tune::measure(world(), cs.candidates, m);
  EXPECT_EQ(cs.calls[0], 2);
  EXPECT_EQ(cs.calls[1], 2);  // started with 20 < 25 spent
  EXPECT_EQ(cs.calls[2], 0);
  EXPECT_EQ(cs.calls[3], 0);
  EXPECT_EQ(r.notes[2], "budget");
  EXPECT_EQ(r.runs[0], 1) << "no round fits in what is left";
  // The rule's candidate is timed even with no budget at all.
  Counted none(2);
  m.budget_ms = 0;
  const auto z = tune::measure(world(), none.candidates, m);
  EXPECT_EQ(none.calls[0], 2);
  EXPECT_EQ(none.calls[1], 0);
  EXPECT_EQ(z.chosen, 0);
}

TEST(TuneMeasure, TiesGoToTheRule) {
  Counted cs(3);
  tune::Measure m;
  m.budget_ms = 1e9;
  m.timer = [&](int c, int, double) { return c == 0 ? 1.005 : 1.0; };  // within 1%
  EXPECT_EQ(tune::measure(world(), cs.candidates, m).chosen, 0);
}

// ---- wisdom ----

TEST(TuneWisdom, RoundTripAndKeyMismatches) {
  const std::string path = shared_dir("round_trip") + "/r" + std::to_string(world().rank()) + ".json";
  const tune::Key k = some_key();
  {
    tune::Wisdom w(path);
    w.load();
    EXPECT_EQ(w.size(), 0u);
    EXPECT_TRUE(w.store(k, {"c1", {"c0", "c1"}, {2.0, 1.0}}));
  }
  tune::Wisdom w(path);
  w.load();
  const auto e = w.find(k);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->choice, "c1");
  EXPECT_EQ(e->names, (std::vector<std::string>{"c0", "c1"}));
  EXPECT_EQ(e->times_ms, (std::vector<double>{2.0, 1.0}));
  auto other = k;
  other.device = "Other GPU";
  EXPECT_FALSE(w.find(other)) << "another device model";
  other = k, other.ranks = 8;
  EXPECT_FALSE(w.find(other)) << "another rank count";
  other = k, other.nodes = 2;
  EXPECT_FALSE(w.find(other)) << "another node count";
  other = k, other.versions = "tessera 0.2.0, nccl 22803, cuda 13000";
  EXPECT_FALSE(w.find(other)) << "another version";
  other = k, other.shape = {64, 64, 32};
  EXPECT_FALSE(w.find(other)) << "another shape";
}

TEST(TuneWisdom, ChooseMeasuresOnceThenRemembers) {
  const std::string path = shared_dir("choose") + "/wisdom.json";
  SettingsScope scope(Tune::measure, path);
  const auto k = tune::key_for(world(), ts::Device::host(), "test", {8}, "float64", "x");
  const std::vector<std::string> names{"c0", "c1", "c2"};
  int made = 0;
  Counted cs(3);
  tune::Measure m;
  m.budget_ms = 1e9;
  m.timer = [&](int c, int, double) { return c == 2 ? 0.5 : 1.0; };
  auto make = [&] { return ++made, cs.candidates; };
  const auto r = tune::choose(world(), Tune::measure, k, names, make, m);
  EXPECT_EQ(r.source, "measured");
  EXPECT_EQ(r.choice(), "c2");
  EXPECT_EQ(made, 1);
  // Again: from wisdom (in memory and on disk), nothing run.
  const auto again = tune::choose(world(), Tune::measure, k, names, make, m);
  EXPECT_EQ(again.source, "wisdom");
  EXPECT_EQ(again.choice(), "c2");
  EXPECT_EQ(made, 1);
  EXPECT_EQ(tune::choose(world(), Tune::wisdom, k, names, make, m).choice(), "c2");
  EXPECT_EQ(tune::choose(world(), Tune::off, k, names, make, m).choice(), "c0") << "off: the rule";
  // The file holds it: a fresh reader finds it.
  if (world().rank() == 0) {
    tune::Wisdom w(path);
    w.load();
    ASSERT_TRUE(w.find(k));
    EXPECT_EQ(w.find(k)->choice, "c2");
  }
  // Another key (another operation; another rank count is another key_for): not used.
  auto other = k;
  other.ranks += 1;
  EXPECT_EQ(tune::choose(world(), Tune::wisdom, other, names, make, m).source, "rule");
  // A remembered choice that is no longer a candidate: not used.
  EXPECT_EQ(tune::choose(world(), Tune::wisdom, k, {"c0", "c1"}, make, m).source, "rule");
  EXPECT_EQ(tune::history().size(), 5u) << "the second call decided from memory, with no report";
  // Forgetting the process's decisions: the next call asks the wisdom (a broadcast) and reports.
  tune::clear_history();
  EXPECT_EQ(tune::choose(world(), Tune::measure, k, names, make, m).source, "wisdom");
  EXPECT_EQ(tune::history().size(), 1u);
}

TEST(TuneWisdom, CorruptOrStaleFilesAreIgnoredWithOneWarning) {
  const std::string dir = shared_dir("corrupt") + "/r" + std::to_string(world().rank());
  fs::create_directories(dir);
  const auto k = some_key();
  for (const std::string text : {std::string("{\"format\": \"tessera-wisdom\", \"version\": 1, \"entries\": {"),
                                 std::string("{\"format\": \"tessera-wisdom\", \"version\": 99, \"entries\": {}}"),
                                 std::string("\x01\x02garbage"), std::string("[1, 2, 3]")}) {
    static int count = 0;
    const std::string path = dir + "/w" + std::to_string(count++) + ".json";
    std::ofstream(path) << text;
    ::testing::internal::CaptureStderr();
    tune::Wisdom w(path);
    EXPECT_NO_THROW(w.load());
    EXPECT_NO_THROW(w.load());
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(w.size(), 0u) << text;
    EXPECT_NE(err.find("wisdom file " + path + " ignored"), std::string::npos) << err;
    EXPECT_EQ(err.find("ignored"), err.rfind("ignored")) << "one warning: " << err;
    // Storing replaces it with good wisdom.
    ::testing::internal::CaptureStderr();
    EXPECT_TRUE(w.store(k, {"a", {"a"}, {1.0}}));
    (void)::testing::internal::GetCapturedStderr();
    tune::Wisdom again(path);
    again.load();
    EXPECT_TRUE(again.find(k)) << text;
  }
}

// Writers at once (threads of every rank, and the ranks themselves: processes) on one file: every
// entry survives.
TEST(TuneWisdom, ConcurrentWritersLoseNothing) {
  const std::string path = shared_dir("concurrent") + "/wisdom.json";
  const int threads = 3, each = 8, P = world().size(), me = world().rank();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      tune::Wisdom w(path);  // each its own reader, as separate jobs have
      for (int i = 0; i < each; ++i) {
        auto k = some_key("op r" + std::to_string(me) + " t" + std::to_string(t) + " i" + std::to_string(i));
        w.store(k, {"x", {"x"}, {1.0}});
      }
    });
  for (auto& th : pool) th.join();
  world().barrier();
  tune::Wisdom w(path);
  w.load();
  EXPECT_EQ(w.size(), static_cast<std::size_t>(P * threads * each));
  for (int q = 0; q < P; ++q)
    EXPECT_TRUE(w.find(some_key("op r" + std::to_string(q) + " t2 i7")));
  int leftovers = 0;
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path()))
    leftovers += e.path().string().find(".tmp.") != std::string::npos;
  EXPECT_EQ(leftovers, 0);
}

// ---- wired in: FFT plans, redistribute, matmul ----

template <class K>
class TunedOps : public ts::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(TunedOps, ts::testing::DeviceKinds, ts::testing::DeviceKindNames);

// TESSERA_TUNE=off: the plan the rule makes, exactly (and the default, with no wisdom, the same).
TYPED_TEST(TunedOps, OffGivesTheRulesFftPlan) {
  using namespace td::testing::fft_util;
  const auto d = this->device();
  const int P = world().size();
  const std::string path = shared_dir(std::string("off_") + (d.is_host() ? "host" : "cuda")) + "/wisdom.json";
  for (const td::Index<3> n : {td::Index<3>{8, 6, 5}, td::Index<3>{2, 8, 4}}) {
    const auto lay = td::Layout<3>::block(td::ProcessGrid(world()), n);
    SettingsScope scope(Tune::off, path);
    const auto plan = fft::get_plan<std::complex<double>, 3>(lay, d);
    const auto want = td::rule::fft_pencil(3, P, n[0]) && P > 1 ? fft::Decomposition::pencil : fft::Decomposition::slab;
    EXPECT_EQ(plan->decomposition(), want);
    EXPECT_NE(plan->describe().find(": rule "), std::string::npos) << plan->describe();
    // What off gives is what the same options fixed by hand give.
    fft::Options fixed;
    fixed.decomposition = want;
    fixed.tune = Tune::off;
    const fft::Plan<std::complex<double>, 3> by_hand(lay, d, fixed);
    EXPECT_EQ(plan->output_layout(), by_hand.output_layout());
    // The default (wisdom, none known) gives the rule's plan too.
    fft::Options dflt;
    dflt.tune = Tune::wisdom;
    const fft::Plan<std::complex<double>, 3> w(lay, d, dflt);
    EXPECT_EQ(w.output_layout(), plan->output_layout());
    EXPECT_EQ(w.decomposition(), plan->decomposition());
  }
  // Redistribute and matmul with tuning off take the rule's options as they are: nothing is
  // looked up, measured or reported.
  SettingsScope scope(Tune::off, path);
  const td::ProcessGrid line(world());
  td::Array<double, 2> a(td::Layout<2>(line, {8, 6}, {0, -1}), d), b(td::Layout<2>(line, {6, 4}, {0, -1}), d);
  ts::local::fill(a.interior(), 1.0), ts::local::fill(b.interior(), 2.0);
  (void)td::redistribute(a, td::Layout<2>(line, {8, 6}, {-1, 0}));
  const auto c = td::matmul(a, b);
  for (double v : td::testing::gather_to_host(c)) EXPECT_EQ(v, 12.0);
  EXPECT_TRUE(tune::history().empty());
}

// Measured FFT plans are right (against FFTW), say so, and the next plan comes from wisdom.
TYPED_TEST(TunedOps, MeasuredFftPlanIsCorrectAndRemembered) {
  using namespace td::testing::fft_util;
  using C = std::complex<double>;
  const auto d = this->device();
  SettingsScope scope(Tune::measure, "");  // remembered in memory only
  const td::Index<3> n{8, 8, 6};
  const auto lay = td::Layout<3>::block(td::ProcessGrid(world()), n);
  const auto x0 = pattern<C>(ts::local::shape_size(n));
  const auto x = make<C, 3>(lay, d, x0);
  const auto plan = fft::get_plan<C, 3>(lay, d);
  const std::string how = plan->describe();
  const tune::Report made = tune::history().back();
  EXPECT_EQ(made.str(), how);
  if (world().size() > 1) EXPECT_NE(how.find(": measured "), std::string::npos) << how;
  const auto y = plan->forward(x);
  EXPECT_LE(rel_err(td::testing::gather_to_host(y), serial<C, 3>(x0, n)), tol<C>()) << how;
  const auto back = plan->backward(y);
  EXPECT_LE(rel_err(td::testing::gather_to_host(back), x0), tol<C>()) << how;
  fft::clear_plan_cache();
  const auto again = fft::get_plan<C, 3>(lay, d);
  if (world().size() > 1) {
    EXPECT_NE(again->describe().find(": wisdom "), std::string::npos) << again->describe();
    EXPECT_EQ(tune::history().back().choice(), made.choice());
    EXPECT_GE(made.names.size(), 2u) << how;
  }
  EXPECT_EQ(again->output_layout(), plan->output_layout());
}

// A measured R2C plan (input on a 2-D grid: the pencil's grid is the input's) round-trips.
TYPED_TEST(TunedOps, MeasuredRealFftRoundTrips) {
  using namespace td::testing::fft_util;
  const auto d = this->device();
  SettingsScope scope(Tune::measure, "");
  const td::Index<3> n{6, 8, 10};
  const auto lay = td::Layout<3>::block(td::ProcessGrid::balanced(world(), 2), n);
  const auto x0 = pattern<double>(ts::local::shape_size(n));
  const auto x = make<double, 3>(lay, d, x0);
  const auto plan = fft::get_plan<double, 3>(lay, d);
  if (world().size() > 1) EXPECT_NE(plan->describe().find("fft r2c float64 [6,8,10]"), std::string::npos) << plan->describe();
  const auto back = plan->backward(plan->forward(x));
  EXPECT_EQ(back.layout(), lay);
  EXPECT_LE(rel_err(td::testing::gather_to_host(back), x0), tol<double>()) << plan->describe();
}

TEST(TuneFft, CandidateNames) {
  const auto o = fft::candidate_options("pencil 2x3/nccl-window/8");
  EXPECT_EQ(o.decomposition, fft::Decomposition::pencil);
  EXPECT_EQ(o.grid, (std::vector<int>{2, 3}));
  EXPECT_EQ(o.transport, Transport::nccl_window);
  EXPECT_EQ(o.chunks, 8);
  EXPECT_EQ(o.tune, Tune::off);
  EXPECT_EQ(fft::candidate_name(o), "pencil 2x3/nccl-window/8");
  EXPECT_EQ(fft::candidate_name(fft::candidate_options("slab/auto/auto")), "slab/auto/auto");
  EXPECT_THROW(fft::candidate_options("slab"), ts::InvalidArgument);
  EXPECT_THROW(fft::candidate_options("cube/auto/auto"), ts::InvalidArgument);
  EXPECT_THROW(fft::candidate_options("slab/carrier-pigeon/auto"), ts::InvalidArgument);
}

// Measured redistributes and products give the serial results, and the second call is from wisdom.
TYPED_TEST(TunedOps, MeasuredRedistributeAndMatmulAreCorrect) {
  using namespace td::testing::fft_util;
  const auto d = this->device();
  const int P = world().size();
  SettingsScope scope(Tune::measure, "");
  const td::ProcessGrid line(world());
  const index_t m = 12, k = 9, n = 10;
  const auto av = pattern<double>(m * k, 1), bv = pattern<double>(k * n, 2);
  const auto a = make<double, 2>(td::Layout<2>(line, {m, k}, {0, -1}), d, av);
  const auto b = make<double, 2>(td::Layout<2>(line, {k, n}, {0, -1}), d, bv);
  for (int round = 0; round < 2; ++round) {
    // (least chunk 0: chunks are candidates even for so small a redistribute)
    const auto moved = td::redistribute(a, td::Layout<2>(line, {m, k}, {-1, 0}), td::ExchangeOptions{.chunk_mib = 0});
    EXPECT_EQ(td::testing::gather_to_host(moved), av);
    if (P > 1) {
      const auto r = tune::history().back();
      EXPECT_EQ(r.operation.rfind("redistribute", 0), 0u) << r.str();
      EXPECT_EQ(r.source, round == 0 ? "measured" : "wisdom") << r.str();
    }
    const auto c = td::matmul(a, b);
    std::vector<double> ref(m * n, 0.0);
    for (index_t i = 0; i < m; ++i)
      for (index_t l = 0; l < k; ++l)
        for (index_t j = 0; j < n; ++j) ref[i * n + j] += av[i * k + l] * bv[l * n + j];
    const auto got = td::testing::gather_to_host(c);
    for (index_t e = 0; e < m * n; ++e) ASSERT_NEAR(got[e], ref[e], 1e-12 * (1 + k)) << e;
    bool found = false;
    for (const auto& r : tune::history())
      if (r.operation.rfind("matmul", 0) == 0) {
        found = true;
        EXPECT_EQ(r.source, round == 0 ? "measured" : "wisdom") << r.str();
        EXPECT_NO_THROW((void)td::matmul_candidate(r.choice())) << r.str();
      }
    EXPECT_EQ(found, P > 1);
    tune::clear_history();
  }
  // Every candidate's options move the data right (chunks and tapers both ways, no tuning).
  for (bool taper : {false, true})
    for (int chunks : {1, 3, 4}) {
      td::ExchangeOptions o{.chunks = chunks, .chunk_mib = 0, .taper = taper, .tune = Tune::off};
      const auto moved = td::redistribute(a, td::Layout<2>(line, {m, k}, {-1, 0}), o);
      EXPECT_EQ(td::testing::gather_to_host(moved), av) << td::candidate_name(o);
    }
  // Given options are kept: a fixed grid that does not fit is refused.
  if (P == 4) EXPECT_THROW((void)td::matmul(a, b, td::Op::none, td::Op::none, {.panel = 0, .grid = {3, 2}}),
                           ts::InvalidArgument);
}

TEST(TuneNames, ExchangeAndMatmulCandidates) {
  const auto e = td::exchange_candidate("ipc/8/flat");
  EXPECT_EQ(e.transport, Transport::ipc);
  EXPECT_EQ(e.chunks, 8);
  EXPECT_EQ(e.taper, false);
  EXPECT_EQ(td::candidate_name(e), "ipc/8/flat");
  EXPECT_EQ(td::candidate_name(td::exchange_candidate("auto/auto/auto")), "auto/auto/auto");
  EXPECT_EQ(td::exchange_candidate("nccl/2/taper").taper, true);
  EXPECT_THROW(td::exchange_candidate("ipc/8"), ts::InvalidArgument);
  EXPECT_THROW(td::exchange_candidate("ipc"), ts::InvalidArgument);
  const auto mm = td::matmul_candidate("2x3/256");
  EXPECT_EQ(mm.grid, (std::vector<int>{2, 3}));
  EXPECT_EQ(mm.panel, 256);
  EXPECT_EQ(td::candidate_name(mm), "2x3/256");
  EXPECT_EQ(td::candidate_name(td::matmul_candidate("grid/auto")), "grid/auto");
  EXPECT_THROW(td::matmul_candidate("2y3|1"), ts::InvalidArgument);
}
