// bench_algorithms: the distributed algorithms on every rank's device, one line per figure.
//  matmul  C = A @ B of n^3 (f32, f64) on a balanced 2-D grid (SUMMA; 1 rank: one GEMM):
//          TFLOP/s = 2 n^3 / t
//  sort    sort of 2^k keys (f32, i64) over a 1-D grid: Gkeys/s = 2^k / t (argsort too with --argsort)
//  cumsum  cumsum of 2^k f32 over a 1-D grid: GB/s = 2 * 4 * 2^k / t (read + write)
// Times are medians over --iters of the slowest rank (MPI max), after --warmup runs. Each figure is
// checked once (a few elements against a serial value) and the line says ok or WRONG.
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>

#include "common/timing.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace po = boost::program_options;
namespace td = tessera::distributed;
using tessera::local::index_t;

namespace {
struct Bench {
  tessera::Runtime& rt;
  tessera::Device d;
  int warmup, iters;
  double time(const std::function<void()>& fn) {
    return apps::median_ms(rt.world(), tessera::Stream::default_for(d), warmup, iters, fn);
  }
  // check: 1 ok, 0 WRONG, -1 not checked here (the test suite checks it).
  void line(const char* what, const char* type, const std::string& size, double ms, double rate, const char* unit,
            int check) {
    if (rt.rank() == 0)
      std::printf("%-8s %-4s %10s %5d %10.3f %10.3f %-8s %s\n", what, type, size.c_str(), rt.world().size(), ms, rate,
                  unit, check > 0 ? "ok" : check == 0 ? "WRONG" : "unchecked");
  }
};

template <class T>
void matmul(Bench& b, index_t n, const char* type) {
  const auto grid = td::ProcessGrid::balanced(b.rt.world(), 2);
  const td::Layout<2> l(grid, {n, n}, {0, 1});
  const auto A = td::random_uniform<T>(l, b.d, 1, T(-1), T(1));
  const auto B = td::random_uniform<T>(l, b.d, 2, T(-1), T(1));
  td::Array<T, 2> C;
  const double ms = b.time([&] { C = td::matmul(A, B); });
  // Check: row sums of C against A @ (B's row sums), on the gathered operands' first row.
  const auto a0 = td::gather(td::slice(A, td::Box<2>{{0, 0}, {1, n}}));
  const auto bs = td::gather(td::sum(B, 1));
  const auto cs = td::gather(td::sum(C, 1));
  bool ok = true;
  if (b.rt.rank() == 0) {
    const auto ha = tessera::local::to_host(tessera::local::to(a0, tessera::Device::host()));
    const auto hb = tessera::local::to_host(tessera::local::to(bs, tessera::Device::host()));
    const auto hc = tessera::local::to_host(tessera::local::to(cs, tessera::Device::host()));
    double ref = 0;
    for (index_t k = 0; k < n; ++k) ref += double(ha[k]) * double(hb[k]);
    ok = std::abs(hc[0] - ref) <= (sizeof(T) == 4 ? 1e-2 : 1e-8) * n;
  }
  b.line("matmul", type, std::to_string(n) + "^3", ms, 2.0 * n * n * n / ms / 1e9, "TFLOP/s", ok);
}

template <class T>
void sort(Bench& b, int log2, const char* type, bool arg) {
  const index_t n = index_t(1) << log2;
  const td::Layout<1> l(td::ProcessGrid(b.rt.world()), {n}, {0});
  td::Array<T, 1> a;
  if constexpr (std::is_floating_point_v<T>) a = td::random_uniform<T>(l, b.d, 3, T(0), T(1));
  else a = td::random_integers<T>(l, b.d, 3, std::numeric_limits<T>::min() / 2, std::numeric_limits<T>::max() / 2);
  td::Array<T, 1> s;
  td::Array<std::int64_t, 1> i;
  const double ms = b.time([&] { s = td::sort(a); });
  // Check: ascending inside every rank's block.
  const auto h = tessera::local::to_host(tessera::local::to(s.interior(), tessera::Device::host()));
  bool ok = true;
  for (std::size_t k = 1; k < h.size(); ++k) ok = ok && !(h[k] < h[k - 1]);
  ok = b.rt.world().all_reduce(int(ok), tessera::comm::ReduceOp::min) == 1;
  b.line("sort", type, "2^" + std::to_string(log2), ms, n / ms / 1e6, "Gkeys/s", ok);
  if (!arg) return;
  const double ams = b.time([&] { i = td::argsort(a); });
  b.line("argsort", type, "2^" + std::to_string(log2), ams, n / ams / 1e6, "Gkeys/s", -1);
}

void cumsum(Bench& b, int log2) {
  const index_t n = index_t(1) << log2;
  const td::Layout<1> l(td::ProcessGrid(b.rt.world()), {n}, {0});
  const auto a = td::random_uniform<float>(l, b.d, 4, -1.0f, 1.0f);
  td::Array<float, 1> c;
  const double ms = b.time([&] { c = td::cumsum(a); });
  // Check: the last element is the sum (up to f32 rounding of a random walk).
  const double total = td::sum(a);
  const auto last = td::gather(td::slice(c, td::Box<1>{{n - 1}, {n}}));
  bool ok = true;
  if (b.rt.rank() == 0)
    ok = std::abs(tessera::local::to_host(tessera::local::to(last, tessera::Device::host()))[0] - total) <=
         1e-3 * std::sqrt(double(n)) + 1;
  b.line("cumsum", "f32", "2^" + std::to_string(log2), ms, 8.0 * n / ms / 1e6, "GB/s", ok);
}
}  // namespace

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  std::string what = "matmul,sort,cumsum";
  index_t n = 8192;
  int log2 = 28, warmup = 3, iters = 10;
  bool arg = false;
  po::options_description opts("bench_algorithms options");
  opts.add_options()("help,h", "this help")("what", po::value(&what)->default_value(what), "matmul,sort,cumsum")(
      "n", po::value(&n)->default_value(n), "matmul edge")("log2", po::value(&log2)->default_value(log2),
                                                          "sort / cumsum size 2^k")(
      "argsort", po::bool_switch(&arg), "also time argsort")("warmup", po::value(&warmup)->default_value(warmup),
                                                             "untimed runs")(
      "iters", po::value(&iters)->default_value(iters), "timed runs (median)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    if (rt.rank() == 0) std::cerr << "bench_algorithms: " << e.what() << "\n" << opts;
    return 2;
  }
  if (vm.count("help")) {
    if (rt.rank() == 0) std::cout << opts;
    return 0;
  }
  Bench b{rt, rt.device(), warmup, iters};
  if (rt.rank() == 0)
    std::printf("# %s, %d rank(s)\n%-8s %-4s %10s %5s %10s %10s %-8s %s\n", tessera::device_description(b.d).c_str(),
                rt.world().size(), "figure", "type", "size", "ranks", "ms", "rate", "unit", "check");
  std::stringstream ss(what);
  for (std::string w; std::getline(ss, w, ',');) {
    if (w == "matmul") matmul<float>(b, n, "f32"), matmul<double>(b, n, "f64");
    else if (w == "sort") sort<float>(b, log2, "f32", arg), sort<std::int64_t>(b, log2, "i64", arg);
    else if (w == "cumsum") cumsum(b, log2);
    else if (rt.rank() == 0) std::fprintf(stderr, "bench_algorithms: unknown figure '%s'\n", w.c_str());
  }
  return 0;
}
