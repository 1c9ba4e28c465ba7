// bench_cufftxt: NVIDIA's single-process multi-GPU cuFFT (cufftXt) on one 3-D FFT over the visible
// GPUs, the baseline for bench_fft (same result-line format). The array lives in x-slabs
// (CUFFT_XT_FORMAT_INPLACE); the forward output stays in cuFFT's shuffled layout and the inverse
// takes it back, as our FFT leaves a transposed layout. One process drives every GPU (no MPI).
#include <boost/program_options.hpp>
#include <cuda_runtime.h>
#include <cufftXt.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <iostream>
#include <numbers>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace po = boost::program_options;

namespace {
using Z = std::complex<double>;  // host-side reference values
constexpr int all_gpus = -1;  // calls on a multi-GPU plan address all of its GPUs

std::string on(int gpu) { return gpu == all_gpus ? "all GPUs" : "GPU " + std::to_string(gpu); }

void check(cudaError_t e, const char* call, int gpu) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed on " + on(gpu) + ": " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}
void check(cufftResult r, const char* call, int gpu) {
  static const char* names[] = {"SUCCESS", "INVALID_PLAN", "ALLOC_FAILED", "INVALID_TYPE", "INVALID_VALUE",
      "INTERNAL_ERROR", "EXEC_FAILED", "SETUP_FAILED", "INVALID_SIZE", "UNALIGNED_DATA", "0xA", "INVALID_DEVICE",
      "0xC", "NO_WORKSPACE", "NOT_IMPLEMENTED", "0xF", "NOT_SUPPORTED", "MISSING_DEPENDENCY"};
  const int i = static_cast<int>(r);
  if (r != CUFFT_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed on " + on(gpu) + ": cufftResult " + std::to_string(i) +
                             (i >= 0 && i < int(std::size(names)) ? std::string(" (CUFFT_") + names[i] + ")" : ""));
}
#define CHECK(call, gpu) check((call), #call, (gpu))

struct Options {
  int nx = 0, ny = 0, nz = 0, gpus = 0, iters = 10, warmup = 3;
  std::string type = "c2c", precision = "single";
};

// Runs f(begin, end) over [0, n) in one chunk per core and returns the largest result: filling and
// checking 2^30 elements on one core would take longer than the benchmark.
template <class F>
double parallel_max(std::size_t n, F f) {
  const unsigned t = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> out(t, 0.0);
  std::vector<std::jthread> pool;
  for (unsigned p = 0; p < t; ++p) pool.emplace_back([&, p] { out[p] = f(n * p / t, n * (p + 1) / t); });
  pool.clear();  // joins
  return *std::max_element(out.begin(), out.end());
}

// Input: a sum of plane waves a_m exp(2 pi i k_m.x / n): deterministic, cheap to recompute for the
// check (separable per axis) and exact in double (phases from integer k x mod n).
struct Input {
  std::array<int, 3> n;
  std::vector<std::array<long long, 3>> k;
  std::vector<Z> a = {{1.0, 0.0}, {0.5, -0.25}, {0.0, 0.25}};
  std::vector<std::array<std::vector<Z>, 3>> phase;  // [wave][axis][x]
  double amp = std::abs(a[0]) + std::abs(a[1]) + std::abs(a[2]);  // >= max |x|: the error scale

  Input(int nx, int ny, int nz)
      : n{nx, ny, nz}, k{{1, 2, 3}, {nx - 3LL, ny / 2, 1}, {nx / 3, ny - 1LL, nz / 2}}, phase(k.size()) {
    for (std::size_t m = 0; m < k.size(); ++m)
      for (int d = 0; d < 3; ++d) {
        k[m][d] = (k[m][d] % n[d] + n[d]) % n[d];
        for (long long x = 0; x < n[d]; ++x)
          phase[m][d].push_back(std::polar(1.0, 2 * std::numbers::pi * double(k[m][d] * x % n[d]) / n[d]));
      }
  }
  void row(std::size_t i, std::size_t j, std::vector<Z>& v) const {
    std::fill(v.begin(), v.end(), 0.0);
    for (std::size_t m = 0; m < k.size(); ++m) {
      const auto c = a[m] * phase[m][0][i] * phase[m][1][j];
      for (int z = 0; z < n[2]; ++z) v[z] += c * phase[m][2][z];
    }
  }
};

template <class R>
bool run(const Options& o, std::vector<int> gpus) {
  using C = std::complex<R>;
  const bool r2c = o.type == "r2c", multi = gpus.size() > 1, dbl = std::is_same_v<R, double>;
  const int ng = int(gpus.size()), plan_gpu = multi ? all_gpus : gpus[0];
  // In-place R2C pads each z-row to nz/2+1 complex values (2*(nz/2+1) reals); the input is Re(x).
  const std::size_t rows = std::size_t(o.nx) * o.ny, zc = r2c ? o.nz / 2 + 1 : o.nz;
  const double n = double(o.nx) * o.ny * o.nz;
  const Input in(o.nx, o.ny, o.nz);
  std::vector<C> host(rows * zc);
  // fill: writes the input into host; else returns max |host / div - input|.
  auto sweep = [&](bool fill, double div) {
    return parallel_max(rows, [&](std::size_t b, std::size_t e) {
      std::vector<Z> v(o.nz);
      double d = 0;
      for (std::size_t r = b; r < e; ++r) {
        in.row(r / o.ny, r % o.ny, v);
        C* c = host.data() + r * zc;
        R* re = reinterpret_cast<R*>(c);
        for (int z = 0; z < o.nz; ++z) {
          const Z x = r2c ? Z(v[z].real()) : v[z];
          if (!fill) d = std::max(d, std::abs((r2c ? Z(re[z]) : Z(c[z])) / div - x));
          else if (r2c) re[z] = R(x.real());
          else c[z] = C(x);
        }
      }
      return d;
    });
  };
  sweep(true, 1);

  CHECK(cudaSetDevice(gpus[0]), gpus[0]);
  const cufftType tf = r2c ? (dbl ? CUFFT_D2Z : CUFFT_R2C) : (dbl ? CUFFT_Z2Z : CUFFT_C2C);
  const cufftType ti = r2c ? (dbl ? CUFFT_Z2D : CUFFT_C2R) : tf;
  auto make_plan = [&](cufftType t) {
    cufftHandle p;
    std::vector<std::size_t> work(ng);
    CHECK(cufftCreate(&p), plan_gpu);
    if (multi) {  // cufftXtSetGPUs goes between create and make, and needs >= 2 GPUs
      CHECK(cufftXtSetGPUs(p, ng, gpus.data()), plan_gpu);
      CHECK(cufftMakePlan3d(p, o.nx, o.ny, o.nz, t, work.data()), plan_gpu);
    } else {
      long long dims[3] = {o.nx, o.ny, o.nz};
      CHECK(cufftMakePlanMany64(p, 3, dims, nullptr, 1, 0, nullptr, 1, 0, t, 1, work.data()), plan_gpu);
    }
    return p;
  };
  const cufftHandle fwd = make_plan(tf), inv = r2c ? make_plan(ti) : fwd;

  // Device data: a cufftXt descriptor (one slab per GPU) or one buffer; shard[g] is GPU dev[g]'s part.
  const std::size_t bytes = host.size() * sizeof(C);
  cudaLibXtDesc* desc = nullptr;
  std::vector<void*> shard(ng), backup(ng);
  std::vector<std::size_t> shard_bytes(ng, bytes);
  std::vector<int> dev = gpus;
  if (multi) {
    CHECK(cufftXtMalloc(fwd, &desc, CUFFT_XT_FORMAT_INPLACE), plan_gpu);
    CHECK(cufftXtMemcpy(fwd, desc, host.data(), CUFFT_COPY_HOST_TO_DEVICE), plan_gpu);
    const cudaXtDesc& x = *desc->descriptor;
    for (int g = 0; g < ng; ++g) shard[g] = x.data[g], shard_bytes[g] = x.size[g], dev[g] = x.GPUs[g];
  } else {
    CHECK(cudaMalloc(&shard[0], bytes), dev[0]);
    CHECK(cudaMemcpy(shard[0], host.data(), bytes, cudaMemcpyHostToDevice), dev[0]);
  }
  // Forward + inverse scales by N, which overflows single precision within a few passes: each
  // timed pass restarts from a device copy of the input, restored outside the timed region.
  auto sync_all = [&] {
    for (int g : dev) CHECK(cudaSetDevice(g), g), CHECK(cudaDeviceSynchronize(), g);
    CHECK(cudaSetDevice(gpus[0]), gpus[0]);  // single-GPU plans run on the current device
  };
  auto copy_all = [&](std::vector<void*>& to, std::vector<void*>& from, bool alloc) {
    for (int g = 0; g < ng; ++g) {
      CHECK(cudaSetDevice(dev[g]), dev[g]);
      if (alloc) CHECK(cudaMalloc(&to[g], shard_bytes[g]), dev[g]);
      CHECK(cudaMemcpy(to[g], from[g], shard_bytes[g], cudaMemcpyDeviceToDevice), dev[g]);
    }
    sync_all();
  };
  copy_all(backup, shard, true);
  auto exec = [&](int dir) {
    const cufftHandle p = dir == CUFFT_FORWARD ? fwd : inv;
    if (multi) CHECK(cufftXtExecDescriptor(p, desc, desc, dir), plan_gpu);
    else CHECK(cufftXtExec(p, shard[0], shard[0], dir), plan_gpu);
    sync_all();
  };
  auto download = [&](cufftHandle p) {  // cufftXtMemcpy returns natural order
    if (multi) CHECK(cufftXtMemcpy(p, host.data(), desc, CUFFT_COPY_DEVICE_TO_HOST), plan_gpu);
    else CHECK(cudaMemcpy(host.data(), shard[0], bytes, cudaMemcpyDeviceToHost), dev[0]);
  };

  // cufftXt runs on its own streams on every GPU, so no one GPU's events bracket the transform:
  // time on the host around the exec and a synchronize of every GPU (inside exec).
  std::vector<double> t_fwd, t_inv;
  for (int it = 0; it < o.warmup + o.iters; ++it) {
    copy_all(shard, backup, false);
    for (int dir : {CUFFT_FORWARD, CUFFT_INVERSE}) {
      const auto t0 = std::chrono::steady_clock::now();
      exec(dir);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (it >= o.warmup) (dir == CUFFT_FORWARD ? t_fwd : t_inv).push_back(ms);
    }
  }
  download(inv);  // the last timed round trip: max |result / N - input| / sum |a_m|
  const double err = sweep(false, n) / in.amp;

  auto median = [](std::vector<double> t) { std::sort(t.begin(), t.end()); return t[t.size() / 2]; };
  const double tf_ms = median(t_fwd), ti_ms = median(t_inv);
  const double gflop = (r2c ? 2.5 : 5.0) * n * std::log2(n) / 1e9;  // r2c: half the c2c count, as heFFTe
  std::printf("cufftxt %s %s %dx%dx%d gpus %d: forward %.3f ms (%.1f GFlop/s), backward %.3f ms (%.1f GFlop/s), "
              "max error %.1e\n", o.type.c_str(), o.precision.c_str(), o.nx, o.ny, o.nz, ng, tf_ms,
              gflop / tf_ms * 1e3, ti_ms, gflop / ti_ms * 1e3, err);
  std::fflush(stdout);
  // Plans and device memory are left to process exit: main returns right after.
  const double tol = dbl ? 1e-10 : 1e-4;
  if (err > tol) std::cerr << "bench_cufftxt: max error " << err << " exceeds the tolerance " << tol << "\n";
  return err <= tol;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    po::options_description opts("bench_cufftxt nx ny nz [options]: cuFFT's single-process multi-GPU 3-D FFT");
    opts.add_options()("help,h", "show this help")                               //
        ("nx", po::value(&o.nx)->required(), "size of the slowest axis")          //
        ("ny", po::value(&o.ny)->required(), "size of the middle axis")           //
        ("nz", po::value(&o.nz)->required(), "size of the fastest (contiguous) axis")  //
        ("type", po::value(&o.type)->default_value(o.type), "c2c or r2c")        //
        ("precision", po::value(&o.precision)->default_value(o.precision), "single or double")  //
        ("gpus", po::value(&o.gpus), "use GPUs 0..N-1 (default: all visible)")  //
        ("iters", po::value(&o.iters)->default_value(o.iters), "timed forward/backward pairs (median)")  //
        ("warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed pairs first");
    po::positional_options_description pos;
    pos.add("nx", 1).add("ny", 1).add("nz", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    if (vm.count("help")) return std::cout << opts << "\nexample: bench_cufftxt 1024 1024 1024 --gpus 4\n", 0;
    po::notify(vm);
    auto require = [](bool ok, const std::string& what) { if (!ok) throw std::invalid_argument(what); };
    require(o.type == "c2c" || o.type == "r2c", "--type must be c2c or r2c, not " + o.type);
    require(o.precision == "single" || o.precision == "double", "--precision must be single or double");
    require(o.nx >= 1 && o.ny >= 1 && o.nz >= 1 && o.iters >= 1 && o.warmup >= 0,
            "need nx, ny, nz, --iters >= 1 and --warmup >= 0");
    int count = 0;
    CHECK(cudaGetDeviceCount(&count), all_gpus);
    if (!vm.count("gpus")) o.gpus = count;
    require(o.gpus >= 1 && o.gpus <= count, "--gpus must be in [1, " + std::to_string(count) + "], the visible GPUs");
    std::vector<int> gpus(o.gpus);
    for (int g = 0; g < o.gpus; ++g) gpus[g] = g;
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0), 0);
    std::printf("# bench_cufftxt: %d GPUs, %s\n", o.gpus, prop.name);
    std::fflush(stdout);
    return (o.precision == "double" ? run<double>(o, gpus) : run<float>(o, gpus)) ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "bench_cufftxt: " << e.what() << "\n";
    return 1;
  }
}
