// Helpers of the I/O suites (test_checkpoint.cpp, test_io_bad.cpp): a temporary directory shared
// by all ranks, arrays filled from a formula of the global flat index, the check of a (gathered)
// array against that formula, and "IoError on every rank".
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "../device_test.hpp"
#include "detail/zarr_codecs.hpp"  // private (distributed/io/src): the codecs, to forge old stores
#include "../distributed/dist_test_util.hpp"
#include "tessera/distributed/array.hpp"
#include "tessera/io/error.hpp"
#include "tessera/local/basic_ops.hpp"

namespace tessera::io::testing {

using distributed::Array;
using distributed::Layout;
using local::index_t;

// A fresh directory under /tmp made by rank 0 of the world; removed when the test ends.
struct TempDir {
  std::string path;
  comm::ProcessGroup world = tessera::testing::world();
  TempDir() {
    char buf[64] = "/tmp/tessera_io_XXXXXX";
    if (world.rank() == 0 && !mkdtemp(buf)) buf[0] = '\0';
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, world.mpi_comm());
    path = buf;
  }
  ~TempDir() {
    world.barrier();
    if (world.rank() == 0 && !path.empty()) std::filesystem::remove_all(path);
    world.barrier();
  }
  std::string file(const std::string& name) const { return path + "/" + name; }
  // Runs f on rank 0 only (file surgery), between barriers.
  template <class F>
  void on_root(F&& f) const {
    world.barrier();
    if (world.rank() == 0) f();
    world.barrier();
  }
  void put(const std::string& name, const std::string& bytes) const {
    on_root([&] { std::ofstream(file(name), std::ios::binary | std::ios::trunc) << bytes; });
  }
  std::string get(const std::string& name) const {
    std::ifstream in(file(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

// The value at global flat index g; `salt` tells two versions of an array apart.
template <class T>
T value_at(index_t g, int salt = 0) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(g * 7 - 5 + 1000 * salt);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(g * 0.5 - 3 + salt);
  else return T(static_cast<typename T::value_type>(g * 0.5 + salt), static_cast<typename T::value_type>(-g));
}

// An array of layout l on d with value_at(g, salt) inside and junk in the halos.
template <class T, int R>
Array<T, R> formula(const Layout<R>& l, Device d, int salt = 0) {
  Array<T, R> a(l, d);
  local::fill(a.local(), value_at<T>(-11, 99));
  const auto box = l.local_box();
  const auto s = box.shape();
  const auto gs = local::row_major_strides(l.global_shape());
  local::Array<T, R> h(s, Device::host());
  for (index_t k = 0; k < box.size(); ++k) {
    index_t rem = k, g = 0;
    for (int ax = R - 1; ax >= 0; --ax) g += (box.lo[ax] + rem % s[ax]) * gs[ax], rem /= s[ax];
    h.data()[k] = value_at<T>(g, salt);
  }
  if (box.size() > 0) local::copy(a.interior(), h);
  return a;
}

// The whole array, gathered on every rank, against the serial reference value_at(g, salt).
template <class T, int R>
::testing::AssertionResult matches_formula(const Array<T, R>& a, int salt = 0) {
  const auto all = distributed::testing::gather_to_host(a);
  for (std::size_t g = 0; g < all.size(); ++g)
    if (!(all[g] == value_at<T>(static_cast<index_t>(g), salt)))
      return ::testing::AssertionFailure() << "element " << g << " of " << a.layout().str() << " differs (salt " << salt << ")";
  return ::testing::AssertionSuccess();
}

// f() throws IoError on every rank of `g`, mentioning each needle.
template <class F>
void expect_io_error_everywhere(const comm::ProcessGroup& g, F&& f, const std::vector<std::string>& needles) {
  std::int32_t threw = 0;
  std::string what;
  try {
    f();
  } catch (const IoError& e) {
    threw = 1;
    what = e.what();
  }
  const std::int32_t all = g.all_reduce<std::int32_t>(threw, comm::ReduceOp::min);
  const std::int32_t any = g.all_reduce<std::int32_t>(threw, comm::ReduceOp::max);
  EXPECT_EQ(all, 1) << "IoError on " << (any ? "some" : "no") << " ranks (expected one mentioning '" << needles.front() << "')";
  if (!threw) return;
  for (const auto& n : needles) EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' not in: " << what;
}

// Turns the Zarr v3 store `dir`, written with Compressor::zlib (the standard gzip codec), into
// what Tessera wrote before it used gzip there: a codec named "zlib" and zlib-framed (RFC 1950)
// chunks, as no Zarr v3 reader but Tessera's knows. Collective over the world (rank 0 rewrites).
inline void rewrite_as_zlib_named(const TempDir& tmp, const std::string& dir) {
  tmp.on_root([&] {
    const auto slurp = [](const std::filesystem::path& p) {
      std::ifstream in(p, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().filename() == "zarr.json") continue;
      const auto raw = detail::decode_bytes(BytesCodec{"gzip"}, slurp(e.path()), 1 << 24, 1);
      const auto old = detail::encode_bytes(BytesCodec{"zlib", 1}, raw.view(), 1, 1);
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << std::string(old.view());
    }
    std::string meta = slurp(dir + "/zarr.json");
    const std::string gzip = "\"name\": \"gzip\"";
    for (auto at = meta.find(gzip); at != std::string::npos; at = meta.find(gzip, at))
      meta.replace(at, gzip.size(), "\"name\": \"zlib\"");
    std::ofstream(dir + "/zarr.json", std::ios::trunc) << meta;
  });
}

}  // namespace tessera::io::testing
