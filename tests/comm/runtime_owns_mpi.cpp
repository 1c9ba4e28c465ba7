// Runs under mpirun without initializing MPI itself: the Runtime must initialize MPI, and
// finalize it when destroyed. Exit code 0 on success; the reason on stderr otherwise.
#include <mpi.h>

#include <cstdio>

#include "tessera/comm/runtime.hpp"

int main(int argc, char** argv) {
  int flag = 1;
  MPI_Initialized(&flag);
  if (flag) return std::fprintf(stderr, "MPI initialized before the Runtime\n"), 1;
  int rank = -1, size = 0;
  {
    tessera::Runtime rt(argc, argv);
    MPI_Initialized(&flag);
    if (!flag || !rt.owns_mpi()) return std::fprintf(stderr, "Runtime did not initialize MPI\n"), 1;
    rank = rt.rank();
    size = rt.size();
    const int total = rt.world().all_reduce(1, tessera::comm::ReduceOp::sum);
    if (total != size) return std::fprintf(stderr, "rank %d: all_reduce gave %d, want %d\n", rank, total, size), 1;
  }
  MPI_Finalized(&flag);
  if (!flag) return std::fprintf(stderr, "rank %d: Runtime did not finalize MPI\n", rank), 1;
  std::printf("rank %d of %d: Runtime initialized and finalized MPI\n", rank, size);
  return 0;
}
