#include "device_test.hpp"

namespace tessera::testing {
namespace {
int g_local_rank = 0;
}

void init_test_environment(MPI_Comm world) {
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g_local_rank);
  MPI_Comm_free(&node);
}

int node_local_rank() { return g_local_rank; }

const comm::ProcessGroup& world() {
  // Never destroyed: it would outlive MPI_Finalize in main (the program's end frees it).
  static const auto* group = new comm::ProcessGroup(comm::ProcessGroup::world());
  return *group;
}
}  // namespace tessera::testing
