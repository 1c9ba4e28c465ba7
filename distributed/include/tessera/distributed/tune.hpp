// The autotuner: choices (transport, chunks, FFT decomposition and grid, SUMMA grid and panel)
// made by the fixed rule (rule.hpp), by wisdom (a JSON file of measured choices keyed by the
// machine, the problem and the versions; read by one rank and broadcast) or by measuring the
// candidates when a plan is made (every rank times every candidate on the real buffers, the
// slowest rank's time decides, so all ranks pick the same one). TESSERA_TUNE, TESSERA_TUNE_BUDGET_MS
// and TESSERA_WISDOM (settings.hpp) set the defaults; docs/tuning.md says how to use it.
//
// Measuring (measure()): every candidate is prepared and runs `warmups` untimed repetitions (one
// all-reduce MAX of the last one's time and the cost; a candidate `screen` times slower than the
// best so far stops here) and one timed one (the screen; one all-reduce MAX); then rounds of one
// timed repetition of each survivor, one all-reduce MAX of the round's vector of times, after
// which candidates slower than `prune` times the best are dropped, until `repetitions` or the
// budget (counted in agreed times, so every rank stops at the same point). A candidate's time is
// its best round's slowest rank. The winner: the lowest-index candidate within 1% of the fastest
// (candidate 0 is the rule's: close calls keep the rule's choice).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/settings.hpp"
#include "tessera/local/device.hpp"

namespace tessera::distributed::tune {

/// One candidate: the name wisdom stores, and a run that returns once its work is done on every
/// device it used (the tuner times it on the host).
struct Candidate {
  std::string name;
  std::function<void()> run;
  bool warm = false;  ///< ran already (an earlier stage's winner): no warm-up runs
  /// Untimed set-up before the first run (making a plan, its buffers, its transport's handles):
  /// counted in the budget, not in the warm-up the screen compares.
  std::function<void()> prepare;
};

/// How candidates are timed.
struct Measure {
  int warmups = 1;      ///< untimed runs before a candidate's first timed one
  int repetitions = 3;  ///< timed runs of a candidate that survives every pruning
  double prune = 1.5;   ///< after each round, candidates slower than prune * the best are dropped
  /// A candidate (not the first) whose last warm-up run takes more than screen * the best timed
  /// run so far is dropped without timed runs ("slow warm-up"), and after the screen every
  /// candidate slower than screen * the best ("pruned"); <= 0: never (unless prune_first). A
  /// first run is rarely faster than later ones, so this drops only what is far behind.
  double screen = 3.0;
  /// After the screen (one timed run each), candidates slower than prune_first * the best are
  /// dropped; 0: `screen`. Where one run is a good sample (GPU transforms), `prune`.
  double prune_first = 0;
  double budget_ms = -1;  ///< most agreed milliseconds spent; < 0: settings().tune_budget_ms
  /// Test hook: the milliseconds this rank reports for a run of candidate `c` (rep < 0: warm-up
  /// -1, -2, ...; else the timed repetition) given the measured ones. Unset: the measured ones.
  std::function<double(int c, int rep, double measured_ms)> timer;
};

/// How a choice was made, with the candidates' times.
struct Report {
  std::string operation;           ///< "fft c64 [64,64,64] on 4 ranks", ...
  std::string source = "rule";     ///< "rule", "wisdom" or "measured"
  int chosen = 0;                  ///< index into names
  std::vector<std::string> names;  ///< the candidates (names[0]: the rule's)
  std::vector<double> times_ms;    ///< per candidate: best round's slowest rank; < 0: not timed
  std::vector<int> runs;           ///< timed runs per candidate
  std::vector<std::string> notes;  ///< per candidate: "", "pruned" or "budget"
  double tuning_ms = 0;            ///< wall time measuring took (slowest rank); 0 for rule and wisdom
  double setup_ms = 0;             ///< of tuning_ms: preparing the candidates (their plans; slowest rank's)
  const std::string& choice() const { return names.at(chosen); }
  /// "fft c64 [64,64,64] on 4 ranks: measured slab/nccl/4 (slab/nccl/4 0.52 ms x3, pencil 2x2/nccl/4
  /// 0.91 ms x1 pruned) in 12.1 ms".
  std::string str() const;
};

/// Times the candidates (collective over g: the same names in the same order on every rank) and
/// returns the report, the same on every rank. Candidate 0 is always timed.
Report measure(const comm::ProcessGroup& g, const std::vector<Candidate>& candidates, const Measure& m = {});

/// What a choice depends on. Every field takes part in the match: wisdom measured with another
/// device model, rank or node count, or other versions is not used.
struct Key {
  std::string device;     ///< rank 0's device model ("NVIDIA H200 (cc 9.0, 141 GiB)", or the host's CPU)
  int gpus_per_node = 0;  ///< GPUs rank 0's node has (0 on host)
  int ranks_per_node = 0; ///< ranks on rank 0's node (ranks sharing GPUs differ from ranks on their own)
  int ranks = 1, nodes = 1;
  std::string operation;  ///< "fft", "redistribute", "matmul", ...
  std::vector<long long> shape;  ///< the global shape
  std::string dtype;      ///< "c64", "f64", ...
  std::string layouts;    ///< the operation's layouts and options that are not tuned
  std::string versions;   ///< "tessera 0.1.0, nccl 22803, cuda 13000"
  /// The canonical text (sorted JSON) the wisdom file is keyed by.
  std::string str() const;
  bool operator==(const Key&) const = default;
};
/// The key of `operation` over g on d (not collective): device model, GPUs, ranks per node and
/// versions from this process; nodes: the ranks over those on this rank's node, rounded up.
Key key_for(const comm::ProcessGroup& g, Device d, std::string operation, std::vector<long long> shape,
            std::string dtype, std::string layouts);

/// A remembered choice.
struct Entry {
  std::string choice;
  std::vector<std::string> names;
  std::vector<double> times_ms;
};

/// A wisdom file and what was read from it. Not collective (the tuner uses one rank's).
class Wisdom {
 public:
  explicit Wisdom(std::string path);
  const std::string& path() const { return path_; }
  /// (Re)reads the file: missing: nothing known; unreadable, corrupt or of another format:
  /// nothing known and one warning (per path and process) on stderr, never an exception.
  void load();
  std::optional<Entry> find(const Key& k) const;
  /// Remembers `e` in memory and, where the path is not empty, in the file: under a lock of
  /// path + ".lock", merged with what the file holds now, written to a temporary file and renamed
  /// over it (two jobs storing at once lose nothing). False (and a warning) if it could not write.
  bool store(const Key& k, const Entry& e);
  /// Entries known.
  std::size_t size() const;

 private:
  std::string path_;
  struct Data;
  std::shared_ptr<Data> data_;
};

/// The process's wisdom at settings().wisdom_path() (reloaded when the path changes).
Wisdom& process_wisdom();

/// A choice by `mode` (collective over g). off: `rule` (the rule's candidate). wisdom: the wisdom's
/// choice for `k` (rank 0 of g looks it up and broadcasts it) where usable(choice), else `rule`.
/// measure: the wisdom's, else search() (which measures, e.g. by measure(), the same on every
/// rank), whose winner is remembered (rank 0 of g writes the file); choices made while a search
/// runs (a redistribute inside a measured product) take the wisdom or the rule, never measure
/// themselves. Recorded in history(); with
/// TESSERA_VERBOSE=1 rank 0 of g prints the report.
Report choose(const comm::ProcessGroup& g, Tune mode, const Key& k, const std::string& rule,
              const std::function<bool(const std::string&)>& usable, const std::function<Report()>& search);
/// choose() over a fixed list of candidates (names[0]: the rule's), measured by measure(g, make(), m).
Report choose(const comm::ProcessGroup& g, Tune mode, const Key& k, const std::vector<std::string>& names,
              const std::function<std::vector<Candidate>()>& make, const Measure& m = {});
/// Several reports of one search (stages of a coordinate search) as one: every candidate once,
/// with the times of the last stage that timed it, tuning times added, `chosen` naming `winner`.
Report merge(const std::vector<Report>& stages, const std::string& winner);

/// Adds a report made without choose() (a plan with nothing to tune) to history() and, with
/// TESSERA_VERBOSE=1, prints it on rank 0 of g (not collective).
void record(const comm::ProcessGroup& g, const Report& r);
/// The reports choose() and record() made in this process, oldest first (tessera-tune and tests
/// read them; the last few thousand). choose() remembers its decisions in the process: the same operation on the same
/// group decides again with no collective and no new report (a measured one then reads "wisdom").
std::vector<Report> history();
/// Forgets history() and the decisions remembered in the process (the next call of each
/// operation asks the wisdom again).
void clear_history();

}  // namespace tessera::distributed::tune
