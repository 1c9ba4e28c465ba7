// Zarr v2 stores: round trips between layouts (checked against value<T>(global flat index)),
// the files written, missing chunks, errors on every rank, and the .zarray parser.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "detail/zarr_meta.hpp"  // private (distributed/io/src): the parser is tested directly
#include "device_test.hpp"
#include "tessera/io/zarr.hpp"
#include "zarr_values.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;
using io::Compressor;
using tessera::testing::DeviceTest;
namespace fs = std::filesystem;

using tessera::testing::zarr_values::flat_of;
using tessera::testing::zarr_values::value;

template <class T, int R>
Array<T, R> filled(const Layout<R>& l, Device d) {
  Array<T, R> a(l, d);
  const auto b = l.local_box();
  local::Array<T, R> h(b.shape(), Device::host());  // not std::vector: bool
  for (index_t k = 0; k < b.size(); ++k) h.data()[k] = value<T>(flat_of<R>(b, l.global_shape(), k));
  local::copy(a.interior(), h);
  return a;
}

// Each rank checks its block against the formula; expected(flat) overrides value<T>.
template <class T, int R, class F>
void expect_values(const Array<T, R>& a, const std::string& what, F&& expected) {
  const auto b = a.layout().local_box();
  local::Array<T, R> h(b.shape(), Device::host());
  local::copy(h, a.interior());
  for (index_t k = 0; k < b.size(); ++k) {
    const index_t f = flat_of<R>(b, a.global_shape(), k);
    if (!(h.data()[k] == expected(f))) {
      ADD_FAILURE() << what << ": element " << f << " differs";
      return;
    }
  }
}
template <class T, int R>
void expect_values(const Array<T, R>& a, const std::string& what) {
  expect_values(a, what, [](index_t f) { return value<T>(f); });
}

// A fresh directory name shared by all ranks (rank 0's pid); removed by the destructor.
struct TempStore {
  std::string path;
  explicit TempStore(const std::string& name) {
    auto g = tessera::testing::world();
    std::int64_t pid = getpid();
    g.broadcast(&pid, &pid, 1, DType::int64, 0, Stream::default_for(Device::host()));
    path = (fs::temp_directory_path() / ("tessera_zarr_" + name + "_" + std::to_string(pid))).string();
  }
  ~TempStore() {
    auto g = tessera::testing::world();
    g.barrier();
    if (g.rank() == 0) fs::remove_all(path);
    g.barrier();
  }
};

// Explicit uneven offsets over p parts of n (first part gets the most).
std::vector<index_t> uneven(index_t n, int p) {
  std::vector<index_t> o(p + 1, n);
  o[0] = 0;
  for (int k = 1; k < p; ++k) o[k] = std::min<index_t>(n, o[k - 1] + (n / p) + (k == 1 ? n % p : 0) + (k % 2));
  for (int k = 1; k <= p; ++k) o[k] = std::max(o[k], o[k - 1]);
  o[p] = n;
  return o;
}

template <class K> class IoZarr : public DeviceTest<K> {};
TYPED_TEST_SUITE(IoZarr, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

template <class T>
void round_trip_1d(Device d, io::Codec c) {
  auto world = tessera::testing::world();
  ProcessGrid grid(world);
  const index_t n = 23;
  Layout<1> save_l(grid, {n}, {0}, {{uneven(n, grid.size())}}, {1});
  Layout<1> load_l(grid, {n}, {0});
  TempStore store("1d");
  io::save_zarr(store.path, filled<T, 1>(save_l, d), {7}, c);
  auto b = io::load_zarr<T, 1>(store.path, load_l, d);
  expect_values(b, "1-D " + io::zarr_dtype(dtype_v<T>));
}

TYPED_TEST(IoZarr, RoundTrip1DAllDtypes) {
  for (io::Codec c : {io::Codec(Compressor::none), io::Codec(Compressor::zlib), io::Codec(), io::Codec(Compressor::zstd)}) {
    round_trip_1d<bool>(this->device(), c);
    round_trip_1d<std::int32_t>(this->device(), c);
    round_trip_1d<std::int64_t>(this->device(), c);
    round_trip_1d<float>(this->device(), c);
    round_trip_1d<double>(this->device(), c);
    round_trip_1d<std::complex<float>>(this->device(), c);
    round_trip_1d<std::complex<double>>(this->device(), c);
  }
}

TYPED_TEST(IoZarr, RoundTrip2DOtherLayout) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  auto g2 = ProcessGrid::balanced(world, 2);
  auto save_l = Layout<2>::block(g2, {17, 13}, {1, 1});
  Layout<2> load_l(ProcessGrid(world), {17, 13}, {-1, 0});  // columns split, rows whole
  for (auto c : {Compressor::none, Compressor::zlib}) {
    TempStore store("2d");
    io::save_zarr(store.path, filled<double, 2>(save_l, d), {5, 4}, c);
    expect_values(io::load_zarr<double, 2>(store.path, load_l, d), "2-D");
    expect_values(io::load_zarr<double, 2>(store.path, save_l, d), "2-D same layout");
  }
}

TYPED_TEST(IoZarr, RoundTrip3D) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  auto save_l = Layout<3>::block(ProcessGrid::balanced(world, 3), {17, 13, 5});
  Layout<3> load_l(ProcessGrid(world), {17, 13, 5}, {-1, -1, 0});  // axis of 5: empty blocks at > 5 ranks
  TempStore store("3d");
  io::save_zarr(store.path, filled<std::complex<float>, 3>(save_l, d), {4, 6, 3}, Compressor::zlib);
  expect_values(io::load_zarr<std::complex<float>, 3>(store.path, load_l, d), "3-D");
}

// Empty blocks (1 x N on a 2-D grid) and replicated blocks (nothing split): every chunk is
// written once and the store reads back.
TYPED_TEST(IoZarr, EmptyAndReplicatedBlocks) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  auto thin = Layout<2>::block(ProcessGrid::balanced(world, 2), {1, 9});
  Layout<2> whole(ProcessGrid(world), {1, 9}, {-1, -1});
  TempStore store("thin");
  io::save_zarr(store.path, filled<std::int32_t, 2>(thin, d), {1, 2});
  expect_values(io::load_zarr<std::int32_t, 2>(store.path, whole, d), "thin -> replicated");
  io::save_zarr(store.path, filled<std::int32_t, 2>(whole, d), {1, 4});
  expect_values(io::load_zarr<std::int32_t, 2>(store.path, thin, d), "replicated -> thin");
}

// The files: .zarray fields, .zattrs, chunk names and full-size edge chunks.
TYPED_TEST(IoZarr, FilesOnDisk) {
  auto world = tessera::testing::world();
  auto l = Layout<2>::block(ProcessGrid::balanced(world, 2), {5, 3});
  TempStore store("files");
  io::save_zarr(store.path, filled<float, 2>(l, this->device()), {2, 2}, Compressor::none);
  std::ifstream f(fs::path(store.path) / ".zarray");
  std::stringstream ss;
  ss << f.rdbuf();
  const auto m = io::parse_zarray(ss.str());
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{5, 3}));
  EXPECT_EQ(m.chunks, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(m.dtype, "<f4");
  EXPECT_FALSE(m.compressor.has_value());
  EXPECT_TRUE(fs::exists(fs::path(store.path) / ".zattrs"));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(fs::file_size(fs::path(store.path) / (std::to_string(i) + "." + std::to_string(j))), 16u);
  EXPECT_FALSE(fs::exists(fs::path(store.path) / "3.0"));
}

// A missing chunk file reads as the fill value.
TYPED_TEST(IoZarr, MissingChunkIsFill) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  Layout<1> l(ProcessGrid(world), {10}, {0});
  TempStore store("missing");
  io::save_zarr(store.path, filled<std::int64_t, 1>(l, d), {4}, Compressor::zlib);
  world.barrier();
  if (world.rank() == 0) fs::remove(fs::path(store.path) / "1");
  world.barrier();
  expect_values(io::load_zarr<std::int64_t, 1>(store.path, l, d), "missing chunk",
                [](index_t i) { return i >= 4 && i < 8 ? 0 : value<std::int64_t>(i); });
}

// Every rank throws IoError naming the store, whichever rank found the problem.
template <class F>
void expect_io_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no IoError (expected one mentioning '" << needle << "')";
  } catch (const io::IoError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TYPED_TEST(IoZarr, ErrorsOnEveryRank) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  Layout<1> l(ProcessGrid(world), {12}, {0});
  TempStore store("errors");
  const fs::path p = store.path;
  io::save_zarr(store.path, filled<double, 1>(l, d), {3});
  expect_io_error([&] { io::load_zarr<float, 1>(store.path, l, d); }, "dtype <f8");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path, Layout<1>(ProcessGrid(world), {13}, {0}), d); },
                  "shape [12]");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path + "_nope", l, d); }, "not a Zarr array");
  // Saving into a path that is a regular file fails on rank 0; every rank throws.
  world.barrier();
  if (world.rank() == 0) std::ofstream(store.path + "_file") << "x";
  world.barrier();
  expect_io_error([&] { io::save_zarr(store.path + "_file", filled<double, 1>(l, d), {3}); }, "save_zarr");
  world.barrier();
  if (world.rank() == 0) fs::remove(store.path + "_file");
  EXPECT_THROW(io::save_zarr(store.path, filled<double, 1>(l, d), {0}), InvalidArgument);
  auto rewrite = [&](const fs::path& file, const std::string& text) {
    world.barrier();
    if (world.rank() == 0) std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    world.barrier();
  };
  // The last chunk is read by the last rank only: the others learn of it through the agreement.
  io::save_zarr(store.path, filled<double, 1>(l, d), {3}, Compressor::none);
  rewrite(p / "3", "short");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path, l, d); }, "truncated chunk");
  io::save_zarr(store.path, filled<double, 1>(l, d), {3}, Compressor::zlib);
  rewrite(p / "3", "not zlib at all");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path, l, d); }, "bad zlib data");
  rewrite(p / ".zarray", "{\"zarr_format\": 2,");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path, l, d); }, "bad JSON");
  const std::string base = R"({"zarr_format": 2, "shape": [12], "chunks": [3], "dtype": "<f8", "fill_value": 0.0,
    "order": "C", "filters": null, "compressor": )";
  rewrite(p / ".zarray", base + R"({"id": "lzma"}})");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path, l, d); }, "codec lzma is not supported");
  rewrite(p / ".zarray", R"({"zarr_format": 2, "shape": [12], "chunks": [3], "dtype": "<f8", "fill_value": 0.0,
    "order": "C", "filters": null, "compressor": {"id": "zstd", "level": 3}})");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path, l, d); }, "bad zstd data");
  rewrite(p / ".zarray", R"({"zarr_format": 2, "shape": [12], "chunks": [3], "dtype": "<f8", "fill_value": 0.0,
    "order": "C", "filters": null, "compressor": {"id": "blosc"}})");
  expect_io_error([&] { io::load_zarr<double, 1>(store.path, l, d); }, "bad blosc data");
}

std::string doc(const std::string& extra = "", const std::string& filters = "null") {
  return R"({"zarr_format": 2, "shape": [10, 4], "chunks": [3, 4], "dtype": "<c8", "fill_value": [1.5, "NaN"],
    "order": "C", "compressor": {"id": "zlib", "level": 1}, "filters": )" + filters + extra + "}";
}

TEST(IoZarrParser, Valid) {
  const auto m = io::parse_zarray(doc(R"(, "dimension_separator": "/", "x": {"a": [true, false, null, -1e3, "\u00e9\n"]})"));
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{10, 4}));
  EXPECT_EQ(m.chunks, (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(m.dtype, "<c8");
  EXPECT_EQ(m.compressor.value(), "zlib");
  EXPECT_EQ(m.level, 1);
  EXPECT_EQ(m.fill_real, 1.5);
  EXPECT_TRUE(std::isnan(m.fill_imag));
  EXPECT_EQ(m.order, 'C');
  EXPECT_EQ(m.separator, '/');
}

TEST(IoZarrParser, Rejects) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "bad JSON"},
      {"[]", "not a JSON object"},
      {doc() + " x", "bad JSON"},
      {doc(R"(, "zarr_format": 2)"), "duplicate key"},
      {"{\"a\": 01}", "bad JSON"},
      {"{\"a\": NaN}", "bad JSON"},
      {"{\"a\": \"x\ty\"}", "bad JSON"},
      {"{\"a\": [1, 2,]}", "bad JSON"},
      {"{\"a\": \"\\q\"}", "bad JSON"},
      {std::string(100, '[') + std::string(100, ']'), "too deep"},
      {doc("", "[{\"id\": \"delta\"}]"), "filters"},
      {R"({"zarr_format": 3, "shape": [1], "chunks": [1], "dtype": "<f8", "fill_value": 0, "order": "C", "compressor": null})", "zarr_format"},
      {R"({"zarr_format": 2, "shape": [1, 2], "chunks": [1], "dtype": "<f8", "fill_value": 0, "order": "C", "compressor": null})", "axes"},
      {R"({"zarr_format": 2, "shape": [1], "chunks": [0], "dtype": "<f8", "fill_value": 0, "order": "C", "compressor": null})", "chunks"},
      {R"({"zarr_format": 2, "shape": [1.5], "chunks": [1], "dtype": "<f8", "fill_value": 0, "order": "C", "compressor": null})", "shape"},
      {R"({"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "<f8", "order": "C", "compressor": null})", "fill_value"},
  };
  for (const auto& [text, needle] : bad) {
    try {
      io::parse_zarray(text);
      ADD_FAILURE() << "accepted: " << text.substr(0, 80);
    } catch (const io::IoError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

}  // namespace
