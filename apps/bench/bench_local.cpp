// bench_local: single-device bandwidth of the local layer. Fused triad z = a*b + c (f32, f64,
// c64, c128), whole-array sum and copy, over a range of sizes; then, at the largest size, the
// "figure" lines: sums along each axis of a square 2-D array, a strided copy (every other
// column), a transposing copy and a cast f32 -> f64, in the format of apps/bench/peers/cupy_local.py.
// GB/s = bytes moved / median time (CUDA events on GPU, a steady clock on host). With --overhead,
// the host time per call of small operations and of the pieces they are made of ("overhead" lines,
// microseconds): at 2^28 elements a few microseconds are a percent. With --jit, the same
// expressions through the runtime kernel compiler beside the nvcc executor ("jit" lines), string
// reductions (a sum of squares, an L2 norm along axis 1: "rk" lines), its
// first-use times (cold and from the disk cache) and its per-call overhead. Compiled by nvcc in
// CUDA builds.
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>
#include <tessera/local/expr.hpp>
#include <tessera/local/reduce.hpp>
#include <tessera/local/jit/string_kernel.hpp>

#include "common/timing.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
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
// "figure <op> <type> GB/s <value>" lines at n elements (a square r x r array, r = 2^(k/2)).
template <class T>
void figures(const tessera::Device& d, int k, int warmup, int reps, const char* tname) {
  const tl::index_t r = tl::index_t(1) << (k / 2), n = r * r;
  const double size = sizeof(T);
  auto a = tl::full<T, 2>({r, r}, T(1), d);
  auto half = tl::empty<T, 2>({r, r / 2}, d);
  auto t = tl::empty<T, 2>({r, r}, d);
  auto line = [&](const char* op, double bytes, double ms) {
    std::printf("figure %s %s GB/s %.1f\n", op, tname, bytes / ms / 1e6);
  };
  line("axis0-sum", n * size, median_ms(d, warmup, reps, [&] { (void)tl::sum(a, 0); }));
  line("axis1-sum", n * size, median_ms(d, warmup, reps, [&] { (void)tl::sum(a, 1); }));
  line("strided-copy", 2 * (n / 2) * size, median_ms(d, warmup, reps, [&] { tl::copy(half, a.slice(1, 0, r, 2)); }));
  line("transpose-copy", 2 * n * size, median_ms(d, warmup, reps, [&] { tl::copy(t, a.permute({1, 0})); }));
  const bool ok = tl::to_host(tl::sum(a, 0))[r - 1] == T(r) && tl::to_host(tl::sum(a, 1))[0] == T(r);
  if (!ok) std::printf("figure axis-sums %s WRONG\n", tname);
  if constexpr (std::is_same_v<T, float>) {
    auto w = tl::empty<double, 2>({r, r}, d);
    line("cast-to-f64", n * (4.0 + 8.0), median_ms(d, warmup, reps, [&] { tl::cast(w, a); }));
  }
}

#ifdef __CUDACC__
__global__ void empty_kernel() {}
#endif
// Host microseconds per call of `fn`, the median of 20 batches of 50 calls; the stream is drained
// between batches (outside the timing), so that a full launch queue never blocks a call.
double host_us(const tessera::Device& d, const std::function<void()>& fn) {
  auto& s = tessera::Stream::default_for(d);
  std::vector<double> t;
  for (int b = 0; b < 21; ++b) {
    s.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    if (b > 0) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 50);
  }
  s.synchronize();
  return apps::median(std::move(t));
}
void overheads(const tessera::Device& d) {
  auto a = tl::full<double, 1>({256}, 1.0, d), b = tl::full<double, 1>({256}, 2.0, d);
  auto z = tl::empty<double, 1>({256}, d);
  auto m = tl::full<double, 2>({16, 16}, 1.0, d);
  tessera::Event ev(d);
  auto line = [](const char* what, double us) { std::printf("overhead %-28s %8.2f us\n", what, us); };
#ifdef __CUDACC__
  if (d.is_cuda()) {
    auto cs = static_cast<cudaStream_t>(tessera::Stream::default_for(d).native());
    line("empty kernel launch (the floor)", host_us(d, [&] { empty_kernel<<<1, 1, 0, cs>>>(); }));
  }
#endif
  line("Stream::default_for", host_us(d, [&] { (void)tessera::Stream::default_for(d); }));
  line("DeviceGuard", host_us(d, [&] { tessera::DeviceGuard g(d); }));
  line("Event::record", host_us(d, [&] { ev.record(tessera::Stream::default_for(d)); }));
  line("Buffer(8) made and freed", host_us(d, [&] { tessera::Buffer buf(8, d); }));
  line("Array<double,1>({1})", host_us(d, [&] { tl::Array<double, 1> r({1}, d); }));
  line("z = a * b + c (256)", host_us(d, [&] { z = a * b + a; }));
  line("copy (256)", host_us(d, [&] { tl::copy(z, a); }));
  line("sum on_device (256)", host_us(d, [&] { (void)tl::sum(a, tl::on_device); }));
  line("sum axis 1 (16x16)", host_us(d, [&] { (void)tl::sum(m, 1); }));
}

// ---- --jit: the runtime kernel compiler (NVRTC) beside the nvcc executor, same expressions ----
// Runs `assign` with TESSERA_JIT off (this file is nvcc's: the compile-time executor) or on.
void use_jit(bool on) {
  tessera::Settings s = tessera::settings();
  s.jit = on ? tessera::Settings::Jit::on : tessera::Settings::Jit::automatic;
  tessera::set_settings(s);
}
// "jit <expr> <type> nvcc_GB/s X jit_GB/s Y ratio Y/X" for `fn` moving `bytes`.
void jit_line(const tessera::Device& d, const char* expr, const char* tname, double bytes, int warmup, int reps,
              const std::function<void()>& fn) {
  use_jit(false);
  const double t_nvcc = median_ms(d, warmup, reps, fn);
  use_jit(true);
  const double t_jit = median_ms(d, warmup, reps, fn);
  use_jit(false);
  std::printf("jit %-14s %-4s nvcc_GB/s %8.1f jit_GB/s %8.1f ratio %.3f\n", expr, tname, bytes / t_nvcc / 1e6,
              bytes / t_jit / 1e6, t_nvcc / t_jit);
}
template <class T>
void jit_expressions(const tessera::Device& d, tl::index_t n, int warmup, int reps, const char* tname) {
  const double size = sizeof(T);
  std::vector<tl::Array<T, 1>> in;
  for (int i = 0; i < 10; ++i) in.push_back(tl::full<T, 1>({n}, T(0.5 + 0.1 * i), d));
  auto z = tl::empty<T, 1>({n}, d);
  const auto &a = in[0], &b = in[1], &c = in[2];
  jit_line(d, "triad", tname, 4 * n * size, warmup, reps, [&] { z = a * b + c; });
  if constexpr (!tessera::is_complex_v<T>) {
    jit_line(d, "x*sin(y)+exp(x)", tname, 3 * n * size, warmup, reps, [&] { z = a * tl::sin(b) + tl::exp(a); });
    jit_line(d, "exp(x)*y", tname, 3 * n * size, warmup, reps, [&] { z = tl::exp(a) * b; });
    jit_line(d, "10-operand", tname, 11 * n * size, warmup, reps, [&] {
      z = in[0] * in[1] + in[2] * in[3] + in[4] * in[5] + in[6] * in[7] + in[8] * in[9];
    });
    const tl::index_t r = tl::index_t(1) << 14, cols = n / r;
    auto m = a.template reshape<2>({r, cols});
    auto half = tl::empty<T, 2>({r, cols / 2}, d);
    jit_line(d, "strided-view", tname, 2 * (n / 2) * size, warmup, reps, [&] { half = m.slice(1, 0, cols, 2) * T(2); });
  }
}
// String reductions, as CuPy's ReductionKernel: "rk <what> <type> GB/s X" (bytes read once).
template <class T> void jit_reductions(const tessera::Device& d, tl::index_t n, int warmup, int reps, const char* tname) {
  const double bytes = double(n) * sizeof(T);
  auto x = tl::full<T, 1>({n}, T(0.5), d);
  auto total = tl::empty<T, 1>({1}, d);
  const tl::ReductionKernel sumsq("T x", "T y", "x * x", "a + b", "y = a", "0", "bench_sum_of_squares");
  std::printf("rk %-18s %-4s GB/s %8.1f\n", "sum-of-squares", tname,
              bytes / median_ms(d, warmup, reps, [&] { sumsq(x, total); }) / 1e6);
  const tl::index_t r = tl::index_t(1) << 14;
  auto m = x.template reshape<2>({r, n / r});
  auto norms = tl::empty<T, 2>({r, 1}, d);
  const tl::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "bench_l2_rows");
  std::printf("rk %-18s %-4s GB/s %8.1f\n", "l2-norm-axis-1", tname,
              bytes / median_ms(d, warmup, reps, [&] { l2.along_last_axis(m, norms); }) / 1e6);
}
// Milliseconds of wall time of fn, the device drained.
double wall_ms(const tessera::Device& d, const std::function<void()>& fn) {
  tessera::Stream::default_for(d).synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  tessera::Stream::default_for(d).synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
void jit_compile_times(const tessera::Device& d) {
  tessera::Settings s = tessera::settings();
  const std::string dir = "/tmp/tessera_bench_kernels_" + std::to_string(::getpid());
  s.kernel_cache_dir = dir;
  s.jit = tessera::Settings::Jit::on;
  tessera::set_settings(s);
  auto x = tl::full<float, 1>({1 << 20}, 1.0f, d), y = tl::full<float, 1>({1 << 20}, 2.0f, d);
  auto z = tl::empty<float, 1>({1 << 20}, d);
  double cold = 0, disk = 0;
  {
    tessera::Context fresh;  // its memory cache is empty
    cold = wall_ms(d, [&] { z = x * tl::sin(y) + tl::exp(x); });
  }
  {
    tessera::Context fresh;
    disk = wall_ms(d, [&] { z = x * tl::sin(y) + tl::exp(x); });
  }
  std::printf("jit first use, cold (NVRTC)          %8.2f ms\n", cold);
  std::printf("jit first use, from the disk cache   %8.2f ms\n", disk);
  tessera::local::jit::DiskCache(dir).clear();
  std::filesystem::remove_all(dir);
  use_jit(false);
}
void jit_overheads(const tessera::Device& d) {
  auto a = tl::full<double, 1>({256}, 1.0, d);
  auto z = tl::empty<double, 1>({256}, d);
  auto line = [](const char* what, double us) { std::printf("overhead %-28s %8.2f us\n", what, us); };
  use_jit(false);
  line("z = a + a (256), nvcc", host_us(d, [&] { z = a + a; }));
  use_jit(true);
  line("z = a + a (256), jit", host_us(d, [&] { z = a + a; }));
  use_jit(false);
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
      "warmup", po::value(&warmup)->default_value(warmup), "untimed repetitions first")(
      "no-figures", "skip the axis-sum, strided, transpose and cast figures")(
      "overhead", "then the host time per call of small operations and their parts")(
      "jit", "then the runtime kernel compiler (NVRTC) beside the nvcc executor: bandwidth, compile times, overhead");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "bench_local: " << e.what() << "\n" << opts;
    return 2;
  }
  if (vm.count("help")) return std::cout << opts, 0;
  const bool figures_on = !vm.count("no-figures");
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
    run<tessera::complex64>(d, tl::index_t(1) << k, warmup, reps, "c64");
    run<tessera::complex128>(d, tl::index_t(1) << k, warmup, reps, "c128");
  }
  if (figures_on) {
    figures<float>(d, hi, warmup, reps, "f32");
    figures<double>(d, hi, warmup, reps, "f64");
  }
  if (vm.count("overhead")) overheads(d);
  if (vm.count("jit") && d.is_cuda()) {
    jit_expressions<float>(d, tl::index_t(1) << hi, warmup, reps, "f32");
    jit_expressions<double>(d, tl::index_t(1) << hi, warmup, reps, "f64");
    jit_expressions<tessera::complex64>(d, tl::index_t(1) << hi, warmup, reps, "c64");
    jit_reductions<float>(d, tl::index_t(1) << hi, warmup, reps, "f32");
    jit_reductions<double>(d, tl::index_t(1) << hi, warmup, reps, "f64");
    jit_compile_times(d);
    jit_overheads(d);
  }
  return 0;
}
