// numpy interop of io::save_npy/load_npy (driven by tests/io/io_npy.cmake with
// tests/io/npy_check.py):
//   npy_interop write DIR  -- saves arrays of known formulas (all seven dtypes) from any rank count
//   npy_interop read DIR   -- loads the files npy_check.py wrote and checks them (exit 77 if absent)
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "tessera/io/npy.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;

// Element at global flat index g; npy_check.py computes the same values.
template <class T> T value_at(index_t g) {
  if constexpr (std::is_same_v<T, bool>) return g % 3 == 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(g * 7 - 5);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(g * 0.5 - 3);
  else return T(static_cast<typename T::value_type>(g * 0.5), static_cast<typename T::value_type>(-g));
}

template <class T, int R> void for_block(const Layout<R>& l, auto f) {
  const auto box = l.local_box();
  const auto s = box.shape();
  const auto gs = local::row_major_strides(l.global_shape());
  for (index_t k = 0; k < box.size(); ++k) {
    index_t rem = k, g = 0;
    for (int ax = R - 1; ax >= 0; --ax) g += (box.lo[ax] + rem % s[ax]) * gs[ax], rem /= s[ax];
    f(k, g);
  }
}

template <class T, int R> void write(const std::string& path, const Layout<R>& l) {
  Array<T, R> a(l, Device::host());
  local::fill(a.local(), value_at<T>(-7));  // junk in halos
  const auto s = l.local_box().shape();
  std::unique_ptr<T[]> host(new T[l.local_box().size() + 1]);
  for_block<T>(l, [&](index_t k, index_t g) { host[k] = value_at<T>(g); });
  if (l.local_box().size() > 0) local::copy(a.interior(), local::Array<T, R>::view(host.get(), s, Device::host()));
  io::save_npy(path, a);
}

template <class T, int R> int check(const std::string& path, const Layout<R>& l) {
  const auto a = io::load_npy<T, R>(path, l, Device::host());
  local::Array<T, R> host(l.local_shape(), Device::host());
  if (l.local_box().size() > 0) local::copy(host, a.interior());
  int bad = 0;
  for_block<T>(l, [&](index_t k, index_t g) {
    if (!(host.data()[k] == value_at<T>(g)) && bad++ == 0) std::fprintf(stderr, "%s: wrong value at %lld\n", path.c_str(), (long long)g);
  });
  return bad;
}

template <class T> void write_all(const std::string& dir, const std::string& name, const ProcessGroup& w) {
  const ProcessGrid g1(w), g2 = ProcessGrid::balanced(w, 2), g3 = ProcessGrid::balanced(w, 3);
  write<T, 1>(dir + "/" + name + "_1d.npy", Layout<1>(g1, {29}, {0}, {1}));
  write<T, 2>(dir + "/" + name + "_2d.npy", Layout<2>::block(g2, {7, 11}));
  write<T, 3>(dir + "/" + name + "_3d.npy", Layout<3>::block(g3, {17, 13, 5}, {1, 0, 1}));
}

template <class T> int check_all(const std::string& dir, const std::string& name, const ProcessGroup& w) {
  const ProcessGrid g1(w), g2 = ProcessGrid::balanced(w, 2);
  return check<T, 1>(dir + "/" + name + "_1d.npy", Layout<1>(g1, {29}, {0})) +
         check<T, 2>(dir + "/" + name + "_2d.npy", Layout<2>::block(g2, {7, 11}, {1, 1})) +
         check<T, 3>(dir + "/" + name + "_3d.npy", Layout<3>(g1, {17, 13, 5}, {-1, 0, -1}));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    const std::string mode = argc > 2 ? argv[1] : "", dir = argc > 2 ? argv[2] : "";
    const auto w = ProcessGroup::world();
    try {
      if (mode == "write") {
        if (w.rank() == 0) std::filesystem::create_directories(dir);
        w.barrier();
        write_all<bool>(dir, "b1", w);
        write_all<std::int32_t>(dir, "i4", w);
        write_all<std::int64_t>(dir, "i8", w);
        write_all<float>(dir, "f4", w);
        write_all<double>(dir, "f8", w);
        write_all<std::complex<float>>(dir, "c8", w);
        write_all<std::complex<double>>(dir, "c16", w);
      } else if (mode == "read") {
        if (!std::filesystem::exists(dir + "/done")) {
          if (w.rank() == 0) std::printf("no files from numpy in %s: skipped\n", dir.c_str());
          rc = 77;
        } else {
          int bad = check_all<bool>(dir, "b1", w) + check_all<std::int32_t>(dir, "i4", w) +
                    check_all<std::int64_t>(dir, "i8", w) + check_all<float>(dir, "f4", w) +
                    check_all<double>(dir, "f8", w) + check_all<std::complex<float>>(dir, "c8", w) +
                    check_all<std::complex<double>>(dir, "c16", w);
          rc = bad ? 1 : 0;
          if (w.rank() == 0 && !bad) std::printf("all numpy files loaded and checked\n");
        }
      } else {
        std::fprintf(stderr, "usage: npy_interop write|read DIR\n");
        rc = 2;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "npy_interop: %s\n", e.what());
      rc = 1;
    }
    w.barrier();
  }
  MPI_Finalize();
  return rc;
}
