// tessera_hello: each rank prints its device, runs the device self-test and joins a verified
// all-reduce. The first program `launch/demo` runs.
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace po = boost::program_options;

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);
  std::size_t n = 1 << 20;
  po::options_description opts("tessera_hello: device per rank and a verified all-reduce");
  opts.add_options()("help,h", "show this help")(
      "n", po::value<std::size_t>(&n)->default_value(n), "elements in the self-test and all-reduce");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    if (rt.rank() == 0) std::cerr << "tessera_hello: " << e.what() << "\n" << opts;
    return 2;
  }
  if (vm.count("help")) {
    if (rt.rank() == 0) std::cout << opts;
    return 0;
  }

  const std::size_t wrong_local = tessera::device_self_test(rt.device(), n);
  // Rank r contributes v[i] = r + i; the sum over ranks is size*i + size*(size-1)/2.
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = rt.rank() + static_cast<double>(i);
  rt.world().all_reduce(v.data(), n, tessera::comm::ReduceOp::sum);
  const double p = rt.size();
  std::int64_t wrong = static_cast<std::int64_t>(wrong_local);
  for (std::size_t i = 0; i < n; ++i) wrong += v[i] != p * static_cast<double>(i) + p * (p - 1) / 2;

  // Rank 0 prints every rank's line, in rank order (stdout of different ranks interleaves).
  char line[256];
  std::snprintf(line, sizeof line, "rank %d/%d (node-local %d): %s = %s, self-test %s", rt.rank(),
                rt.size(), rt.local_rank(), rt.device().str().c_str(),
                tessera::device_description(rt.device()).c_str(), wrong_local == 0 ? "ok" : "FAILED");
  std::vector<char> lines(rt.rank() == 0 ? sizeof line * rt.size() : 1);
  TESSERA_CHECK_MPI(MPI_Gather(line, sizeof line, MPI_CHAR, lines.data(), sizeof line, MPI_CHAR, 0,
                               rt.world().mpi_comm()));
  if (rt.rank() == 0)
    for (int r = 0; r < rt.size(); ++r) std::printf("%s\n", lines.data() + r * sizeof line);
  wrong = rt.world().all_reduce(wrong, tessera::comm::ReduceOp::sum);
  if (rt.rank() == 0)
    std::printf("all-reduce of %zu doubles over %d ranks: %s (%lld wrong)\n", n, rt.size(),
                wrong == 0 ? "verified" : "FAILED", static_cast<long long>(wrong));
  return wrong == 0 ? 0 : 1;
}
