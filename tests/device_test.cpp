#include "device_test.hpp"

#include "tessera/comm/settings.hpp"

namespace tessera::testing {
namespace {
int g_local_rank = 0;
}

void init_test_environment(MPI_Comm world) {
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local = 0, node_size = 1;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  // TESSERA_EMULATE_NODES = k: the node's ranks as k contiguous emulated nodes, numbered apart.
  const int k = comm::settings().emulate_nodes;
  auto block = [&](int q) { return static_cast<int>(static_cast<long long>(q) * k / node_size); };
  g_local_rank = 0;
  for (int q = 0; q < local; ++q) g_local_rank += block(q) == block(local);
}

int node_local_rank() { return g_local_rank; }

const comm::ProcessGroup& world() {
  // Never destroyed: it would outlive MPI_Finalize in main (the program's end frees it).
  static const auto* group = new comm::ProcessGroup(comm::ProcessGroup::world());
  return *group;
}
}  // namespace tessera::testing
