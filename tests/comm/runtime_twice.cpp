// A program that initializes MPI itself makes and destroys a Runtime three times, each time running
// a redistribution, a halo exchange and an FFT round trip on its device (the context's caches,
// streams and communicators are made and released each time), then finalizes MPI itself.
// Results are checked against the serially known values. Exit code 0 on success.
#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstdio>

#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/halo.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/fft/fft.hpp"
#include "tessera/comm/runtime.hpp"

namespace td = tessera::distributed;
using C = std::complex<double>;

int fail(int rank, int round, const char* what, double value) {
  std::fprintf(stderr, "rank %d, round %d: %s (%g)\n", rank, round, what, value);
  return 1;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = 0;
  for (int round = 0; round < 3 && rc == 0; ++round) {
    tessera::Runtime rt(argc, argv);
    if (rt.owns_mpi()) return fail(rank, round, "the Runtime claims MPI it did not initialize", 0);
    const auto dev = rt.device();
    const auto grid = td::ProcessGrid::balanced(rt.world(), 2, {true, true});
    const td::Index<2> n{12, 10};
    // arange: element (i, j) holds i*10 + j; redistribute to a layout split along axis 1 only.
    const auto lay = td::Layout<2>::block(grid, n, {1, 1});
    auto a = td::arange<double, 2>(lay, dev);
    auto b = td::redistribute(a, td::Layout<2>(grid, n, {-1, 1}));
    const auto all = td::allgather(b).to(tessera::Device::host());
    double worst = 0;
    for (int k = 0; k < 120; ++k) worst = std::max(worst, std::abs(all.data()[k] - k));
    if (worst != 0) rc = fail(rank, round, "redistribute/allgather differ from arange", worst);
    // Halos of a periodic arange hold the wrapped neighbours' values.
    td::exchange_halos(a);
    const auto loc = a.local().to(tessera::Device::host());
    const auto box = lay.local_box();
    const auto ls = loc.shape();
    for (int i = 0; i < ls[0] && rc == 0; ++i)
      for (int j = 0; j < ls[1]; ++j) {
        const long gi = ((box.lo[0] + i - 1) % 12 + 12) % 12, gj = ((box.lo[1] + j - 1) % 10 + 10) % 10;
        const double want = static_cast<double>(gi * 10 + gj), got = loc.data()[i * loc.strides()[0] + j];
        const bool corner = (i == 0 || i == ls[0] - 1) && (j == 0 || j == ls[1] - 1);
        if (!corner && got != want) {
          rc = fail(rank, round, "halo value differs", got - want);
          break;
        }
      }
    // FFT round trip of a complex random field.
    auto x = td::random_uniform<double, 2>(td::Layout<2>::block(grid, n, {0, 0}), dev, 7);
    td::Array<C, 2> z(x.layout(), dev);
    tessera::local::cast(z.interior(), x.interior());
    auto back = tessera::fft::ifftn(tessera::fft::fftn(z), z.layout());
    const auto zz = td::allgather(z).to(tessera::Device::host());
    const auto bb = td::allgather(back).to(tessera::Device::host());
    double err = 0;
    for (int k = 0; k < 120; ++k) err = std::max(err, std::abs(zz.data()[k] - bb.data()[k]));
    if (err > 1e-12) rc = fail(rank, round, "FFT round trip error", err);
    int any = rc;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = any;
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) return fail(rank, -1, "a Runtime finalized MPI it did not initialize", 0);
  MPI_Finalize();
  if (rc == 0 && rank == 0) std::printf("3 Runtimes made and destroyed before MPI_Finalize: all results right\n");
  return rc;
}
