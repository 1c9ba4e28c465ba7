// poisson: lap(u) = f on the 2*pi-periodic box by the distributed FFT: u_hat = -f_hat / |k|^2
// (R2C forward, C2R backward), the k = 0 mode set to 0 (zero-mean u). By default one call,
// plan->apply(f, -1/|k|^2): the factors and 1/N ride on the forward FFT's stores (fft::Spectral: no
// pass of their own), and on one GPU the forward's last pass, the factors and the backward's first
// pass are one kernel; --variant forward-backward makes the two calls (the factors on the forward's
// stores); --variant kernel multiplies by a precomputed array in a fused kernel between them.
// Manufactured solution u = sin(x) cos(2y) sin(3z) + cos(4x - 2y + z) / 2, so
// f = -14 sin(x) cos(2y) sin(3z) - 21/2 cos(4x - 2y + z); the spectral solve is exact up to
// round-off, so the max error says whether the transforms and wavenumbers are right.
// Time per solve: median over --iters of the slowest rank; the FFT rate counts the two real
// transforms as 2.5 N log2 N flops each (heFFTe's convention for R2C/C2R).
// Compiled by nvcc in CUDA builds (fused expressions, from_function on the GPU).
#include <boost/program_options.hpp>
#include <tessera/distributed/elementwise.hpp>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numbers>
#include <vector>

#include "common/cli.hpp"
#include "common/timing.hpp"

namespace po = boost::program_options;
namespace td = tessera::distributed;
namespace fft = tessera::fft;
using tessera::local::index_t;

namespace {

struct Options {
  std::string n_text = "64", grid_text, device = "auto", dtype = "double";
  std::array<long long, 3> n{};
  int iters = 5;
  double tol = 0;
  bool check = false;
  std::string variant = "spectral";
};

template <class T>
int run(tessera::Runtime& rt, const Options& o) {
  auto& world = rt.world();
  const bool root = rt.rank() == 0;
  const auto d = apps::pick_device(o.device, rt);
  tessera::check_device_usable(d);
  const int p = rt.size();
  const td::Index<3> n{o.n[0], o.n[1], o.n[2]};

  // A 1-D grid (slabs: axis 0 split) when there are no more ranks than planes, else pencils on a
  // 2-D grid (axes 0 and 1 split): the layouts the FFT's first stage wants, so nothing moves first.
  std::vector<int> dims;
  if (!o.grid_text.empty()) {
    const auto g = apps::parse_list(o.grid_text, "grid");
    if (g.size() > 2) throw tessera::InvalidArgument("--grid '" + o.grid_text + "': give p (slabs) or p,q (pencils)");
    dims.assign(g.begin(), g.end());
  } else {
    dims = p <= n[0] ? std::vector<int>{p} : std::vector<int>{0, 0};
  }
  const td::ProcessGrid grid(world, dims);
  const bool slabs = grid.ndims() == 1;
  const td::Layout<3> in(grid, n, slabs ? td::Layout<3>::Split{0, -1, -1} : td::Layout<3>::Split{0, 1, -1});
  fft::Options fo;
  fo.decomposition = slabs ? fft::Decomposition::slab : fft::Decomposition::pencil;
  const auto plan = fft::get_plan<T, 3>(in, d, fo);
  const auto& out = plan->output_layout();

  const double hx = 2 * std::numbers::pi / n[0], hy = 2 * std::numbers::pi / n[1], hz = 2 * std::numbers::pi / n[2];
  auto exact = td::from_function<T, 3>(in, d, [=] TESSERA_HD(const td::Index<3>& i) -> double {
    const double x = i[0] * hx, y = i[1] * hy, z = i[2] * hz;
    return ::sin(x) * ::cos(2 * y) * ::sin(3 * z) + 0.5 * ::cos(4 * x - 2 * y + z);
  });
  auto f = td::from_function<T, 3>(in, d, [=] TESSERA_HD(const td::Index<3>& i) -> double {
    const double x = i[0] * hx, y = i[1] * hy, z = i[2] * hz;
    return -14 * ::sin(x) * ::cos(2 * y) * ::sin(3 * z) - 10.5 * ::cos(4 * x - 2 * y + z);
  });

  // --variant kernel: -1/|k|^2 on the spectral layout; spacing 1/n makes fftfreq return integer
  // wavenumbers, which on the 2*pi box are the angular ones. The last axis holds rfftfreq.
  const bool kernel = o.variant == "kernel";
  const fft::Spectral inverse_laplacian{fft::Spectral::Kind::inverse_laplacian};
  td::Array<T, 3> mult;
  if (kernel) {
    const auto kx = fft::fftfreq<T, 3>(out, 0, d, 1.0 / n[0]);
    const auto ky = fft::fftfreq<T, 3>(out, 1, d, 1.0 / n[1]);
    const auto kz = fft::fftfreq<T, 3>(out, 2, d, 1.0 / n[2], n[2]);
    mult = td::Array<T, 3>(out.with_halo({}), d);
    mult = td::map(
        [](const auto& a, const auto& b, const auto& c) {
          const auto k2 = a * a + b * b + c * c;
          return tessera::local::where(k2 > T(0), T(-1) / k2, T(0));
        },
        kx, ky, kz);
  }

  auto solve = [&] {
    if (o.variant == "spectral") return plan->apply(f, inverse_laplacian);
    if (o.variant == "forward-backward") {
      // Norm::forward puts the whole 1/N on the forward's multiply (with -1/|k|^2) and none on the
      // backward: one multiply for both. The spectrum is a temporary: the C2R may overwrite it.
      auto F = plan->forward(f, fft::Norm::forward, inverse_laplacian);
      return plan->backward_in_place(F, fft::Norm::forward);
    }
    auto F = plan->forward(f);
    F = F * mult;  // one fused kernel per rank
    return plan->backward(F);
  };
  auto u = solve();  // warm-up: plans, communicators, buffers
  u.stream().synchronize();
  const double med = apps::median_ms(world, u.stream(), 0, o.iters, [&] { u = solve(); });

  // Max error relative to max |u_exact|.
  td::Array<T, 3> diff(in, d);
  diff = td::map([](const auto& a) { return tessera::local::abs(a); }, exact);
  const double umax = td::max(diff);
  diff = td::map([](const auto& a, const auto& b) { return tessera::local::abs(a - b); }, u, exact);
  const double err = td::max(diff) / umax;
  const double tol = o.tol > 0 ? o.tol : (sizeof(T) == 8 ? 1e-10 : 1e-4);
  const bool ok = err <= tol;
  if (root) {
    const double N = double(n[0]) * n[1] * n[2];
    const auto& g = grid.dims();
    std::printf("poisson: %lldx%lldx%lld %s on %d ranks (%s, grid %s, %s multiply), %s\n", (long long)n[0],
                (long long)n[1], (long long)n[2], o.dtype.c_str(), p, slabs ? "slabs" : "pencils",
                (std::to_string(g[0]) + (slabs ? "" : "x" + std::to_string(g[1]))).c_str(), o.variant.c_str(),
                tessera::device_description(d).c_str());
    if (med > 0)
      std::printf("poisson: %.3f ms per solve (median of %d), %.3e cells/s, FFTs %.1f GFlop/s\n", med, o.iters,
                  N / (med * 1e-3), 2 * 2.5 * N * std::log2(N) / (med * 1e-3) / 1e9);
    std::printf("poisson: max error %.3e relative to max |u| (tolerance %.1e)\n", err, tol);
    if (o.check) std::printf("poisson: check %s\n", ok ? "passed" : "FAILED");
  }
  return o.check && !ok ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  Options o;
  po::options_description opts("poisson: lap(u) = f on the periodic box by the distributed FFT\noptions");
  opts.add_options()("help,h", "this help")
      ("n", po::value(&o.n_text)->default_value(o.n_text), "global size: N or nx,ny,nz (each >= 10)")
      ("grid", po::value(&o.grid_text), "process grid: p (slabs) or p,q (pencils); 0 = choose")
      ("device", po::value(&o.device)->default_value(o.device), "auto, host or cuda")
      ("dtype", po::value(&o.dtype)->default_value(o.dtype), "double or float")
      ("iters", po::value(&o.iters)->default_value(o.iters), "timed solves (after one warm-up)")
      ("variant", po::value(&o.variant)->default_value(o.variant),
       "spectral (plan->apply: -1/|k|^2 on the FFT's stores), forward-backward (the same factors, two "
       "calls) or kernel (a multiply kernel between the FFTs)")
      ("check", po::bool_switch(&o.check), "exit 1 unless the max error is within tolerance")
      ("tol", po::value(&o.tol)->default_value(0), "error tolerance (0: 1e-10 double, 1e-4 float)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      if (rt.rank() == 0) std::cout << opts << "\n";
      return 0;
    }
    o.n = apps::parse_shape3(o.n_text, 10);  // wavenumbers up to 4 stay below Nyquist
    apps::check_dtype(o.dtype);
    if (o.iters < 0) throw tessera::InvalidArgument("--iters must be >= 0");
    if (o.variant != "spectral" && o.variant != "forward-backward" && o.variant != "kernel")
      throw tessera::InvalidArgument("--variant '" + o.variant + "': spectral, forward-backward or kernel");
    return o.dtype == "float" ? run<float>(rt, o) : run<double>(rt, o);
  } catch (const po::error& e) {
    if (rt.rank() == 0) std::fprintf(stderr, "poisson: %s (poisson --help)\n", e.what());
    return 2;
  } catch (const tessera::InvalidArgument& e) {
    if (rt.rank() == 0) std::fprintf(stderr, "poisson: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "poisson: %s\n", e.what());
    return 2;
  }
}
