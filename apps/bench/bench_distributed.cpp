// bench_distributed: the distributed layer's throughput on every rank's device.
//  triad     z = a*b + c over n per rank (f32): aggregate TB/s = 4*4*n*ranks / t
//  sum       global sum of n f32 per rank to a host scalar on every rank: ms per call
//  halo      exchange_halos of an m^3-per-rank f64 array on a 3-D grid, halo 1: ms and GB/s
//            (halo bytes received per rank / t)
//  redist    redistribute an N^3 complex<float> array split on axis 0 -> axis 2 (1-D grid):
//            ms and busbw = (bytes per rank) (p-1)/p / t, the all-to-all convention
// Times are medians over --iters of the slowest rank (MPI max), after --warmup runs.
// Compiled by nvcc in CUDA builds (fused expressions).
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>
#include <tessera/distributed/creation.hpp>
#include <tessera/distributed/elementwise.hpp>
#include <tessera/distributed/exchange.hpp>
#include <tessera/distributed/halo.hpp>
#include <tessera/distributed/redistribute.hpp>
#include <tessera/distributed/reduce.hpp>

#include "common/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace po = boost::program_options;
namespace td = tessera::distributed;
using tessera::local::index_t;

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  po::options_description opts("bench_distributed options");
  std::string tests;
  index_t n = index_t(1) << 28, m = 256, big = 1024;
  int warmup = 3, iters = 20;
  std::string transport = "auto";
  opts.add_options()("help,h", "this help")
      ("tests", po::value(&tests)->default_value("triad,sum,halo,redist"), "comma-separated: triad,sum,halo,redist")
      ("n", po::value(&n), "elements per rank for triad and sum (default 2^28)")
      ("halo-n", po::value(&m), "per-rank edge of the halo array (default 256)")
      ("redist-n", po::value(&big), "global edge N of the redistributed N^3 array (default 1024)")
      ("warmup", po::value(&warmup), "untimed runs (default 3)")
      ("iters", po::value(&iters), "timed runs, median reported (default 20)")
      ("transport", po::value(&transport)->default_value(transport), "exchange transport: auto, nccl, nccl-window, ipc, mpi");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    const auto t = tessera::distributed::transport_from_name(transport);
    if (!t) throw std::invalid_argument("--transport must be auto, nccl, nccl-window, ipc or mpi, not " + transport);
    auto st = tessera::distributed::settings();
    st.transport = *t;
    tessera::distributed::set_settings(st);
  } catch (const std::exception& e) {
    if (rt.rank() == 0) std::fprintf(stderr, "bench_distributed: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    if (rt.rank() == 0) std::cout << opts << "\n";
    return 0;
  }
  auto& world = rt.world();
  const int p = world.size();
  const auto d = rt.device();
  const auto& s = tessera::Stream::default_for(d);
  const bool root = rt.rank() == 0;
  if (root) std::printf("# bench_distributed: %d ranks, device %s\n", p, tessera::device_description(d).c_str());
  const auto ran = td::exchange_transport_name(world, d, tessera::distributed::settings().transport);
  if (root) std::printf("# transport: %s (ran: %s)\n", transport.c_str(), ran.c_str());
  auto want = [&](const char* t) { return ("," + tests + ",").find(std::string(",") + t + ",") != std::string::npos; };

  const td::ProcessGrid line(world, {p});
  if (want("triad") || want("sum")) {
    const auto l = td::Layout<1>(line, {n * p}, {0});
    auto a = td::full<float, 1>(l, 1.5f, d), b = td::full<float, 1>(l, 2.0f, d), c = td::full<float, 1>(l, 0.25f, d);
    auto z = td::empty<float, 1>(l, d);
    if (want("triad")) {
      const double ms = apps::median_ms(world, s, warmup, iters, [&] { z = a * b + c; });
      const double tbs = 16.0 * double(n) * p / (ms * 1e-3) / 1e12;
      if (root) std::printf("triad   f32 %lld per rank: %.3f ms, aggregate %.2f TB/s (%.2f TB/s per rank)\n",
                            (long long)n, ms, tbs, tbs / p);
    }
    if (want("sum")) {
      float v = 0;
      const double ms = apps::median_ms(world, s, warmup, iters, [&] { v = td::sum(a); });
      const double expect = 1.5 * double(n) * p;
      if (root) std::printf("sum     f32 %d x %lld: %.3f ms (%.2f TB/s aggregate), value %.6g (expect %.6g)\n", p,
                            (long long)n, ms, 4.0 * double(n) * p / (ms * 1e-3) / 1e12, double(v), expect);
    }
  }
  if (want("halo")) {
    const auto g3 = td::ProcessGrid::balanced(world, 3, {true, true, true});
    const auto& gd = g3.dims();
    const auto l = td::Layout<3>::block(g3, {m * gd[0], m * gd[1], m * gd[2]}, {1, 1, 1});
    auto u = td::full<double, 3>(l, 1.0, d);
    const double ms = apps::median_ms(world, s, warmup, iters, [&] { td::exchange_halos(u); });
    const auto ps = l.padded_shape();
    const double cells = double(ps[0]) * ps[1] * ps[2] - double(m) * m * m;
    if (root) std::printf("halo    f64 %lld^3 per rank on grid %dx%dx%d, width 1: %.3f ms, %.1f GB/s per rank\n",
                          (long long)m, gd[0], gd[1], gd[2], ms, 8.0 * cells / (ms * 1e-3) / 1e9);
  }
  if (want("redist")) {
    const td::Layout<3> from(line, {big, big, big}, {0, -1, -1}), to(line, {big, big, big}, {-1, -1, 0});
    auto x = td::full<tessera::complex64, 3>(from, {1.0f, -1.0f}, d);
    td::Array<tessera::complex64, 3> y;
    const double ms = apps::median_ms(world, s, warmup, iters, [&] { y = td::redistribute(x, to); });
    const double per_rank = 8.0 * double(big) * big * big / p;
    if (root)
      std::printf("redist  c64 %lld^3 axis 0 -> 2: %.3f ms, busbw %.1f GB/s\n", (long long)big, ms,
                  per_rank * (p - 1) / p / (ms * 1e-3) / 1e9);
  }
  // Repeated operations on the same layouts plan their exchanges once.
  if (root) std::printf("# exchange plans (3-D): %s\n", td::exchange_plan_cache_stats<3>().str().c_str());
  return 0;
}
