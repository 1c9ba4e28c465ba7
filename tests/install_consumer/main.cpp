// Uses the installed headers and libraries through find_package(Tessera), so that every layer and
// every package they link is really needed at link time (a static install most of all):
// a checked all-reduce (comm, MPI), a distributed FFT (FFTW on the host), and .npy and Zarr
// round trips between two layouts (io; the Zarr store zlib-compressed where the install has zlib).
//   tessera_consumer DIR    (DIR: an existing directory shared by the ranks)
#include <tessera/tessera.hpp>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

namespace ts = tessera;
namespace td = tessera::distributed;

namespace {
int failures = 0;
void expect(bool ok, const ts::Runtime& rt, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "consumer rank %d: %s\n", rt.rank(), what.c_str());
  ++failures;
}

// Every element of `a` equals its global flat index (what arange wrote).
template <class T, int R> bool is_arange(const td::Array<T, R>& a) {
  const auto all = ts::local::to_host(td::allgather(a));
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] != static_cast<T>(i)) return false;
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  ts::Runtime rt(argc, argv);
  if (argc != 2) {
    if (rt.rank() == 0) std::fprintf(stderr, "usage: tessera_consumer DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const auto d = rt.device();

  const int total = rt.world().all_reduce(rt.rank() + 1, ts::comm::ReduceOp::sum);
  expect(total == rt.size() * (rt.size() + 1) / 2, rt, "all_reduce: sum " + std::to_string(total));

  // FFT of ones: N at frequency 0, zero elsewhere.
  const td::Layout<2> lc = td::Layout<2>::block(td::ProcessGrid(rt.world()), {8, 6});
  const auto spectrum = ts::local::to_host(td::allgather(ts::fft::fftn(td::ones<std::complex<double>>(lc, d))));
  double off = 0;
  for (std::size_t i = 1; i < spectrum.size(); ++i) off += std::abs(spectrum[i]);
  expect(std::abs(spectrum[0] - 48.0) < 1e-9 && off < 1e-9, rt, "fftn of ones");

  // io: save on a row-split layout, load on a column-split one.
  const td::ProcessGrid g(rt.world());
  const td::Layout<2> rows(g, {7, 5}, {0, -1}), cols(g, {7, 5}, {-1, 0});
  const auto a = td::arange<double>(rows, d);
  ts::io::save_npy(dir + "/a.npy", a);
  expect(is_arange(ts::io::load_npy<double, 2>(dir + "/a.npy", cols, d)), rt, "save_npy/load_npy round trip");
  const auto c = CONSUMER_HAVE_ZLIB ? ts::io::Compressor::zlib : ts::io::Compressor::none;
  ts::io::save_zarr(dir + "/a.zarr", a, {3, 5}, c);
  expect(is_arange(ts::io::load_zarr<double, 2>(dir + "/a.zarr", cols, d)), rt, "save_zarr/load_zarr round trip");

  const int bad = rt.world().all_reduce(failures, ts::comm::ReduceOp::sum);
  std::printf("consumer rank %d/%d on %s (Tessera %s, zlib %d): %s\n", rt.rank(), rt.size(), d.str().c_str(),
              TESSERA_VERSION_STRING, CONSUMER_HAVE_ZLIB, bad == 0 ? "ok" : "FAILED");
  return bad == 0 ? 0 : 1;
}
