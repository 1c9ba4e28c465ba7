// bench_io: write and read bandwidth of one distributed array through io::save_npy/load_npy (one
// .npy file, MPI-IO) and io::save_zarr/load_zarr (a Zarr v2 store, chunk files by their owners).
//   write         save_* of the array (device shards staged through pinned memory) until it returns
//   write+fsync   the same plus fsync of every file written: the data is on the disk
//   read (cold)   load_* after the files' pages were dropped from the page cache (posix_fadvise
//                 DONTNEED after the fsync; best effort: a file system may keep them)
// GB/s = array bytes / time of the slowest rank. The loaded array is checked against the saved one.
// Compiled by nvcc in CUDA builds (the check is a fused expression).
#include <boost/program_options.hpp>
#include <fcntl.h>
#include <tessera/tessera.hpp>
#include <tessera/distributed/creation.hpp>
#include <tessera/distributed/elementwise.hpp>
#include <tessera/io/npy.hpp>
#include <tessera/io/zarr.hpp>
#include <tessera/distributed/reduce.hpp>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace po = boost::program_options;
namespace td = tessera::distributed;
namespace io = tessera::io;
namespace fs = std::filesystem;
using tessera::local::index_t;

namespace {
// fsync, then drop the pages, of every regular file under `path` (a file or a directory).
void sync_and_drop(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file()) files.push_back(e.path());
  } else {
    files.push_back(path);
  }
  for (const auto& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY);
    if (fd < 0) throw tessera::Error("bench_io: cannot open " + f.string() + " to fsync it");
    const bool ok = ::fsync(fd) == 0;
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    if (!ok) throw tessera::Error("bench_io: fsync of " + f.string() + " failed");
  }
}

double seconds(tessera::comm::ProcessGroup& g, const std::function<void()>& fn) {
  g.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  g.barrier();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return g.all_reduce(s, tessera::comm::ReduceOp::max);
}
}  // namespace

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  double gib = 8;
  std::string dir = "bench_io.out", formats = "npy,zarr";
  index_t chunk = 256;
  po::options_description opts("bench_io options");
  opts.add_options()("help,h", "this help")                                            //
      ("gib", po::value(&gib)->default_value(gib), "array size in GiB (float32, N x 1024 x 1024)")  //
      ("dir", po::value(&dir)->default_value(dir), "output directory (created; files removed at the end)")  //
      ("formats", po::value(&formats)->default_value(formats), "npy, zarr or npy,zarr")  //
      ("zarr-chunk", po::value(&chunk)->default_value(chunk), "Zarr chunk edge along axis 0 (x 1024 x 1024)");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      if (rt.rank() == 0) std::cout << opts << "\n";
      return 0;
    }
    if (!(gib > 0) || chunk < 1) throw std::invalid_argument("--gib must be > 0 and --zarr-chunk >= 1");
  } catch (const std::exception& e) {
    if (rt.rank() == 0) std::fprintf(stderr, "bench_io: %s\n", e.what());
    return 2;
  }
  auto& world = rt.world();
  const auto d = rt.device();
  const bool root = world.rank() == 0;
  const index_t n0 = std::max<index_t>(1, static_cast<index_t>(gib * 256));  // 4 MiB planes
  const td::Layout<3> l = td::Layout<3>::block(td::ProcessGrid(world), {n0, 1024, 1024});
  const double bytes = 4.0 * double(n0) * 1024 * 1024;
  if (root) {
    fs::create_directories(dir);
    std::printf("# bench_io: %d ranks, device %s, %.2f GiB float32 [%lld,1024,1024] in %s\n", world.size(),
                tessera::device_description(d).c_str(), bytes / (1 << 30), (long long)n0, dir.c_str());
  }
  world.barrier();
  const auto a = td::random_uniform<float, 3>(l, d, 7);
  tessera::Stream::default_for(d).synchronize();
  bool ok = true;
  for (const std::string f : {"npy", "zarr"}) {
    if (("," + formats + ",").find("," + f + ",") == std::string::npos) continue;
    const fs::path path = fs::path(dir) / (f == "npy" ? "a.npy" : "a.zarr");
    const double w = seconds(world, [&] {
      if (f == "npy") io::save_npy(path.string(), a);
      else io::save_zarr(path.string(), a, {chunk, 1024, 1024});
    });
    const double sync = seconds(world, [&] { if (root) sync_and_drop(path); });
    td::Array<float, 3> b;
    const double r = seconds(world, [&] {
      b = f == "npy" ? io::load_npy<float, 3>(path.string(), l, d) : io::load_zarr<float, 3>(path.string(), l, d);
      tessera::Stream::default_for(d).synchronize();
    });
    td::Array<float, 3> diff(l, d);
    diff = b - a;
    const double err = td::norm2(diff);
    if (root) {
      std::printf("%-4s write        %8.3f s  %7.2f GB/s\n", f.c_str(), w, bytes / w / 1e9);
      std::printf("%-4s write+fsync  %8.3f s  %7.2f GB/s\n", f.c_str(), w + sync, bytes / (w + sync) / 1e9);
      std::printf("%-4s read (cold)  %8.3f s  %7.2f GB/s   check: ||read - written|| = %g\n", f.c_str(), r,
                  bytes / r / 1e9, err);
    }
    ok = ok && err == 0;
    world.barrier();
    if (root) fs::remove_all(path);
  }
  return ok ? 0 : 1;
}
