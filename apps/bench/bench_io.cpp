// bench_io: write and read bandwidth of one distributed array (float32 N x 1024 x 1024) in each
// format and codec: .npy (one file, MPI-IO), Zarr v2 and v3 (chunk files written by their owners
// on the chunk pipeline), Zarr v3 sharded (--shard chunks per file along axis 0), HDF5 (parallel,
// contiguous). Codecs (Zarr only): raw, blosc-lz4 (shuffle, level 5), zstd (level 1).
//   write         save_* of the array (device shards staged through pinned memory) until it returns
//   write+fsync   a second save, durable (Zarr: ZarrWriteOptions::durable, every chunk file fsynced
//                 by its worker as soon as it is written), plus fsync of every file written (only
//                 the .npy's is left to do then): until the data is on the disk
//   read (warm)   load_* right after the write: the files are in the page cache
//   read (cold)   load_* after the files' pages were dropped from the page cache (posix_fadvise
//                 DONTNEED after the fsync; best effort: a file system may keep them)
// One untimed save first; --reps N repeats every measurement and prints the median. Each figure is also printed as "RESULT tessera FORMAT CODEC OP GB/s" for launch/gpu-check bench:io.
// GB/s = array bytes / time of the slowest rank. The loaded array is checked against the saved one.
// Compiled by nvcc in CUDA builds (the check is a fused expression).
#include <boost/program_options.hpp>
#include <fcntl.h>
#include <tessera/tessera.hpp>
#include <tessera/distributed/creation.hpp>
#include <tessera/distributed/elementwise.hpp>
#include <tessera/io/hdf5.hpp>
#include <tessera/io/npy.hpp>
#include <tessera/io/zarr.hpp>
#include <tessera/distributed/reduce.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
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

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty()) r.push_back(x);
  return r;
}

io::Codec codec_of(const std::string& c) {
  if (c == "raw") return io::Compressor::none;
  if (c == "blosc-lz4") return io::Codec{};
  if (c == "zstd") return io::Compressor::zstd;
  throw std::invalid_argument("--codecs: raw, blosc-lz4 or zstd, not '" + c + "'");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  std::string dir = "bench_io.out", formats = "npy,zarr,zarr3", codecs = "raw,blosc-lz4";
  index_t chunk = 64, shard = 0;
  int reps = 1;
  po::options_description opts("bench_io options");
  opts.add_options()("help,h", "this help")                                            //
      ("gib", po::value(&gib)->default_value(gib), "array size in GiB (float32, N x 1024 x 1024)")  //
      ("dir", po::value(&dir)->default_value(dir), "output directory (created; files removed at the end)")  //
      ("formats", po::value(&formats)->default_value(formats), "comma list of npy, zarr (v2), zarr3, zarr3-shard, hdf5")  //
      ("codecs", po::value(&codecs)->default_value(codecs), "Zarr codecs: comma list of raw, blosc-lz4, zstd")  //
      ("zarr-chunk", po::value(&chunk)->default_value(chunk), "Zarr chunk edge along axis 0 (x 1024 x 1024)")  //
      ("shard", po::value(&shard)->default_value(shard), "zarr3-shard: chunks per shard along axis 0 (0: 4)")  //
      ("reps", po::value(&reps)->default_value(reps), "repetitions of every measurement (the median is printed)");
  std::vector<std::string> fmts, cods;
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      if (rt.rank() == 0) std::cout << opts << "\n";
      return 0;
    }
    if (!(gib > 0) || chunk < 1 || shard < 0 || reps < 1)
      throw std::invalid_argument("--gib must be > 0, --zarr-chunk >= 1, --shard >= 0, --reps >= 1");
    fmts = split(formats), cods = split(codecs);
    for (const auto& f : fmts)
      if (f != "npy" && f != "zarr" && f != "zarr3" && f != "zarr3-shard" && (f != "hdf5" || !TESSERA_HAVE_HDF5))
        throw std::invalid_argument("--formats: unknown or unbuilt format '" + f + "'");
    for (const auto& c : cods) (void)codec_of(c);
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
    std::printf("# bench_io: %d ranks, device %s, %.2f GiB float32 [%lld,1024,1024] in %s, Zarr chunks [%lld,1024,1024]\n",
                world.size(), tessera::device_description(d).c_str(), bytes / (1 << 30), (long long)n0, dir.c_str(),
                (long long)chunk);
    std::printf("%-12s %-10s %12s %12s %12s %12s   (GB/s)\n", "format", "codec", "write", "write+fsync", "read warm",
                "read cold");
  }
  world.barrier();
  const auto a = td::random_uniform<float, 3>(l, d, 7);
  tessera::Stream::default_for(d).synchronize();
  bool ok = true, warmed = false;
  for (const auto& f : fmts) {
    const bool zarr = f.rfind("zarr", 0) == 0;
    for (const auto& c : zarr ? cods : std::vector<std::string>{"raw"}) {
      const fs::path path = fs::path(dir) / ("a." + f + "." + c);
      io::ZarrWriteOptions zo{codec_of(c)};
      zo.format = f == "zarr" ? 2 : 3;
      if (f == "zarr3-shard") zo.shard = {chunk * (shard ? shard : 4), 1024, 1024};
      const auto save = [&] {
        if (f == "npy") io::save_npy(path.string(), a);
#if TESSERA_HAVE_HDF5
        else if (f == "hdf5") io::save_hdf5(path.string(), "a", a);
#endif
        else io::save_zarr(path.string(), a, {chunk, 1024, 1024}, zo);
      };
      const auto save_durable = [&] {
        zo.durable = true;
        save();
        zo.durable = false;
        if (root) sync_and_drop(path);
      };
      const auto load = [&] {
        td::Array<float, 3> b;
        if (f == "npy") b = io::load_npy<float, 3>(path.string(), l, d);
#if TESSERA_HAVE_HDF5
        else if (f == "hdf5") b = io::load_hdf5<float, 3>(path.string(), "a", l, d);
#endif
        else b = io::load_zarr<float, 3>(path.string(), l, d);
        tessera::Stream::default_for(d).synchronize();
        return b;
      };
      if (!warmed) {  // once, untimed: the pinned staging buffer and the page cache's first touch
        save();
        world.barrier();
        if (root) fs::remove_all(path);
        warmed = true;
      }
      std::vector<double> ws, warms, durables, colds;
      td::Array<float, 3> b;
      for (int r = 0; r < reps; ++r) {
        if (r > 0) {
          world.barrier();
          if (root) fs::remove_all(path);
        }
        ws.push_back(seconds(world, save));
        warms.push_back(seconds(world, [&] { b = load(); }));
        world.barrier();
        if (root) fs::remove_all(path);
        durables.push_back(seconds(world, save_durable));  // ends with the pages dropped
        colds.push_back(seconds(world, [&] { b = load(); }));
      }
      const double w = median(ws), warm = median(warms), durable = median(durables), cold = median(colds);
      td::Array<float, 3> diff(l, d);
      diff = b - a;
      const double err = td::norm2(diff);
      if (root) {
        const double gb[4] = {bytes / w / 1e9, bytes / durable / 1e9, bytes / warm / 1e9, bytes / cold / 1e9};
        std::printf("%-12s %-10s %12.2f %12.2f %12.2f %12.2f   check: ||read - written|| = %g\n", f.c_str(), c.c_str(), gb[0],
                    gb[1], gb[2], gb[3], err);
        const char* ops[4] = {"write", "write+fsync", "read-warm", "read-cold"};
        for (int k = 0; k < 4; ++k) std::printf("RESULT tessera %s %s %s %.3f\n", f.c_str(), c.c_str(), ops[k], gb[k]);
      }
      ok = ok && err == 0;
      world.barrier();
      if (root) fs::remove_all(path);
    }
  }
  return ok ? 0 : 1;
}
