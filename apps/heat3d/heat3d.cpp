// heat3d: explicit diffusion du/dt = alpha * lap(u) on the 2*pi-periodic box, 7-point stencil,
// forward Euler, on a 3-D block-distributed array with halo 1 along the split axes (one rank per
// GPU, or host ranks); along axes held whole the kernels wrap around in place.
//
// Each step: exchange_halos_begin(u); update the interior cells, which need no halo; end the
// exchange; update the boundary shell; swap u and v. On GPUs the transfers (NCCL) overlap the
// interior kernel; each region is one kernel (stencil.cu). Throughput: cells/s, and GB/s with the
// model of 2*sizeof(T) bytes per cell (u read once, v written once; halos not counted).
//
// Verification: u0 = cos(kx x) sin(ky y) sin(kz z) is an eigenmode of both the Laplacian and the
// discrete 7-point operator, so u(t) = A(t) u0 with A = exp(-alpha |k|^2 t) analytically and
// A = g^steps for the scheme (g its amplification factor). The program reports the relative L2
// error against both: the first is the discretization error (compared with |g^n - A| / A, which
// theory predicts), the second is at round-off level unless something is wrong (halos, indices,
// restart). --check fails the run (exit 1) when either exceeds its tolerance.
//
// Output (--output DIR): snapshots of u, the plane x = pi of each as data (STEM_slice.npy/.json) and
// a PNG of it, drawn by plot_slice.py after the timed loop (slice_plot.hpp), and checkpoints.
#include <boost/program_options.hpp>
#include <tessera/io/checkpoint.hpp>
#include <tessera/io/npy.hpp>
#include <tessera/io/zarr.hpp>
#include <tessera/io/hdf5.hpp>
#include <tessera/tessera.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <numbers>
#include <utility>

#include "common/cli.hpp"
#include "png.hpp"
#include "slice_plot.hpp"
#include "stencil.hpp"

namespace po = boost::program_options;
namespace td = tessera::distributed;
namespace io = tessera::io;
using tessera::local::index_t;

namespace {

struct Options {
  std::string n_text = "64", grid_text, device = "auto", dtype = "double", output, format = "npy", restart,
              colour_map = "viridis", mode_text = "1,2,3", variant_text = "vec-ahead";
  heat3d::Variant variant = heat3d::Variant::vec_ahead;
  std::array<long long, 3> n{};
  std::array<int, 3> mode{1, 2, 3};
  long long steps = 100, output_every = 0, checkpoint_every = 0, progress_every = 0;
  double alpha = 1.0, dt = 0, cfl = 0.4, tol = 0;
  bool check = false;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class T>
heat3d::Field<T> field(const td::Array<T, 3>& a) {
  const auto& s = a.local().strides();  // the padded shard
  const auto& h = a.layout().halo();
  const auto n = a.layout().local_shape();
  heat3d::Field<T> f{a.local().data() + h[0] * s[0] + h[1] * s[1] + h[2] * s[2], s[0], s[1], {}, {}};
  for (int ax = 0; ax < 3; ++ax) f.n[ax] = n[ax], f.wrap[ax] = h[ax] == 0;
  return f;
}

// Restart: the run's parameters come from the checkpoint; explicit options must agree with it.
// Sizes and modes are compared as numbers ("--n 160" is the shape 160,160,160), the size against
// the saved array's own shape.
void adopt_checkpoint(Options& o, const io::CheckpointReader& r, const po::variables_map& vm) {
  auto given = [&](const char* opt) { return vm.count(opt) && !vm[opt].defaulted(); };
  const auto& shape = r.field("u").shape;
  if (shape.size() != 3) throw tessera::InvalidArgument("heat3d: the checkpoint's u is not 3-D (" + r.path() + ")");
  const std::array<long long, 3> saved{shape[0], shape[1], shape[2]};
  if (given("n") && apps::parse_shape3(o.n_text, 1) != saved)
    throw tessera::InvalidArgument("--n " + o.n_text + " differs from the checkpoint's shape " + apps::shape_text(saved) +
                                   " (" + r.path() + ")");
  o.n_text = apps::shape_text(saved);
  const std::string& mode = r.get("mode");
  if (given("mode") && apps::parse_list(o.mode_text, "mode") != apps::parse_list(mode, "mode"))
    throw tessera::InvalidArgument("--mode " + o.mode_text + " differs from the checkpoint's " + mode + " (" +
                                   r.path() + ")");
  o.mode_text = mode;
  const std::string& dtype = r.get("dtype");
  if (given("dtype") && o.dtype != dtype)
    throw tessera::InvalidArgument("--dtype " + o.dtype + " differs from the checkpoint's " + dtype + " (" + r.path() + ")");
  o.dtype = dtype;
  if (given("alpha") && std::stod(r.get("alpha")) != o.alpha)
    throw tessera::InvalidArgument("--alpha differs from the checkpoint's " + r.get("alpha"));
  if (given("dt") && std::stod(r.get("dt")) != o.dt)
    throw tessera::InvalidArgument("--dt differs from the checkpoint's " + r.get("dt"));
  o.alpha = std::stod(r.get("alpha"));
  o.dt = std::stod(r.get("dt"));
}

std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

template <class T>
int run(tessera::Runtime& rt, const Options& o, long long step0) {
  auto& world = rt.world();
  const bool root = rt.rank() == 0;
  const auto d = apps::pick_device(o.device, rt);
  tessera::check_device_usable(d);

  std::vector<int> dims{0, 0, 0};
  if (!o.grid_text.empty()) {
    const auto g = apps::parse_list(o.grid_text, "grid");
    if (g.size() != 3) throw tessera::InvalidArgument("--grid '" + o.grid_text + "': give px,py,pz (0 = choose)");
    dims.assign(g.begin(), g.end());
  }
  const td::ProcessGrid grid(world, dims, {true, true, true});
  const td::Index<3> n{o.n[0], o.n[1], o.n[2]};
  // Halos only along axes split over several ranks; the kernels wrap around the others in place,
  // so the exchange moves faces between ranks and never copies a rank's data to itself.
  const auto& gd = grid.dims();
  const td::Index<3> halo{gd[0] > 1 ? 1 : 0, gd[1] > 1 ? 1 : 0, gd[2] > 1 ? 1 : 0};
  const td::Layout<3> layout(grid, n, {0, 1, 2}, halo, std::array<bool, 3>{true, true, true});
  const auto box = layout.local_box();
  const std::array<index_t, 3> nloc = box.shape();
  const bool exchange = halo[0] + halo[1] + halo[2] > 0;

  // Grid spacing, time step (cfl * the forward-Euler limit 1 / (2 alpha sum 1/h^2)) and coefficients.
  double h[3], inv_h2 = 0;
  for (int a = 0; a < 3; ++a) h[a] = 2 * std::numbers::pi / static_cast<double>(n[a]), inv_h2 += 1 / (h[a] * h[a]);
  const double dt = o.dt > 0 ? o.dt : o.cfl / (2 * o.alpha * inv_h2);
  heat3d::Coeffs<T> c{};
  c.cx = static_cast<T>(o.alpha * dt / (h[0] * h[0]));
  c.cy = static_cast<T>(o.alpha * dt / (h[1] * h[1]));
  c.cz = static_cast<T>(o.alpha * dt / (h[2] * h[2]));
  c.c0 = static_cast<T>(1 - 2 * (double(c.cx) + double(c.cy) + double(c.cz)));
  heat3d::Mode mode;
  double k2 = 0, g = double(c.c0);  // the scheme's amplification factor, with the coefficients as rounded
  for (int a = 0; a < 3; ++a) {
    mode.k[a] = o.mode[a], mode.h[a] = h[a], mode.lo[a] = box.lo[a];
    k2 += double(o.mode[a]) * o.mode[a];
  }
  g += 2 * (double(c.cx) * std::cos(o.mode[0] * h[0]) + double(c.cy) * std::cos(o.mode[1] * h[1]) +
            double(c.cz) * std::cos(o.mode[2] * h[2]));
  if (std::abs(g) > 1) throw tessera::InvalidArgument("heat3d: unstable time step " + std::to_string(dt) + " (|g| > 1)");

  const double cells = double(n[0]) * double(n[1]) * double(n[2]);
  const double bytes_per_cell = 2.0 * sizeof(T);
  if (root) {
    std::printf("heat3d: %lldx%lldx%lld %s on %d ranks (grid %dx%dx%d), %s\n", (long long)n[0], (long long)n[1],
                (long long)n[2], o.dtype.c_str(), rt.size(), gd[0], gd[1], gd[2], tessera::device_description(d).c_str());
    std::printf("heat3d: alpha %g, dt %.6g, mode (%d,%d,%d), steps %lld..%lld; %g bytes/cell/step (read u, write v)\n",
                o.alpha, dt, o.mode[0], o.mode[1], o.mode[2], step0, o.steps, bytes_per_cell);
  }

  td::Array<T, 3> u, v(layout, d);
  if (!o.restart.empty()) {
    io::CheckpointReader r(o.restart, world);
    u = r.load<T, 3>("u", layout, d);
    if (root) std::printf("heat3d: restarted from %s at step %lld, t = %.6g\n", r.path().c_str(), step0, r.time());
  } else {
    u = td::Array<T, 3>(layout, d);
    heat3d::fill_mode(field(u), mode, 1.0, d, u.stream().native());
  }
  auto uf = field(u), vf = field(v);
  void* stream = u.stream().native();
  const std::array<bool, 3> wrap{halo[0] == 0, halo[1] == 0, halo[2] == 0};
  const auto inner = heat3d::interior_region(nloc, wrap), shell = heat3d::shell_region(nloc, wrap);

  std::string output = o.output;
  if (!output.empty() && root) std::filesystem::create_directories(output);
  // PNG slices: plot_slice.py draws them after the timed loop where a Python with matplotlib is
  // here; else each snapshot writes a bare colour map (libpng). Rank 0 asks once, before the loop,
  // and every rank learns the answer (the bare PNG needs a gather).
  heat3d::SlicePlotter plotter;
  bool plots = false;
  if (!output.empty()) {
    if (root) plotter = heat3d::SlicePlotter::probe();
    plots = world.all_reduce(plotter.usable() ? 1.0 : 0.0, tessera::comm::ReduceOp::max) > 0;
    if (root && !plots)
      std::printf("heat3d: %s: %s\n",
                  heat3d::png_available() ? "PNG slices without axes, colour bar or title (bare colour maps)"
                                          : "no PNG slices (no matplotlib, and heat3d was built without libpng)",
                  plotter.why_not().c_str());
  }
  auto write_snapshot = [&](long long step) {
    char stem[32];
    std::snprintf(stem, sizeof stem, "u_%06lld", step);
    const std::string base = output + "/" + stem;
    std::string data;
    if (o.format == "zarr" || o.format == "zarr3") {
      td::Index<3> chunks;  // one chunk per block of the grid
      for (int a = 0; a < 3; ++a) chunks[a] = (n[a] + gd[a] - 1) / gd[a];
      io::ZarrWriteOptions zo;
      zo.format = o.format == "zarr3" ? 3 : 2;
      io::save_zarr(data = base + ".zarr", u, chunks, zo);
    } else if (o.format == "hdf5") {
#if TESSERA_HAVE_HDF5
      io::save_hdf5(data = base + ".h5", "u", u);
      if (root)  // ParaView/VisIt open the .xmf: u on the 2 pi-periodic grid of spacing 2 pi / n
        io::write_xdmf(base + ".xmf", std::string(stem) + ".h5", "u", {n[0], n[1], n[2]}, tessera::dtype_v<T>, 2 * std::numbers::pi / n[0]);
#endif
    } else {
      io::save_npy(data = base + ".npy", u);
    }
    // The mid-plane x = pi (i = nx/2; rows along y, columns along z) as data, STEM_slice.npy of
    // shape (1, ny, nz) and STEM_slice.json, from which plot_slice.py draws STEM.png.
    const auto plane = td::slice(u, td::Box<3>{{n[0] / 2, 0, 0}, {n[0] / 2 + 1, n[1], n[2]}});
    const std::string slice = base + "_slice";
    io::save_npy(slice + ".npy", plane);
    if (root) {
      heat3d::SliceInfo info;
      info.step = step, info.time = step * dt, info.shape = o.n, info.axis = 0, info.index = n[0] / 2;
      for (int a = 0; a < 3; ++a) info.lengths[a] = 2 * std::numbers::pi;
      info.dtype = o.dtype, info.colour_map = o.colour_map;
      heat3d::write_slice_info(slice + ".json", info);
    }
    if (plots) {
      if (!root) return;
      plotter.add(slice + ".npy");
      std::printf("heat3d: step %lld: wrote %s and %s.npy (x = pi slice; %s.png drawn at the end)\n", step, data.c_str(),
                  slice.c_str(), base.c_str());
      return;
    }
    const auto whole = td::gather(plane, 0);
    if (!root) return;
    std::printf("heat3d: step %lld: wrote %s, %s.npy", step, data.c_str(), slice.c_str());
    if (heat3d::png_available()) {
      const auto hv = tessera::local::to_host(whole);
      std::vector<double> vals(hv.begin(), hv.end());
      double vmax = 0;
      for (double x : vals) vmax = std::max(vmax, std::abs(x));
      heat3d::write_png(base + ".png", vals, n[1], n[2], -vmax, vmax, o.colour_map);
      std::printf(" and %s.png (x = pi slice, %s, range +-%.3g)", base.c_str(), o.colour_map.c_str(), vmax);
    }
    std::printf("\n");
  };
  auto write_checkpoint = [&](long long step) {
    io::CheckpointWriter w(output + "/checkpoint", world);
    w.set_step(step);
    w.set_time(step * dt);
    w.set("n", apps::shape_text(o.n));
    w.set("dtype", o.dtype);
    w.set("mode", std::to_string(o.mode[0]) + "," + std::to_string(o.mode[1]) + "," + std::to_string(o.mode[2]));
    w.set("alpha", fmt("%.17g", o.alpha));
    w.set("dt", fmt("%.17g", dt));
    w.add("u", u);
    w.commit();
    if (root) std::printf("heat3d: step %lld: checkpoint %s/checkpoint\n", step, output.c_str());
  };

  // Warm-up: the first exchange builds the message plan and (on GPUs) the NCCL communicator.
  if (exchange) u.exchange_halos();
  u.stream().synchronize();
  world.barrier();

  const long long every = o.progress_every > 0 ? o.progress_every : std::max(1LL, (o.steps - step0) / 10);
  const auto t_start = Clock::now();
  auto t_mark = t_start;
  double io_seconds = 0, io_mark = 0, compute_seconds = 0;
  long long step_mark = step0;
  for (long long step = step0 + 1; step <= o.steps; ++step) {
    if (exchange) {
      auto pending = u.exchange_halos_begin();      // packs and posts the transfers
      heat3d::update(uf, vf, c, inner, o.variant, d, stream);  // overlaps them: reads u's interior only
      pending.end();
    } else {
      heat3d::update(uf, vf, c, inner, o.variant, d, stream);
    }
    heat3d::update(uf, vf, c, shell, o.variant, d, stream);
    std::swap(u, v);
    std::swap(uf, vf);

    if (step % every == 0 || step == o.steps) {
      u.stream().synchronize();
      const double wall = world.all_reduce(seconds_since(t_start), tessera::comm::ReduceOp::max);
      const double span = world.all_reduce(seconds_since(t_mark), tessera::comm::ReduceOp::max) - (io_seconds - io_mark);
      compute_seconds += span;
      const double rate = double(step - step_mark) * cells / span;
      if (root)
        std::printf("step %8lld  t %.6e  wall %8.3f s  %.3e cells/s  %8.3g GB/s  (%.3g GB/s per rank)\n", step,
                    step * dt, wall, rate, rate * bytes_per_cell / 1e9, rate * bytes_per_cell / 1e9 / rt.size());
      std::fflush(stdout);
      t_mark = Clock::now(), io_mark = io_seconds, step_mark = step;
    }
    const bool snap = !output.empty() && o.output_every > 0 && step % o.output_every == 0;
    const bool ckpt = o.checkpoint_every > 0 && step % o.checkpoint_every == 0;
    if (snap || ckpt) {
      const auto t_io = Clock::now();
      if (snap) write_snapshot(step);
      if (ckpt) write_checkpoint(step);
      io_seconds += seconds_since(t_io);
    }
  }
  u.stream().synchronize();
  if (!output.empty() && (o.output_every <= 0 || o.steps % o.output_every != 0)) write_snapshot(o.steps);

  // Errors against the scheme's exact solution g^n u0 and the analytic exp(-alpha k^2 t) u0.
  const long long steps = o.steps;
  const double t = steps * dt, a_scheme = std::pow(g, double(steps)), a_exact = std::exp(-o.alpha * k2 * t);
  const auto sums = heat3d::error_sums(uf, mode, a_scheme, a_exact, d, stream);
  double tot[3];
  for (int q = 0; q < 3; ++q) tot[q] = world.all_reduce(sums[q], tessera::comm::ReduceOp::sum);
  // Round-off is measured against |u0| (a decayed mode would magnify it), the discretization error
  // against the current amplitude.
  const double err_scheme = std::sqrt(tot[0] / tot[2]);
  const double err_exact = std::sqrt(tot[1] / (a_exact * a_exact * tot[2]));
  const double predicted = std::abs(a_scheme - a_exact) / a_exact;
  // Round-off: a few ulps per step on top of the initial rounding.
  const double eps = std::numeric_limits<T>::epsilon();
  const double tol = o.tol > 0 ? o.tol : 10 * eps * double(steps + 10);
  const bool ok = err_scheme <= tol && err_exact <= predicted + (err_scheme + tol) / a_exact;
  if (root && steps > step0) {
    const long long done = steps - step0;
    std::printf("heat3d: %lld steps to t = %.6e in %.3f s (I/O %.3f s): %.3e cells/s, %.3g GB/s (%.3g per rank)\n",
                done, t, compute_seconds + io_seconds, io_seconds, done * cells / compute_seconds,
                done * cells * bytes_per_cell / compute_seconds / 1e9,
                done * cells * bytes_per_cell / compute_seconds / 1e9 / rt.size());
  }
  if (root) {
    std::printf("heat3d: L2 error vs analytic exp(-alpha k^2 t): %.3e (discretization, predicted %.3e)\n", err_exact,
                predicted);
    std::printf("heat3d: L2 error vs the scheme's exact solution: %.3e of |u0| (round-off tolerance %.1e)\n",
                err_scheme, tol);
    if (o.check) std::printf("heat3d: check %s\n", ok ? "passed" : "FAILED");
    // The PNGs, once the run is measured and checked: one run of plot_slice.py for every slice.
    if (!plotter.empty()) {
      std::fflush(stdout);
      if (plotter.draw()) std::printf("heat3d: PNG slices drawn by plot_slice.py (matplotlib)\n");
    }
  }
  return o.check && !ok ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  Options o;
  po::options_description opts("heat3d: 3-D diffusion du/dt = alpha lap(u), periodic box, 7-point stencil\noptions");
  opts.add_options()("help,h", "this help")
      ("n", po::value(&o.n_text)->default_value(o.n_text), "global size: N or nx,ny,nz")
      ("steps", po::value(&o.steps)->default_value(o.steps), "the last step (a restart continues up to it)")
      ("grid", po::value(&o.grid_text), "process grid px,py,pz (0 = choose; default balanced)")
      ("device", po::value(&o.device)->default_value(o.device), "auto, host or cuda")
      ("dtype", po::value(&o.dtype)->default_value(o.dtype), "double or float")
      ("alpha", po::value(&o.alpha)->default_value(o.alpha), "diffusivity")
      ("dt", po::value(&o.dt)->default_value(o.dt), "time step (0: cfl times the stability limit)")
      ("cfl", po::value(&o.cfl)->default_value(o.cfl), "dt as a fraction of the forward-Euler limit")
      ("mode", po::value(&o.mode_text)->default_value(o.mode_text), "wavenumbers kx,ky,kz of the initial mode")
      ("progress-every", po::value(&o.progress_every), "a progress line every k steps (default: 10 lines)")
      ("output", po::value(&o.output), "directory for snapshots (.npy, Zarr or HDF5 + XDMF; the x = pi plane as data and a PNG) and checkpoints")
      ("output-every", po::value(&o.output_every)->default_value(0), "a snapshot every k steps (0: at the end only)")
      ("format", po::value(&o.format)->default_value(o.format), "snapshot format: npy, zarr (v2), zarr3 or hdf5 (with an .xmf for ParaView)")
      ("colormap", po::value(&o.colour_map)->default_value(o.colour_map), "PNG colour map: viridis or inferno")
      ("checkpoint-every", po::value(&o.checkpoint_every)->default_value(0), "a checkpoint (OUTPUT/checkpoint) every k steps")
      ("variant", po::value(&o.variant_text)->default_value(o.variant_text),
       "GPU interior kernel, for measurement: vec-ahead, vec, stream, plain, wide or wide-stream (stencil.hpp)")
      ("restart", po::value(&o.restart), "continue from this checkpoint directory")
      ("check", po::bool_switch(&o.check), "exit 1 unless the errors are within tolerance")
      ("tol", po::value(&o.tol)->default_value(0), "round-off tolerance (0: 10 eps (steps + 10))");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      if (rt.rank() == 0) std::cout << opts << "\n";
      return 0;
    }
    long long step0 = 0;
    if (!o.restart.empty()) {
      io::CheckpointReader r(o.restart, rt.world());
      adopt_checkpoint(o, r, vm);
      step0 = r.step();
    }
    o.n = apps::parse_shape3(o.n_text, 1);
    apps::check_dtype(o.dtype);
    o.variant = heat3d::parse_variant(o.variant_text);
    const auto m = apps::parse_list(o.mode_text, "mode");
    if (m.size() != 3 || m[0] < 1 || m[1] < 1 || m[2] < 1)
      throw tessera::InvalidArgument("--mode '" + o.mode_text + "': give kx,ky,kz >= 1");
    for (int a = 0; a < 3; ++a) {
      o.mode[a] = static_cast<int>(m[a]);
      if (o.n[a] <= 2 * m[a])  // at or past Nyquist the mode vanishes on the grid or aliases
        throw tessera::InvalidArgument("--mode: wavenumber " + std::to_string(m[a]) + " along axis " +
                                       std::to_string(a) + " needs more than " + std::to_string(2 * m[a]) + " cells");
    }
    if (o.format != "npy" && o.format != "zarr" && o.format != "zarr3" && (o.format != "hdf5" || !TESSERA_HAVE_HDF5))
      throw tessera::InvalidArgument(std::string("--format: npy, zarr, zarr3") + (TESSERA_HAVE_HDF5 ? " or hdf5" : " (hdf5: not built)"));
    if (!heat3d::known_colour_map(o.colour_map)) throw tessera::InvalidArgument("--colormap: viridis or inferno");
    if (o.checkpoint_every > 0 && o.output.empty()) throw tessera::InvalidArgument("--checkpoint-every needs --output");
    if (o.steps < step0)
      throw tessera::InvalidArgument("--steps " + std::to_string(o.steps) + " is before the checkpoint's step " +
                                     std::to_string(step0));
    if (!(o.alpha > 0) || o.dt < 0 || !(o.cfl > 0) || o.cfl > 1)
      throw tessera::InvalidArgument("need alpha > 0, dt >= 0 and 0 < cfl <= 1");
    return o.dtype == "float" ? run<float>(rt, o, step0) : run<double>(rt, o, step0);
  } catch (const po::error& e) {  // the same on every rank: say it once
    if (rt.rank() == 0) std::fprintf(stderr, "heat3d: %s (heat3d --help)\n", e.what());
    return 2;
  } catch (const tessera::InvalidArgument& e) {
    if (rt.rank() == 0) std::fprintf(stderr, "heat3d: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heat3d: %s\n", e.what());
    return 2;
  }
}
