// numpy.histogram interop (tests/distributed/histogram_numpy.cmake): histogram_numpy.py wrote
// inputs and numpy's counts; every case must give numpy's counts exactly, on balanced and uneven
// blocks, on the host and (when this rank has one) the GPU. Exit 77 (skipped) without the files.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/distributed/algorithms.hpp"
#include "tessera/io/npy.hpp"
#include "tessera/tessera.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;

struct Case {
  std::string name, dtype;
  index_t n = 0, bins = 0;
  double lo = 0, hi = 0;
};

std::vector<Case> read_cases(const std::string& path) {
  std::vector<Case> cases;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    std::istringstream in(line);
    Case c;
    std::string lo, hi;
    if (in >> c.name >> c.dtype >> c.n >> c.bins >> lo >> hi) {
      c.lo = std::stod(lo), c.hi = std::stod(hi);  // repr round-trips
      cases.push_back(c);
    }
  }
  return cases;
}

// The last block holds about half of the array: uneven on more than one rank.
Layout<1> uneven(const ProcessGrid& g, index_t n) {
  const int p = g.size();
  std::vector<index_t> off(p + 1, 0);
  for (int r = 1; r < p; ++r) off[r] = (n / 2) * r * r / ((p - 1) * (p - 1));
  off[p] = n;
  return Layout<1>(g, {n}, {0}, {off}, {0});
}

template <class T>
int check(const std::string& dir, const Case& c, const Layout<1>& l, Device d, const std::vector<std::int64_t>& want) {
  const auto x = io::load_npy<T, 1>(dir + "/x_" + c.name + ".npy", l, d);
  const auto got = local::to_host(local::to(histogram(x, c.bins, c.lo, c.hi), Device::host()));
  if (got == want) return 0;
  if (l.grid().group().rank() == 0) {
    std::fprintf(stderr, "%s on %s, %s: counts differ from numpy's:\n", c.name.c_str(), d.str().c_str(), l.str().c_str());
    for (std::size_t b = 0; b < want.size(); ++b)
      if (got[b] != want[b]) std::fprintf(stderr, "  bin %zu: %lld, numpy %lld\n", b, (long long)got[b], (long long)want[b]);
  }
  return 1;
}

int run_case(const std::string& dir, const Case& c, const ProcessGrid& g, Device d) {
  const auto counts = io::load_npy<std::int64_t, 1>(dir + "/counts_" + c.name + ".npy", Layout<1>(g, {c.bins}, {-1}), Device::host());
  const auto want = local::to_host(counts.interior());
  int bad = 0;
  for (const auto& l : {Layout<1>(g, {c.n}, {0}), uneven(g, c.n)}) {
    if (c.dtype == "f4") bad += check<float>(dir, c, l, d, want);
    else if (c.dtype == "f8") bad += check<double>(dir, c, l, d, want);
    else if (c.dtype == "i4") bad += check<std::int32_t>(dir, c, l, d, want);
    else if (c.dtype == "i8") bad += check<std::int64_t>(dir, c, l, d, want);
    else throw InvalidArgument("histogram_interop: unknown dtype " + c.dtype + " of case " + c.name);
  }
  return bad;
}
}  // namespace

int main(int argc, char** argv) {
  Runtime rt(argc, argv);
  const std::string dir = argc > 1 ? argv[1] : ".";
  if (!std::filesystem::exists(dir + "/cases.txt")) {
    if (rt.rank() == 0) std::printf("no %s/cases.txt (numpy missing?): skipped\n", dir.c_str());
    return 77;
  }
  const auto cases = read_cases(dir + "/cases.txt");
  std::vector<Device> devices{Device::host()};
  if (rt.device().is_cuda()) devices.push_back(rt.device());
  const ProcessGrid g(rt.world());
  int bad = 0;
  for (const Device d : devices)
    for (const auto& c : cases) bad += run_case(dir, c, g, d);
  if (rt.rank() == 0)
    std::printf("%zu numpy histogram cases on %zu device kinds at %d ranks: %d mismatches\n", cases.size(), devices.size(),
                rt.size(), bad);
  return bad ? 1 : 0;
}
