// bench_local: single-device bandwidth of the local layer. Fused triad z = a*b + c (f32, f64),
// whole-array sum (f32, f64) and copy, over a range of sizes; GB/s = bytes moved / median time
// (CUDA events on GPU, a steady clock on host). Compiled by nvcc in CUDA builds.
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>
#include <tessera/local/expr.hpp>
#include <tessera/local/reduce.hpp>

#include "common/timing.hpp"

#include <cstdio>
#include <functional>
#include <iostream>
#include <utility>
#include <vector>

namespace po = boost::program_options;
namespace tl = tessera::local;

namespace {
double median_ms(const tessera::Device& d, int warmup, int reps, const std::function<void()>& fn) {
  auto& s = tessera::Stream::default_for(d);
  for (int i = 0; i < warmup; ++i) fn();
  s.synchronize();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    tessera::Event a(d), b(d);
    a.record(s);
    fn();
    b.record(s);
    b.synchronize();
    t.push_back(b.elapsed_ms_since(a));
  }
  return apps::median(std::move(t));
}

template <class T>
void run(const tessera::Device& d, tl::index_t n, int warmup, int reps, const char* tname) {
  auto a = tl::full<T, 1>({n}, T(1.5), d), b = tl::full<T, 1>({n}, T(2), d), c = tl::full<T, 1>({n}, T(0.25), d);
  auto z = tl::empty<T, 1>({n}, d);
  const double bytes = static_cast<double>(n) * sizeof(T);
  T sink{};
  const double t_triad = median_ms(d, warmup, reps, [&] { z = a * b + c; });
  const double t_copy = median_ms(d, warmup, reps, [&] { tl::copy(z, a); });
  // The device-result form: no host sync inside the timed region (as a pipeline would use it).
  const double t_sum = median_ms(d, warmup, reps, [&] { (void)tl::sum(a, tl::on_device); });
  sink = tl::sum(a);
  const bool ok = tl::to_host(z)[n - 1] == T(1.5) && sink == T(1.5) * T(n);
  std::printf("%-8s %-5s %12lld %10.4f %9.1f %10.4f %9.1f %10.4f %9.1f  %s\n", d.str().c_str(), tname,
              static_cast<long long>(n), t_triad, 4 * bytes / t_triad / 1e6, t_sum, bytes / t_sum / 1e6, t_copy,
              2 * bytes / t_copy / 1e6, ok ? "ok" : "WRONG");
}
}  // namespace

int main(int argc, char** argv) {
  int lo = 20, hi = 28, reps = 20, warmup = 3;
  std::string device;
  po::options_description opts("bench_local: fused triad, sum and copy bandwidth on one device");
  opts.add_options()("help,h", "show this help")("device", po::value(&device), "host or cuda:N (default: the rank's)")(
      "min-log2", po::value(&lo)->default_value(lo), "smallest size, 2^k elements")(
      "max-log2", po::value(&hi)->default_value(hi), "largest size, 2^k elements")(
      "reps", po::value(&reps)->default_value(reps), "timed repetitions (median reported)")(
      "warmup", po::value(&warmup)->default_value(warmup), "untimed repetitions first");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "bench_local: " << e.what() << "\n" << opts;
    return 2;
  }
  if (vm.count("help")) return std::cout << opts, 0;
  tessera::Runtime rt(argc, argv);
  const tessera::Device d = device.empty() ? rt.device() : tessera::Device::parse(device);
  if (rt.rank() != 0) return 0;
  std::printf("# %s\n# triad bytes = 4*n*size (3 reads + 1 write); sum = n*size; copy = 2*n*size; GB/s = 1e9 B/s\n",
              tessera::device_description(d).c_str());
  std::printf("%-8s %-5s %12s %10s %9s %10s %9s %10s %9s  %s\n", "device", "type", "n", "triad_ms", "triad_GB/s",
              "sum_ms", "sum_GB/s", "copy_ms", "copy_GB/s", "check");
  for (int k = lo; k <= hi; k += 2) {
    run<float>(d, tl::index_t(1) << k, warmup, reps, "f32");
    run<double>(d, tl::index_t(1) << k, warmup, reps, "f64");
  }
  return 0;
}
