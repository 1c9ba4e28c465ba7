// HDF5 (parallel HDF5, built where found): round trips between layouts for every element type,
// chunked + deflate datasets, replacing a dataset in an existing file, the XDMF sidecar, and
// errors on every rank. Checked against the serial reference value_at(global index).
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>

#include "device_test.hpp"
#include "io_test_util.hpp"
#include "tessera/io/hdf5.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using namespace tessera::io::testing;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;

template <class K> class IoHdf5 : public DeviceTest<K> {};
TYPED_TEST_SUITE(IoHdf5, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

template <class T, int R>
void round_trip(const TempDir& tmp, const std::string& name, const Layout<R>& save, const Layout<R>& load, Device d,
                const io::Hdf5WriteOptions& o = {}) {
  io::save_hdf5(tmp.file("a.h5"), name, formula<T, R>(save, d), o);
  EXPECT_TRUE(matches_formula(io::load_hdf5<T, R>(tmp.file("a.h5"), name, load, d))) << name;
}

TYPED_TEST(IoHdf5, RoundTrips) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  auto save = Layout<3>::block(ProcessGrid::balanced(world, 2), {9, 7, 5});
  Layout<3> load(ProcessGrid(world), {9, 7, 5}, {-1, -1, 0});
  round_trip<double, 3>(tmp, "f8", save, load, d);
  round_trip<float, 3>(tmp, "f4_deflate", load, save, d, {{4, 7, 2}, 4});
  round_trip<std::int32_t, 3>(tmp, "i4", save, save, d, {{9, 7, 5}, 0});
  round_trip<std::int64_t, 3>(tmp, "i8", save, load, d);
  round_trip<std::complex<float>, 3>(tmp, "c8", save, load, d);
  round_trip<std::complex<double>, 3>(tmp, "c16", load, save, d, {{3, 3, 3}, 1});
  Layout<1> whole(ProcessGrid(world), {11}, {-1});  // replicated: written once
  round_trip<double, 1>(tmp, "replicated", whole, Layout<1>(ProcessGrid(world), {11}, {0}), d);
  // The file keeps every dataset; writing one again replaces it.
  io::save_hdf5(tmp.file("a.h5"), "f8", formula<double, 3>(save, d, 5));
  EXPECT_TRUE(matches_formula(io::load_hdf5<double, 3>(tmp.file("a.h5"), "f8", load, d), 5));
  EXPECT_TRUE(matches_formula(io::load_hdf5<std::int64_t, 3>(tmp.file("a.h5"), "i8", load, d)));
}

TYPED_TEST(IoHdf5, ErrorsOnEveryRank) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  Layout<2> l(ProcessGrid(world), {6, 4}, {0, -1});
  io::save_hdf5(tmp.file("a.h5"), "x", formula<double, 2>(l, d));
  expect_io_error_everywhere(world, [&] { (void)io::load_hdf5<double, 2>(tmp.file("a.h5"), "y", l, d); }, {"a.h5", "no dataset y"});
  expect_io_error_everywhere(world, [&] { (void)io::load_hdf5<float, 2>(tmp.file("a.h5"), "x", l, d); }, {"a.h5", "not of type"});
  expect_io_error_everywhere(world, [&] { (void)io::load_hdf5<double, 2>(tmp.file("a.h5"), "x", Layout<2>(ProcessGrid(world), {6, 5}, {0, -1}), d); },
                             {"another shape"});
  tmp.put("bad.h5", "not hdf5 at all");
  expect_io_error_everywhere(world, [&] { (void)io::load_hdf5<double, 2>(tmp.file("bad.h5"), "x", l, d); }, {"bad.h5", "cannot open"});
  expect_io_error_everywhere(world, [&] { io::save_hdf5(tmp.file("no/such/dir.h5"), "x", formula<double, 2>(l, d)); }, {"cannot create"});
}

// Names with groups ("fields/sub/p") create the groups, as h5py does, and load back.
TYPED_TEST(IoHdf5, NestedNamesCreateTheirGroups) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  auto save = Layout<3>::block(ProcessGrid::balanced(world, 2), {9, 7, 5});
  Layout<3> load(ProcessGrid(world), {9, 7, 5}, {-1, -1, 0});
  round_trip<double, 3>(tmp, "fields/sub/p", save, load, d);              // a new file
  round_trip<float, 3>(tmp, "fields/q", load, save, d, {{4, 7, 2}, 4});  // an existing group
  round_trip<std::int32_t, 3>(tmp, "/other/r", save, save, d);           // an absolute name
  io::save_hdf5(tmp.file("a.h5"), "fields/sub/p", formula<double, 3>(save, d, 3));  // replaced
  EXPECT_TRUE(matches_formula(io::load_hdf5<double, 3>(tmp.file("a.h5"), "fields/sub/p", load, d), 3));
  EXPECT_TRUE(matches_formula(io::load_hdf5<float, 3>(tmp.file("a.h5"), "/fields/q", load, d)));
  expect_io_error_everywhere(world, [&] { (void)io::load_hdf5<double, 3>(tmp.file("a.h5"), "fields/no/p", load, d); },
                             {"a.h5", "no dataset fields/no/p"});
}

TEST(Xdmf, Sidecar) {
  TempDir tmp;
  tmp.on_root([&] { io::write_xdmf(tmp.file("u.xmf"), "u.h5", "u", {4, 5, 6}, DType::float64, 0.5); });
  const std::string x = tmp.get("u.xmf");
  EXPECT_NE(x.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"4 5 6\""), std::string::npos) << x;
  EXPECT_NE(x.find("Precision=\"8\""), std::string::npos) << x;
  EXPECT_NE(x.find(">u.h5:/u<"), std::string::npos) << x;
  EXPECT_THROW(io::write_xdmf(tmp.file("c.xmf"), "c.h5", "c", {4, 5}, DType::complex64), io::IoError);
  EXPECT_THROW(io::write_xdmf(tmp.file("d.xmf"), "d.h5", "d", {4}, DType::float64), InvalidArgument);
  EXPECT_THROW(io::write_xdmf(tmp.file("s.xmf"), "s.h5", "s", {4, 5}, DType::float64, 0.0), InvalidArgument);
}

// XML's special characters in the file and dataset names are escaped (hdf5_check.py parses such a
// sidecar); characters XML 1.0 cannot hold are refused.
TEST(Xdmf, EscapesNames) {
  TempDir tmp;
  tmp.on_root([&] { io::write_xdmf(tmp.file("odd.xmf"), "a&b<c>\"d'.h5", "g/p&q<r>\"s't", {2, 3}, DType::int32); });
  const std::string x = tmp.get("odd.xmf");
  EXPECT_NE(x.find("<Grid Name=\"g/p&amp;q&lt;r&gt;&quot;s&apos;t\""), std::string::npos) << x;
  EXPECT_NE(x.find("<Attribute Name=\"g/p&amp;q&lt;r&gt;&quot;s&apos;t\""), std::string::npos) << x;
  EXPECT_NE(x.find(">a&amp;b&lt;c&gt;&quot;d&apos;.h5:/g/p&amp;q&lt;r&gt;&quot;s&apos;t</DataItem>"), std::string::npos) << x;
  EXPECT_EQ(x.find("p&q"), std::string::npos) << x;
  EXPECT_THROW(io::write_xdmf(tmp.file("bad.xmf"), "a.h5", std::string("u\x01v"), {2, 3}, DType::int32), InvalidArgument);
}

}  // namespace
