// bench_fft nx ny nz: the distributed 3-D FFT (tessera::fft) on every rank's device, in the
// manner of heFFTe's speed3d. Prints forward and backward times (median over --iters of the
// slowest rank), GFlop/s = 5 N log2(N) / t (half that for r2c, as heFFTe), and two errors:
//  - forward: the input is one plane wave exp(2 pi i k.x / n) (real: cos, k on the stored half),
//    whose exact transform is N (N/2) at k and 0 elsewhere: ||y - exact||_2 / ||exact||_2;
//  - round trip: ||backward(forward(x)) - x||_2 / ||x||_2 (norm=backward, so no rescaling).
// The same result-line format as bench_cufftxt, so both can run side by side on one machine.
// Compiled by nvcc in CUDA builds (from_function and fused expressions on the device).
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>
#include <tessera/distributed/creation.hpp>
#include <tessera/distributed/elementwise.hpp>
#include <tessera/distributed/exchange.hpp>
#include <tessera/fft/fft.hpp>
#include <tessera/distributed/reduce.hpp>
#include <tessera/local/fft_plan.hpp>

#include "common/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

namespace po = boost::program_options;
namespace td = tessera::distributed;
namespace fft = tessera::fft;
using tessera::local::index_t;

namespace {
struct Options {
  index_t nx = 0, ny = 0, nz = 0;
  int iters = 10, warmup = 3, chunks = 0, emulate = 0;
  std::string type = "c2c", precision = "single", decomp = "auto", transport = "auto";
};

// The plane wave's wavenumber: off every axis' zero and, for r2c, inside the stored half with no
// mirror image there (0 < k_z < nz/2 needs nz >= 3).
td::Index<3> wavenumber(const Options& o) {
  auto pick = [](index_t n, index_t want) { return n > 1 ? want % n : 0; };
  return {pick(o.nx, 3), pick(o.ny, o.ny / 2 + 1), o.nz >= 3 ? 1 : 0};
}

// exp(2 pi i k.x / n), or its real part; the phase in turns is reduced exactly in integers.
template <class T>
struct PlaneWave {
  td::Index<3> k, n;
  TESSERA_HD T operator()(const td::Index<3>& g) const {
    double t = 0;
    for (int a = 0; a < 3; ++a) t += double((k[a] * g[a]) % n[a]) / double(n[a]);
    const double ph = 2.0 * 3.14159265358979323846 * t;
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(cos(ph));
    else return T(static_cast<typename T::value_type>(cos(ph)), static_cast<typename T::value_type>(sin(ph)));
  }
};
// The exact transform of PlaneWave: `peak` at k, zero elsewhere.
template <class C>
struct Spike {
  td::Index<3> k;
  typename C::value_type peak;
  TESSERA_HD C operator()(const td::Index<3>& g) const {
    return g[0] == k[0] && g[1] == k[1] && g[2] == k[2] ? C(peak, 0) : C(0, 0);
  }
};

// --emulate P (one rank, C2C): the local work one of P ranks does in a slab forward of the same
// global size, each part timed alone: the 2-D FFT of its n0/P planes (stage 0), the 1-D FFT along
// axis 0 of its [n0, n1/P, n2] block with stride (stage 1), and, for comparison, the same number
// of contiguous 1-D transforms. Their sum is the compute the transposes must hide.
template <class C>
void emulate(tessera::Runtime& rt, const Options& o, int P) {
  namespace lf = tessera::local::fft;
  const auto d = rt.device();
  const auto& s = tessera::Stream::default_for(d);
  const lf::Precision prec = lf::precision_of<typename C::value_type>();
  const index_t p0 = (o.nx + P - 1) / P, p1 = (o.ny + P - 1) / P;
  const index_t elems = std::max(p0 * o.ny * o.nz, o.nx * p1 * o.nz);
  tessera::local::Array<C, 1> buf(td::Index<1>{elems}, d);
  tessera::local::fill(buf, C(1, 0));
  auto time = [&](const char* what, lf::PlanDesc desc) {
    const auto plan = lf::get_plan(desc);
    const double ms = apps::median_ms(rt.world(), s, o.warmup, o.iters,
                                [&] { plan->execute(buf.data(), buf.data(), lf::Direction::forward, s); });
    std::printf("emulate %d ranks: %-34s %8.3f ms\n", P, what, ms);
    return ms;
  };
  auto s0 = lf::make_desc(d, lf::Kind::c2c, prec, {o.ny, o.nz}, p0, true);
  const double t0 = time("stage 0: 2-D FFTs of n0/P planes", s0);
  lf::PlanDesc s1 = lf::make_desc(d, lf::Kind::c2c, prec, {o.nx}, p1 * o.nz, true);
  s1.istride = s1.ostride = p1 * o.nz;
  s1.idist = s1.odist = 1;
  s1.inembed[0] = s1.onembed[0] = o.nx;
  const double t1 = time("stage 1: strided 1-D FFTs (axis 0)", s1);
  time("reference: contiguous 1-D FFTs", lf::make_desc(d, lf::Kind::c2c, prec, {o.nx}, p1 * o.nz, true));
  std::printf("emulate %d ranks: stage 0 + stage 1 = %.3f ms of local FFT per rank\n", P, t0 + t1);
}

template <class In>
bool run(tessera::Runtime& rt, const Options& o) {
  using Real = typename fft::Plan<In, 3>::Real;
  using C = std::complex<Real>;
  constexpr bool r2c = fft::Plan<In, 3>::real_input;
  auto& world = rt.world();
  const auto d = rt.device();
  const auto& s = tessera::Stream::default_for(d);
  const bool root = world.rank() == 0;
  const td::Index<3> n{o.nx, o.ny, o.nz};
  const td::Layout<3> in = td::Layout<3>::block(td::ProcessGrid(world), n);
  fft::Options opt;
  opt.decomposition = o.decomp == "slab" ? fft::Decomposition::slab
                      : o.decomp == "pencil" ? fft::Decomposition::pencil : fft::Decomposition::automatic;
  opt.chunks = o.chunks;
  const auto plan = fft::get_plan<In, 3>(in, d, opt);

  const td::Index<3> k = wavenumber(o);
  const double N = double(o.nx) * o.ny * o.nz;
  const auto x = td::from_function<In, 3>(plan->input_layout(), d, PlaneWave<In>{k, n});
  const Real peak = static_cast<Real>(r2c ? N / 2 : N);
  const auto exact = td::from_function<C, 3>(plan->output_layout(), d, Spike<C>{k, peak});

  td::Array<C, 3> y;
  td::Array<In, 3> back;
  const double t_fwd = apps::median_ms(world, s, o.warmup, o.iters, [&] { y = plan->forward(x); });
  const double t_bwd = apps::median_ms(world, s, o.warmup, o.iters, [&] { back = plan->backward(y); });
  // backward() keeps y, which a C2R pays for with a copy of it; backward_in_place lets the C2R
  // overwrite its input, as plain cuFFT's in-place C2R does (timed on a scratch copy of y).
  double t_bwd_ip = 0;
  if (r2c) {
    td::Array<C, 3> scratch(y.layout(), d);
    tessera::local::copy(scratch.local(), y.local());  // a copy: `scratch = y` would share y's shard
    td::Array<In, 3> out;
    t_bwd_ip = apps::median_ms(world, s, o.warmup, o.iters, [&] { out = plan->backward_in_place(scratch); });
  }

  td::Array<C, 3> dy(y.layout(), d);
  dy = y - exact;
  td::Array<In, 3> dx(x.layout(), d);
  dx = back - x;
  const double err_fwd = double(td::norm2(dy)) / double(peak);
  const double err_rt = double(td::norm2(dx)) / double(td::norm2(x));

  const double gflop = (r2c ? 2.5 : 5.0) * N * std::log2(N) / 1e9;
  const char* dn = plan->decomposition() == fft::Decomposition::pencil ? "pencil" : "slab";
  if (root)
    std::printf("tessera %s %s %lldx%lldx%lld ranks %d %s: forward %.3f ms (%.1f GFlop/s), backward %.3f ms "
                "(%.1f GFlop/s), error forward %.1e round trip %.1e\n",
                o.type.c_str(), o.precision.c_str(), (long long)o.nx, (long long)o.ny, (long long)o.nz, world.size(), dn,
                t_fwd, gflop / t_fwd * 1e3, t_bwd, gflop / t_bwd * 1e3, err_fwd, err_rt);
  if (root && r2c) std::printf("tessera %s %s backward_in_place (C2R may overwrite its input) %.3f ms\n",
                               o.type.c_str(), o.precision.c_str(), t_bwd_ip);
  const double tol = std::is_same_v<Real, double> ? 1e-10 : 1e-4;
  const bool ok = err_fwd <= tol && err_rt <= tol;
  if (!ok && root) std::fprintf(stderr, "bench_fft: error above the tolerance %.0e\n", tol);
  return ok;
}
}  // namespace

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  Options o;
  po::options_description opts("bench_fft nx ny nz [options]: the distributed 3-D FFT, heFFTe speed3d style");
  opts.add_options()("help,h", "show this help")                                        //
      ("nx", po::value(&o.nx)->required(), "size of the slowest axis")                  //
      ("ny", po::value(&o.ny)->required(), "size of the middle axis")                   //
      ("nz", po::value(&o.nz)->required(), "size of the fastest (contiguous) axis")     //
      ("type", po::value(&o.type)->default_value(o.type), "c2c or r2c")                 //
      ("precision", po::value(&o.precision)->default_value(o.precision), "single or double")  //
      ("decomp", po::value(&o.decomp)->default_value(o.decomp), "slab, pencil or auto")  //
      ("chunks", po::value(&o.chunks)->default_value(o.chunks), "transpose pipeline depth (0: the default)")  //
      ("iters", po::value(&o.iters)->default_value(o.iters), "timed runs of each direction (median)")  //
      ("warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed runs first")  //
      ("emulate", po::value(&o.emulate)->default_value(0), "one rank, c2c: time the local FFT stages of P ranks")  //
      ("transport", po::value(&o.transport)->default_value(o.transport), "exchange transport: auto, nccl, nccl-window, ipc, mpi");
  po::positional_options_description pos;
  pos.add("nx", 1).add("ny", 1).add("nz", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    if (vm.count("help")) {
      if (rt.rank() == 0) std::cout << opts << "\nexample: mpirun -np 4 bench_fft 1024 1024 1024 --type c2c\n";
      return 0;
    }
    po::notify(vm);
    auto require = [](bool ok, const std::string& what) { if (!ok) throw std::invalid_argument(what); };
    require(o.type == "c2c" || o.type == "r2c", "--type must be c2c or r2c, not " + o.type);
    require(o.precision == "single" || o.precision == "double", "--precision must be single or double");
    require(o.decomp == "slab" || o.decomp == "pencil" || o.decomp == "auto", "--decomp must be slab, pencil or auto");
    const auto t = tessera::distributed::transport_from_name(o.transport);
    require(t.has_value(), "--transport must be auto, nccl, nccl-window, ipc or mpi, not " + o.transport);
    auto st = tessera::distributed::settings();
    st.transport = *t;
    tessera::distributed::set_settings(st);
    require(o.nx >= 1 && o.ny >= 1 && o.nz >= 1 && o.iters >= 1 && o.warmup >= 0 && o.chunks >= 0,
            "need nx, ny, nz, --iters >= 1, --warmup >= 0 and --chunks >= 0");
  } catch (const std::exception& e) {
    if (rt.rank() == 0) std::fprintf(stderr, "bench_fft: %s\n", e.what());
    return 2;
  }
  if (rt.rank() == 0)
    std::printf("# bench_fft: %d ranks, device %s\n", rt.size(), tessera::device_description(rt.device()).c_str());
  {  // collective: every rank asks
    const auto ran = tessera::distributed::exchange_transport_name(rt.world(), rt.device(), tessera::distributed::settings().transport);
    if (rt.rank() == 0) std::printf("# transport: %s (ran: %s)\n", o.transport.c_str(), ran.c_str());
  }
  const bool dbl = o.precision == "double", r2c = o.type == "r2c";
  if (o.emulate > 0) {
    if (rt.size() != 1 || r2c) {
      if (rt.rank() == 0) std::fprintf(stderr, "bench_fft: --emulate needs one rank and --type c2c\n");
      return 2;
    }
    dbl ? emulate<std::complex<double>>(rt, o, o.emulate) : emulate<std::complex<float>>(rt, o, o.emulate);
    return 0;
  }
  const bool ok = r2c ? (dbl ? run<double>(rt, o) : run<float>(rt, o))
                      : (dbl ? run<std::complex<double>>(rt, o) : run<std::complex<float>>(rt, o));
  return ok ? 0 : 1;
}
