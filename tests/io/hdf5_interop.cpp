// HDF5 interop with h5py (run by tests/io/io_hdf5.cmake under mpirun):
//   hdf5_interop write DIR   writes DIR/t.h5 (+ t.xmf; a dataset in nested groups) and a file and
//                            dataset named with XML's special characters (+ odd.xmf) that
//                            hdf5_check.py check DIR verifies;
//   hdf5_interop read DIR    loads DIR/py.h5 that hdf5_check.py write DIR made (exit 77 if absent).
// Element g (global flat index) of every dataset is g * 0.5 - 3 (real), g * 7 - 5 (integer),
// (g * 0.5, -g) (complex), as in tests/distributed/io_test_util.hpp.
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tessera/io/hdf5.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
int failures = 0;

template <class T> T value(index_t g) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(g * 7 - 5);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(g * 0.5 - 3);
  else return T(static_cast<typename T::value_type>(g * 0.5), static_cast<typename T::value_type>(-g));
}

template <class T, int R> index_t flat(const Layout<R>& l, index_t k) {
  const auto b = l.local_box();
  index_t rem = k, f = 0, stride = 1;
  for (int ax = R - 1; ax >= 0; --ax) f += (b.lo[ax] + rem % b.shape()[ax]) * stride, rem /= b.shape()[ax], stride *= l.global_shape()[ax];
  return f;
}

template <class T, int R> void write(const std::string& file, const std::string& name, const Layout<R>& l, const io::Hdf5WriteOptions& o = {}) {
  Array<T, R> a(l, Device::host());
  for (index_t k = 0; k < l.local_box().size(); ++k) a.interior().data()[k] = value<T>(flat<T, R>(l, k));
  io::save_hdf5(file, name, a, o);
}

template <class T, int R> void check(const std::string& file, const std::string& name, const Layout<R>& l) {
  const auto a = io::load_hdf5<T, R>(file, name, l, Device::host());
  for (index_t k = 0; k < l.local_box().size(); ++k)
    if (!(a.interior().data()[k] == value<T>(flat<T, R>(l, k)))) {
      std::fprintf(stderr, "%s:/%s: element %lld differs\n", file.c_str(), name.c_str(), (long long)flat<T, R>(l, k));
      ++failures;
      return;
    }
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    const std::string mode = argc == 3 ? argv[1] : "", dir = argc == 3 ? argv[2] : "";
    auto world = comm::ProcessGroup::world();
    auto g2 = ProcessGrid::balanced(world, 2);
    ProcessGrid g1(world);
    try {
      if (mode == "write") {
        write<double, 3>(dir + "/t.h5", "f8", Layout<3>::block(g2, {6, 5, 4}));
        write<float, 3>(dir + "/t.h5", "f4_deflate", Layout<3>::block(g2, {6, 5, 4}), {{3, 5, 4}, 6});
        write<std::int64_t, 1>(dir + "/t.h5", "i8", Layout<1>(g1, {11}, {0}));
        write<std::complex<double>, 2>(dir + "/t.h5", "c16", Layout<2>(g1, {5, 4}, {-1, 0}));
        if (world.rank() == 0) io::write_xdmf(dir + "/t.xmf", "t.h5", "f8", {6, 5, 4}, DType::float64, 0.25);
        const std::string odd_file = "o&d<d>\"'.h5", odd_name = "p&q<r>\"s't";  // as in hdf5_check.py
        write<double, 2>(dir + "/" + odd_file, odd_name, Layout<2>::block(g2, {4, 3}));
        if (world.rank() == 0) io::write_xdmf(dir + "/odd.xmf", odd_file, odd_name, {4, 3}, DType::float64);
        write<double, 3>(dir + "/t.h5", "fields/sub/p", Layout<3>::block(g2, {6, 5, 4}));
      } else if (mode == "read") {
        if (!std::filesystem::exists(dir + "/py.h5")) {
          if (world.rank() == 0) std::printf("no py.h5 from h5py in %s: skipped\n", dir.c_str());
          MPI_Finalize();
          return 77;
        }
        check<double, 3>(dir + "/py.h5", "f8", Layout<3>::block(g2, {6, 5, 4}));
        check<double, 3>(dir + "/py.h5", "f8_be_gzip", Layout<3>(g1, {6, 5, 4}, {-1, 0, -1}));
        check<std::int32_t, 2>(dir + "/py.h5", "i4", Layout<2>::block(g2, {7, 3}));
        check<std::complex<float>, 1>(dir + "/py.h5", "c8", Layout<1>(g1, {9}, {0}));
      } else {
        std::fprintf(stderr, "usage: hdf5_interop write|read DIR\n");
        ++failures;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[rank %d] %s\n", world.rank(), e.what());
      ++failures;
    }
    int any = failures;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    rc = any ? 1 : 0;
    if (world.rank() == 0) std::printf("hdf5_interop %s %s: %s\n", mode.c_str(), dir.c_str(), rc ? "FAILED" : "ok");
  }
  MPI_Finalize();
  return rc;
}
