// tessera-tune: pre-tunes a list of problems (like fftw-wisdom) and prints, for each, how its
// choice was made (measured or from wisdom, and the time that took), every candidate the tuner
// considered timed again separately (median over --iters of the slowest rank), the tuned choice,
// the fastest candidate, and whether the choice is within 5% of it; for FFTs also the tuning's
// cost in transforms (tuning time / the chosen plan's forward time; in parentheses the part that
// made the candidates' plans). The wisdom goes to TESSERA_WISDOM (or --wisdom): a second run
// finds every problem there and spends no time tuning.
//
//   mpirun -np 4 tessera-tune                                   # FFT 64^3..512^3, redistributes, matmul
//   mpirun -np 2 tessera-tune --fft 8,12 --redistribute 8 --matmul 16 --iters 2   # the CTest run
//
// Problems: for each --fft size N and each --fft-grids g (1: the input split over a 1-D grid, so
// slab or pencil and the pencil's grid are free; 2: over a balanced 2-D grid), a c2c FFT of N^3;
// three redistributes of --redistribute N (c64 N^3 axis 0 -> axis 2; f64 N^2 x N rows -> columns;
// c64 N^3 slabs -> 2-D blocks); a matmul (f64, a and b on a 1-D grid: SUMMA grid and panel free)
// per --matmul size. Output: a markdown table, then one summary line.
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/timing.hpp"

namespace po = boost::program_options;
namespace td = tessera::distributed;
namespace tune = tessera::distributed::tune;
namespace fft = tessera::fft;
using tessera::local::index_t;

namespace {

struct Row {
  std::string problem;
  tune::Report report;
  std::vector<double> ms;  // every candidate alone, in report.names' order
  bool fft = false;
};

struct Tool {
  tessera::Runtime& rt;
  tessera::Device d;
  int warmup, iters;
  int chunk_mib;  // the redistributes' least chunk (-1: the setting's)
  std::vector<Row> rows;

  tessera::comm::ProcessGroup world() const { return rt.world(); }
  // Every candidate's median over `iters` runs of the slowest rank, the runs interleaved (run i of
  // every candidate, then run i + 1) so that a drifting machine favours none of them.
  std::vector<double> time_all(const std::vector<std::function<void()>>& fns) {
    auto g = rt.world();
    const auto& s = tessera::Stream::default_for(d);
    std::vector<std::vector<double>> t(fns.size());
    for (const auto& fn : fns) (void)apps::median_ms(g, s, warmup, 0, fn);
    for (int i = 0; i < iters; ++i)
      for (std::size_t c = 0; c < fns.size(); ++c) t[c].push_back(apps::median_ms(g, s, 0, 1, fns[c]));
    std::vector<double> ms;
    for (auto& v : t) ms.push_back(apps::median(v));
    return ms;
  }
  // The report of the last choice made for operation `op` (the problem's own; nested ones come first).
  static tune::Report last(const std::string& op) {
    const auto h = tune::history();
    for (auto it = h.rbegin(); it != h.rend(); ++it)
      if (it->operation.rfind(op, 0) == 0) return *it;
    return {};
  }

  template <class C>
  void fft_problem(index_t n, int grid_dims, td::Tune mode) {
    const auto grid = grid_dims == 1 ? td::ProcessGrid(rt.world()) : td::ProcessGrid::balanced(rt.world(), 2);
    const auto lay = td::Layout<3>::block(grid, {n, n, n});
    td::Array<C, 3> x(lay, d);
    tessera::local::fill(x.interior(), C(1));
    fft::Options o;
    o.tune = mode;
    tune::clear_history();
    const fft::Plan<C, 3> plan(lay, d, o);
    Row r{"fft c2c " + std::to_string(n) + "^3, " + std::to_string(grid_dims) + "-D grid", last("fft"), {}, true};
    std::vector<std::unique_ptr<fft::Plan<C, 3>>> alone;
    std::vector<std::function<void()>> fns;
    for (const auto& name : r.report.names) {
      alone.push_back(std::make_unique<fft::Plan<C, 3>>(lay, d, fft::candidate_options(name)));
      fns.push_back([&x, p = alone.back().get()] { (void)p->forward(x); });
    }
    r.ms = time_all(fns);
    rows.push_back(r);
  }

  template <class T, int R>
  void redistribute_problem(const std::string& what, const td::Layout<R>& from, const td::Layout<R>& to,
                            td::Tune mode) {
    td::Array<T, R> a(from, d);
    tessera::local::fill(a.interior(), T(1));
    td::ExchangeOptions o;
    o.tune = mode, o.chunk_mib = chunk_mib;
    tune::clear_history();
    (void)td::redistribute(a, to, o);
    Row r{"redistribute " + what, last("redistribute"), {}, false};
    if (r.report.names.empty()) {  // nothing to choose (pieces too small to cut, one rank): the rule
      r.report.source = "rule", r.report.names = {td::candidate_name(o)}, r.report.times_ms = {-1};
    }
    std::vector<std::function<void()>> fns;
    for (const auto& name : r.report.names) {
      auto c = td::exchange_candidate(name);
      c.chunk_mib = chunk_mib;
      fns.push_back([&, c] { (void)td::redistribute(a, to, c); });
    }
    r.ms = time_all(fns);
    rows.push_back(r);
  }

  void matmul_problem(index_t n, td::Tune mode) {
    const td::ProcessGrid line(rt.world());
    td::Array<double, 2> a(td::Layout<2>(line, {n, n}, {0, -1}), d), b(td::Layout<2>(line, {n, n}, {0, -1}), d);
    tessera::local::fill(a.interior(), 1.0);
    tessera::local::fill(b.interior(), 0.5);
    td::MatmulOptions o;
    o.tune = mode;
    tune::clear_history();
    (void)td::matmul(a, b, td::Op::none, td::Op::none, o);
    Row r{"matmul f64 " + std::to_string(n) + "^2, 1-D grid", last("matmul"), {}, false};
    if (r.report.names.empty()) r.report.source = "rule", r.report.names = {td::candidate_name(o)}, r.report.times_ms = {-1};
    std::vector<std::function<void()>> fns;
    for (const auto& name : r.report.names)
      fns.push_back([&, c = td::matmul_candidate(name)] { (void)td::matmul(a, b, td::Op::none, td::Op::none, c); });
    r.ms = time_all(fns);
    rows.push_back(r);
  }
};

std::string fmt(double v, int digits = 3) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  std::string ffts = "64,128,256,512", grids = "1,2", matmuls = "2048,4096", precision = "single", mode_name = "measure",
              wisdom;
  index_t redist = 256;
  int warmup = 2, iters = 5, chunk_mib = -1;
  po::options_description opts("tessera-tune options");
  opts.add_options()("help,h", "this help")("fft", po::value(&ffts)->default_value(ffts),
                                            "c2c FFT sizes N (N^3; comma-separated; 0: none)")(
      "fft-grids", po::value(&grids)->default_value(grids), "input grids of each FFT: 1 (slabs) and/or 2 (2-D blocks)")(
      "precision", po::value(&precision)->default_value(precision), "FFT precision: single or double")(
      "redistribute", po::value(&redist)->default_value(redist), "edge N of the three redistributes (0: none)")(
      "matmul", po::value(&matmuls)->default_value(matmuls), "matmul sizes n (n x n; comma-separated; 0: none)")(
      "mode", po::value(&mode_name)->default_value(mode_name), "measure (wisdom first), wisdom or off")(
      "wisdom", po::value(&wisdom), "the wisdom file (default: TESSERA_WISDOM, else in the kernel cache directory)")(
      "chunk-mib", po::value(&chunk_mib)->default_value(chunk_mib),
      "the redistributes' least chunk in MiB (-1: TESSERA_EXCHANGE_CHUNK_MIB; 0 lets small ones be cut)")(
      "warmup", po::value(&warmup)->default_value(warmup), "untimed runs of each candidate timed alone")(
      "iters", po::value(&iters)->default_value(iters), "timed runs of each candidate alone (median)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    if (rt.rank() == 0) std::cerr << "tessera-tune: " << e.what() << "\n" << opts;
    return 2;
  }
  if (vm.count("help")) {
    if (rt.rank() == 0) std::cout << opts;
    return 0;
  }
  const auto* mode_at = std::find(std::begin(tessera::distributed::tune_names), std::end(tessera::distributed::tune_names),
                                  mode_name);
  if (mode_at == std::end(tessera::distributed::tune_names) || (precision != "single" && precision != "double")) {
    if (rt.rank() == 0) std::cerr << "tessera-tune: --mode is measure, wisdom or off; --precision single or double\n";
    return 2;
  }
  const auto mode = static_cast<td::Tune>(mode_at - std::begin(tessera::distributed::tune_names));
  if (vm.count("wisdom")) {
    auto s = td::settings();
    s.wisdom = wisdom;
    td::set_settings(s);
  }
  Tool t{rt, rt.device(), warmup, iters, chunk_mib, {}};
  const auto start = std::chrono::steady_clock::now();
  for (long long n : apps::parse_list(ffts, "fft"))
    for (long long g : apps::parse_list(grids, "fft-grids"))
      if (n > 0 && (g == 1 || g == 2)) {
        if (precision == "single") t.fft_problem<std::complex<float>>(n, static_cast<int>(g), mode);
        else t.fft_problem<std::complex<double>>(n, static_cast<int>(g), mode);
      }
  if (redist > 0) {
    const index_t n = redist;
    const td::ProcessGrid line(rt.world()), square = td::ProcessGrid::balanced(rt.world(), 2);
    using C = std::complex<float>;
    const std::string e = std::to_string(n);
    t.redistribute_problem<C, 3>("c64 " + e + "^3 axis 0 -> 2", td::Layout<3>(line, {n, n, n}, {0, -1, -1}),
                                 td::Layout<3>(line, {n, n, n}, {-1, -1, 0}), mode);
    t.redistribute_problem<double, 2>("f64 " + e + "^2x" + e + " rows -> columns", td::Layout<2>(line, {n * n, n}, {0, -1}),
                                      td::Layout<2>(line, {n * n, n}, {-1, 0}), mode);
    t.redistribute_problem<C, 3>("c64 " + e + "^3 slabs -> 2-D blocks", td::Layout<3>(line, {n, n, n}, {0, -1, -1}),
                                 td::Layout<3>(square, {n, n, n}, {0, 1, -1}), mode);
  }
  for (long long n : apps::parse_list(matmuls, "matmul"))
    if (n > 0) t.matmul_problem(n, mode);
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (rt.rank() != 0) return 0;
  std::printf("# tessera-tune: %s, %d ranks, mode %s, wisdom %s\n", tessera::device_description(t.d).c_str(),
              rt.world().size(), mode_name.c_str(), td::settings().wisdom_path().c_str());
  std::printf("| problem | source | tuning ms | choice | choice ms | fastest | fastest ms | within 5%% | tuning in transforms | candidates (ms alone) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  int within = 0;
  double tuning = 0;
  for (const auto& r : t.rows) {
    const auto& rep = r.report;
    std::size_t fastest = 0;
    for (std::size_t i = 1; i < r.ms.size(); ++i)
      if (r.ms[i] < r.ms[fastest]) fastest = i;
    const double chosen_ms = r.ms.empty() ? 0 : r.ms[rep.chosen];
    const bool ok = r.ms.empty() || chosen_ms <= 1.05 * r.ms[fastest];
    within += ok;
    const double tuned_ms = rep.source == "measured" ? rep.tuning_ms : 0.0;
    tuning += tuned_ms;
    // FFTs: the tuning in transforms of the chosen plan, and how much of it was making plans.
    std::string in_transforms = "-";
    if (r.fft && chosen_ms > 0) {
      in_transforms = fmt(tuned_ms / chosen_ms, 1);
      if (tuned_ms > 0) in_transforms += " (plans " + fmt(rep.setup_ms / chosen_ms, 1) + ")";
    }
    std::string cands;
    for (std::size_t i = 0; i < r.ms.size(); ++i)
      cands += (i ? ", " : "") + rep.names[i] + " " + fmt(r.ms[i]) +
               (rep.times_ms.size() > i && rep.times_ms[i] >= 0 ? " (tuner " + fmt(rep.times_ms[i]) + ")" : "");
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.problem.c_str(), rep.source.c_str(),
                fmt(tuned_ms, 1).c_str(), rep.names.empty() ? "-" : rep.choice().c_str(), fmt(chosen_ms).c_str(),
                r.ms.empty() ? "-" : rep.names[fastest].c_str(), r.ms.empty() ? "-" : fmt(r.ms[fastest]).c_str(),
                ok ? "yes" : "no", in_transforms.c_str(), cands.c_str());
  }
  std::printf("tessera-tune: %zu problems, %d within 5%% of the fastest, tuning %.1f ms, %.1f s in all\n", t.rows.size(),
              within, tuning, total_s);
  return 0;
}
