// The program the fault tests launch under mpirun: the last rank dies (SIGKILL, or an uncaught
// exception -> std::terminate -> abort) while the other ranks wait in a collective for it.
//   fault_victim --mode kill|throw --op all_reduce|recv|exchange [--device host|cuda]
// exchange: a redistribute, whose blocks move through the exchange transport TESSERA_TRANSPORT
// chooses (mpi, nccl, nccl-window, ipc).
// The survivors must not hang: they leave with a message naming the collective (a CommError
// they do not catch, like most programs, or the note printed when the launcher ends them), and
// the driver (tests/reliability/fault_test.sh) checks the exit status, the wall time and the output.
#include <mpi.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "tessera/comm/process_group.hpp"
#include "tessera/comm/runtime.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "fault_victim: %s\nusage: fault_victim --mode kill|throw --op all_reduce|recv|exchange "
                       "[--device host|cuda]\n", why);
  std::exit(2);
}
}  // namespace

int main(int argc, char** argv) {
  std::string mode, op = "all_reduce", device = "host";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    if (a == "--mode") mode = argv[++i];
    else if (a == "--op") op = argv[++i];
    else if (a == "--device") device = argv[++i];
    else usage(("unknown option " + a).c_str());
  }
  if (mode != "kill" && mode != "throw") usage("--mode must be kill or throw");
  if (op != "all_reduce" && op != "recv" && op != "exchange") usage("--op must be all_reduce, recv or exchange");
  if (device != "host" && device != "cuda") usage("--device must be host or cuda");

  Runtime rt(argc, argv);
  auto& g = rt.world();
  const Device dev = device == "cuda" ? rt.device() : Device::host();
  if (device == "cuda" && !dev.is_cuda()) {
    std::fprintf(stderr, "fault_victim: --device cuda but rank %d has no GPU\n", g.rank());
    return 77;
  }
  const int victim = g.size() - 1;
  auto buf = local::full<double, 1>({1024}, 1.0, dev);

  // Everyone is connected (and the NCCL communicator exists) before the fault.
  g.all_reduce(buf, comm::ReduceOp::sum);
  g.synchronize(Stream::default_for(dev));
  if (local::to_host(buf)[0] != g.size()) {
    std::fprintf(stderr, "fault_victim: rank %d: warm-up all_reduce is wrong\n", g.rank());
    return 3;
  }
  // exchange: one redistribute before the fault, so that the transport's windows and handles exist.
  namespace td = tessera::distributed;
  const td::ProcessGrid grid(g, {g.size()});
  const td::Layout<2> rows(grid, {64, 64}, {0, -1}), cols(grid, {64, 64}, {-1, 0});
  std::optional<td::Array<double, 2>> a;
  if (op == "exchange") {
    a = td::arange<double, 2>(rows, dev);
    (void)td::redistribute(*a, cols);
  }
  g.barrier();

  if (g.rank() == victim) {
    // Give the others time to enter the collective.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::fprintf(stderr, "fault_victim: rank %d dies now (%s) while the others wait in %s\n", g.rank(),
                 mode.c_str(), op.c_str());
    std::fflush(stderr);
    if (mode == "kill") std::raise(SIGKILL);
    throw std::runtime_error("fault_victim: rank " + std::to_string(g.rank()) + " throws and does not catch");
  }
  if (op == "all_reduce") {
    g.all_reduce(buf, comm::ReduceOp::sum);
  } else if (op == "recv") {
    g.recv(buf, victim);
  } else {
    (void)td::redistribute(*a, cols);
  }
  g.synchronize(Stream::default_for(dev));
  std::fprintf(stderr, "fault_victim: rank %d: %s returned although rank %d died\n", g.rank(), op.c_str(), victim);
  return 4;
}
