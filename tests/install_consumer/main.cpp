// Uses the installed headers and libraries: a Runtime, its device and a checked all-reduce.
#include <tessera/tessera.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  const int total = rt.world().all_reduce(rt.rank() + 1, tessera::comm::ReduceOp::sum);
  const int expect = rt.size() * (rt.size() + 1) / 2;
  std::printf("consumer rank %d/%d on %s (Tessera %s): sum %d (expected %d)\n", rt.rank(),
              rt.size(), rt.device().str().c_str(), TESSERA_VERSION_STRING, total, expect);
  return total == expect ? 0 : 1;
}
