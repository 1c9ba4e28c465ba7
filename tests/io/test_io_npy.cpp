// Parallel .npy I/O: header parser/writer, round trips (save with one layout, load with another;
// halos, uneven and empty blocks, replicated grid axes, forced multi-round chunking) for all
// seven element types, and broken files giving IoError on every rank.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "detail/npy_header.hpp"  // private (distributed/io/src): the parser is tested directly
#include "detail/npy_mpiio.hpp"   // private: the staging size, shrunk to force rounds
#include "../distributed/dist_test_util.hpp"
#include "device_test.hpp"
#include "tessera/io/npy.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;
using tessera::io::IoError;
using tessera::io::NpyHeader;

// A fresh directory under /tmp made by rank 0 and removed when the test ends.
struct TempDir {
  std::string path;
  ProcessGroup world = tessera::testing::world();
  TempDir() {
    char buf[64] = "/tmp/tessera_npy_XXXXXX";
    if (world.rank() == 0 && !mkdtemp(buf)) buf[0] = '\0';
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, world.mpi_comm());
    path = buf;
    world.barrier();
  }
  ~TempDir() {
    world.barrier();
    if (world.rank() == 0 && !path.empty()) std::filesystem::remove_all(path);
  }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

template <class T> T value_at(index_t g) {
  if constexpr (std::is_same_v<T, bool>) return g % 3 == 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(g * 7 - 5);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(g * 0.5 - 3);
  else return T(static_cast<typename T::value_type>(g * 0.5), static_cast<typename T::value_type>(-g));
}

// An array whose element at global flat index g is value_at(g); halos hold junk.
template <class T, int R> Array<T, R> formula(const Layout<R>& l, Device d) {
  Array<T, R> a(l, d);
  local::fill(a.local(), value_at<T>(-11));
  const auto box = l.local_box();
  const auto s = box.shape();
  const auto gs = local::row_major_strides(l.global_shape());
  std::unique_ptr<T[]> host(new T[box.size() + 1]);  // not vector: vector<bool> has no data()
  for (index_t k = 0; k < box.size(); ++k) {
    index_t rem = k, g = 0;
    for (int ax = R - 1; ax >= 0; --ax) g += (box.lo[ax] + rem % s[ax]) * gs[ax], rem /= s[ax];
    host[k] = value_at<T>(g);
  }
  if (box.size() > 0) local::copy(a.interior(), local::Array<T, R>::view(host.get(), s, Device::host()));
  return a;
}

// Every rank checks its block (the blocks cover the array) against the formula.
template <class T, int R> void expect_formula(const Array<T, R>& a, const std::string& what) {
  const auto& l = a.layout();
  const auto box = l.local_box();
  const auto s = box.shape();
  const auto gs = local::row_major_strides(l.global_shape());
  local::Array<T, R> host(s, Device::host());
  if (box.size() > 0) local::copy(host, a.interior());
  for (index_t k = 0; k < box.size(); ++k) {
    index_t rem = k, g = 0;
    for (int ax = R - 1; ax >= 0; --ax) g += (box.lo[ax] + rem % s[ax]) * gs[ax], rem /= s[ax];
    ASSERT_EQ(host.data()[k], value_at<T>(g)) << "at " << g << ": " << what;
  }
}

std::vector<Layout<3>> layouts3() {
  return tessera::distributed::testing::varied_layouts_17x13x5(tessera::testing::world());
}

template <class T> void round_trips3(Device d, const TempDir& dir) {
  const auto ls = layouts3();
  for (std::size_t i = 0; i < ls.size(); ++i) {
    const auto& from = ls[i];
    const auto& to = ls[(i + 1) % ls.size()];
    const std::string f = dir.file("a" + std::to_string(i) + ".npy");
    io::save_npy(f, formula<T, 3>(from, d));
    const auto b = io::load_npy<T, 3>(f, to, d);
    EXPECT_EQ(b.layout(), to);
    expect_formula(b, from.str() + " -> " + to.str() + " " + io::npy_descr<T>());
  }
}

template <class K> class IoNpy : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(IoNpy, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(IoNpy, RoundTripsAllTypesAcrossLayouts) {
  TempDir dir;
  const Device d = this->device();
  round_trips3<bool>(d, dir);
  round_trips3<std::int32_t>(d, dir);
  round_trips3<std::int64_t>(d, dir);
  round_trips3<float>(d, dir);
  round_trips3<double>(d, dir);
  round_trips3<std::complex<float>>(d, dir);
  round_trips3<std::complex<double>>(d, dir);
}

TYPED_TEST(IoNpy, RoundTripsInManySmallChunks) {
  TempDir dir;
  const Device d = this->device();
  const auto saved = io::detail::npy_chunk_bytes();
  io::detail::set_npy_chunk_bytes(3 * 5 * 8);  // 3 slabs of 5 doubles, 1 slab of 13x5: ranks differ in rounds
  round_trips3<double>(d, dir);
  const auto world = tessera::testing::world();
  const Layout<2> rows(ProcessGrid(world), {23, 3}, {0, -1});
  io::save_npy(dir.file("r.npy"), formula<std::int64_t, 2>(rows, d));
  expect_formula(io::load_npy<std::int64_t, 2>(dir.file("r.npy"), Layout<2>(ProcessGrid(world), {23, 3}, {-1, 0}), d), "rows");
  io::detail::set_npy_chunk_bytes(saved);
}

TYPED_TEST(IoNpy, RoundTripsOneAndTwoDimensionalGrids) {
  TempDir dir;
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2);
  const Layout<1> a(g1, {29}, {0}, {2}), b(g1, {29}, {0});
  io::save_npy(dir.file("v.npy"), formula<float, 1>(a, d));
  expect_formula(io::load_npy<float, 1>(dir.file("v.npy"), b, d), "1-D");
  const Layout<2> c = Layout<2>::block(g2, {1, 9}), e = Layout<2>::block(g2, {1, 9}, {0, 1});
  io::save_npy(dir.file("m.npy"), formula<std::complex<double>, 2>(c, d));
  expect_formula(io::load_npy<std::complex<double>, 2>(dir.file("m.npy"), e, d), "1x9");
  const Layout<2> f = Layout<2>::block(g2, {2, 1}), h(g1, {2, 1}, {-1, -1});
  io::save_npy(dir.file("s.npy"), formula<std::int32_t, 2>(f, d));
  expect_formula(io::load_npy<std::int32_t, 2>(dir.file("s.npy"), h, d), "2x1 (empty blocks; replicated)");
}

TYPED_TEST(IoNpy, FileMatchesTheNpyFormat) {
  TempDir dir;
  const auto world = tessera::testing::world();
  const Layout<2> l = Layout<2>::block(ProcessGrid::balanced(world, 2), {4, 6}, {1, 0});
  io::save_npy(dir.file("f.npy"), formula<std::int32_t, 2>(l, this->device()));
  std::ifstream in(dir.file("f.npy"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const NpyHeader h = io::parse_npy_header(bytes);
  EXPECT_EQ(h.descr, "<i4");
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<index_t>{4, 6}));
  EXPECT_EQ(h.data_offset % 64, 0u);
  ASSERT_EQ(bytes.size(), h.data_offset + 24 * 4);
  for (int g = 0; g < 24; ++g) {
    std::int32_t v;
    std::memcpy(&v, bytes.data() + h.data_offset + 4 * g, 4);
    EXPECT_EQ(v, value_at<std::int32_t>(g));
  }
}

// Writes `bytes` as a file (rank 0) that every rank then sees.
void put(const TempDir& dir, const std::string& name, const std::string& bytes) {
  if (dir.world.rank() == 0) std::ofstream(dir.file(name), std::ios::binary) << bytes;
  dir.world.barrier();
}

TYPED_TEST(IoNpy, BrokenFilesThrowOnEveryRank) {
  TempDir dir;
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const Layout<2> l = Layout<2>::block(ProcessGrid::balanced(world, 2), {5, 7});
  io::save_npy(dir.file("good.npy"), formula<double, 2>(l, d));
  std::string good;
  {
    std::ifstream in(dir.file("good.npy"), std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t off = io::parse_npy_header(good).data_offset;
  put(dir, "truncated.npy", good.substr(0, good.size() - 8));
  put(dir, "header_only.npy", good.substr(0, 30));
  put(dir, "magic.npy", "\x93NUMPX" + good.substr(6));
  put(dir, "dict.npy", good.substr(0, 10) + std::string(off - 11, ' ').replace(0, 5, "{'des") + "\n" + good.substr(off));
  put(dir, "empty.npy", "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated.npy", "shorter"}, {"header_only.npy", "header"}, {"magic.npy", "magic"}, {"dict.npy", "bad .npy header"},
      {"empty.npy", "preamble"}, {"missing.npy", "cannot open"}};
  for (const auto& [name, what] : cases) {
    try {
      (void)io::load_npy<double, 2>(dir.file(name), l, d);
      ADD_FAILURE() << name << " loaded";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(dir.file(name)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((io::load_npy<float, 2>(dir.file("good.npy"), l, d)), IoError);  // dtype
  const Layout<2> other = Layout<2>::block(ProcessGrid::balanced(world, 2), {7, 5});
  EXPECT_THROW((io::load_npy<double, 2>(dir.file("good.npy"), other, d)), IoError);  // shape
  const Layout<3> r3 = Layout<3>::block(ProcessGrid(world), {5, 7, 1});
  EXPECT_THROW((io::load_npy<double, 3>(dir.file("good.npy"), r3, d)), IoError);  // rank
  EXPECT_THROW(io::save_npy(dir.file("no/such/dir.npy"), formula<double, 2>(l, d)), IoError);
  expect_formula(io::load_npy<double, 2>(dir.file("good.npy"), l, d), "after the errors");  // still in step
}

// Fortran-order and big-endian files (as numpy writes them for np.asfortranarray(a) and
// a.astype('>f8')) load into any layout: each rank transposes or swaps its own block.
template <class T>
void fortran_and_big_endian(const TempDir& dir, Device d, const std::string& descr) {
  const auto world = tessera::testing::world();
  const index_t n0 = 5, n1 = 7, n2 = 3;
  for (const bool fortran : {false, true})
    for (const bool big : {false, true}) {
      const std::string name = dir.file(descr.substr(1) + (fortran ? "_F" : "_C") + (big ? "_BE.npy" : "_LE.npy"));
      if (world.rank() == 0) {
        std::string h = io::make_npy_header((descr[0] == '|' ? "|" : big ? ">" : "<") + descr.substr(1), {n0, n1, n2});
        if (fortran) h.replace(h.find("False"), 5, "True ");
        std::string data;
        // Fortran order: the first index varies fastest.
        for (index_t k = 0; k < n0 * n1 * n2; ++k) {
          const index_t i = fortran ? k % n0 : k / (n1 * n2), j = fortran ? (k / n0) % n1 : (k / n2) % n1,
                        l = fortran ? k / (n0 * n1) : k % n2;
          T v = value_at<T>((i * n1 + j) * n2 + l);
          char b[sizeof(T)];
          std::memcpy(b, &v, sizeof v);
          const std::size_t unit = std::is_floating_point_v<T> || std::is_integral_v<T> ? sizeof(T) : sizeof(T) / 2;
          for (std::size_t o = 0; big && o < sizeof(T); o += unit) std::reverse(b + o, b + o + unit);
          data.append(b, sizeof b);
        }
        std::ofstream(name, std::ios::binary) << h << data;
      }
      world.barrier();
      for (const auto& l : {Layout<3>::block(ProcessGrid::balanced(world, 2), {n0, n1, n2}),
                            Layout<3>(ProcessGrid(world), {n0, n1, n2}, {-1, -1, 0})})
        expect_formula(io::load_npy<T, 3>(name, l, d), name);
    }
}

TYPED_TEST(IoNpy, FortranOrderAndBigEndian) {
  TempDir dir;
  fortran_and_big_endian<double>(dir, this->device(), "<f8");
  fortran_and_big_endian<std::int32_t>(dir, this->device(), "<i4");
  fortran_and_big_endian<std::complex<float>>(dir, this->device(), "<c8");
  fortran_and_big_endian<bool>(dir, this->device(), "|b1");
}

// Parser units (pure functions: the same on every rank).
std::string v1(const std::string& dict) {
  std::string h = "\x93NUMPY\x01";
  h += '\0';
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict;
}

TEST(IoNpyHeader, ParsesWhatNumpyWrites) {
  NpyHeader h = io::parse_npy_header(v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }         \n"));
  EXPECT_EQ(h.descr, "<f8");
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<index_t>{3, 4}));
  const std::string dq = "{\"shape\": (7,), \"fortran_order\": True, \"descr\": \"|b1\"}\n";
  h = io::parse_npy_header(v1(dq));
  EXPECT_EQ(h.descr, "|b1");
  EXPECT_TRUE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<index_t>{7}));
  EXPECT_EQ(h.data_offset, 10 + dq.size());
  h = io::parse_npy_header(v1("{'descr': '<c16', 'fortran_order': False, 'shape': (), }\n"));
  EXPECT_TRUE(h.shape.empty());
  h = io::parse_npy_header(v1("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 2), }\n") + "trailing data");
  EXPECT_EQ(h.shape, (std::vector<index_t>{0, 2}));
}

TEST(IoNpyHeader, WriterPadsTo64AndRoundTrips) {
  for (const auto& s : std::vector<std::vector<index_t>>{{}, {5}, {17, 13, 5}, {1, 2, 3, 4, 5, 6}}) {
    const std::string h = io::make_npy_header("<c8", s);
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h.back(), '\n');
    const NpyHeader p = io::parse_npy_header(h);
    EXPECT_EQ(p.descr, "<c8");
    EXPECT_EQ(p.shape, s);
    EXPECT_EQ(p.data_offset, h.size());
  }
  const std::vector<index_t> many(30000, 1);  // a header over 64 KiB needs format 2.0
  const std::string h = io::make_npy_header("<f4", many);
  EXPECT_EQ(h[6], 2);
  EXPECT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(io::parse_npy_header(h).shape, many);
}

TEST(IoNpyHeader, RejectsMalformedHeaders) {
  const std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }\n";
  std::string badver = v1(ok);
  badver[6] = 4;
  std::string longlen = v1(ok);
  longlen[8] = static_cast<char>(0xff);
  for (const std::string& b : std::vector<std::string>{
           "", "\x93NUMPY", "\x93NUMPZ\x01", badver, longlen, v1(ok).substr(0, 40),
           v1("{'descr': '<f8', 'fortran_order': False}\n"),
           v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), 'extra': 1}\n"),
           v1("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)}\n"),
           v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3)}\n"),
           v1("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}\n"),
           v1("{'descr': '<f8', 'fortran_order': 0, 'shape': (3,)}\n"),
           v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} x\n"),
           v1("{'descr': '<f8, 'fortran_order': False, 'shape': (3,)}\n"),
           v1("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999)}\n"),
           v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3,,)}\n"),
           v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3,"),
           v1("['descr', '<f8']\n")})
    EXPECT_THROW(io::parse_npy_header(b), IoError) << b;
}

}  // namespace
