// Bad input to the .npy and Zarr readers: truncated data, corrupt headers and metadata, wrong
// dtype or shape, missing and corrupt chunks, and randomly mutated headers. Each must give
// IoError naming the path on every rank (no crash, no hang, no rank left behind) and leave the
// destination as it was (loads return a new array only when the whole file was read).
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "detail/npy_header.hpp"  // private (distributed/io/src): headers written by hand
#include "device_test.hpp"
#include "io_test_util.hpp"
#include "tessera/io/npy.hpp"
#include "tessera/io/zarr.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using namespace tessera::io::testing;
using comm::ProcessGroup;
namespace fs = std::filesystem;

template <class K> class IoBad : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(IoBad, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

// `load` either returns or throws IoError, the same on every rank; returns whether it loaded.
template <class F>
bool same_outcome_everywhere(const ProcessGroup& g, F&& load, const std::string& what) {
  std::int32_t ok = 1;
  try {
    load();
  } catch (const io::IoError&) {
    ok = 0;
  }
  const auto lo = g.all_reduce<std::int32_t>(ok, comm::ReduceOp::min), hi = g.all_reduce<std::int32_t>(ok, comm::ReduceOp::max);
  EXPECT_EQ(lo, hi) << what << ": some ranks loaded, others threw";
  return lo == 1;
}

TYPED_TEST(IoBad, NpyFilesThrowOnEveryRankAndLeaveTheDestination) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const Layout<2> l = Layout<2>::block(ProcessGrid::balanced(world, 2), {9, 7}, {1, 0});
  io::save_npy(tmp.file("good.npy"), formula<double, 2>(l, d));
  auto dst = io::load_npy<double, 2>(tmp.file("good.npy"), l, d);
  ASSERT_TRUE(matches_formula(dst));
  const std::string good = tmp.get("good.npy");
  const std::size_t off = io::parse_npy_header(good).data_offset;
  const std::string data = good.substr(off);
  std::string long_len = good, bad_version = good, bad_key = good;
  long_len[8] = long_len[9] = static_cast<char>(0xff);
  bad_version[6] = 9;
  bad_key.replace(bad_key.find("descr"), 5, "dexcr");
  tmp.on_root([&] { fs::create_directory(tmp.file("dir.npy")); });
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"short_data.npy", good.substr(0, good.size() - 8), "shorter than its header and data"},
      {"half_data.npy", good.substr(0, off + data.size() / 2), "shorter than its header and data"},
      {"no_data.npy", good.substr(0, off), "shorter than its header and data"},
      {"cut_header.npy", good.substr(0, 40), "bad .npy header"},
      {"long_len.npy", long_len, "header of 65535 bytes"},
      {"version.npy", bad_version, "unsupported format version 9.0"},
      {"key.npy", bad_key, "unexpected key 'dexcr'"},
      {"magic.npy", "GIF89a" + good.substr(6), "wrong magic"},
      {"empty.npy", "", "preamble"},
      {"f4.npy", io::make_npy_header("<f4", {9, 7}) + data.substr(0, 9 * 7 * 4), "dtype '<f4'"},
      {"shape.npy", io::make_npy_header("<f8", {7, 9}) + data, "shape (7, 9)"},
      {"rank.npy", io::make_npy_header("<f8", {63}) + data, "shape (63,)"},
  };
  for (const auto& [name, bytes, needle] : cases) {
    tmp.put(name, bytes);
    const std::string path = tmp.file(name);  // (clang before 16 cannot capture a structured binding)
    expect_io_error_everywhere(world, [&] { dst = io::load_npy<double, 2>(path, l, d); }, {path, needle});
  }
  expect_io_error_everywhere(world, [&] { dst = io::load_npy<double, 2>(tmp.file("missing.npy"), l, d); },
                             {tmp.file("missing.npy"), "cannot open"});
  expect_io_error_everywhere(world, [&] { dst = io::load_npy<double, 2>(tmp.file("dir.npy"), l, d); }, {tmp.file("dir.npy")});
  expect_io_error_everywhere(world, [&] { (void)io::load_npy<double, 2>(tmp.file("good.npy"), Layout<2>::block(ProcessGrid(world), {9, 8}), d); },
                             {"shape (9, 7) but (9, 8)"});
  EXPECT_TRUE(matches_formula(dst)) << "a failed load changed the destination";
  EXPECT_TRUE(matches_formula(io::load_npy<double, 2>(tmp.file("good.npy"), l, d)));  // still in step
}

// Random byte changes in the header: a load either works or throws IoError, alike everywhere.
TYPED_TEST(IoBad, NpyMutatedHeadersNeverCrashOrDisagree) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const Layout<1> l(ProcessGrid(world), {10}, {0});
  io::save_npy(tmp.file("good.npy"), formula<std::int64_t, 1>(l, d));
  const std::string good = tmp.get("good.npy");
  const std::size_t off = io::parse_npy_header(good).data_offset;
  std::mt19937 rng(12345);  // the same mutations on every rank (rank 0 writes them)
  int loaded = 0;
  for (int i = 0; i < 60; ++i) {
    std::string m = good;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) m[rng() % off] = static_cast<char>(rng() % 256);
    tmp.put("m.npy", m);
    loaded += same_outcome_everywhere(world, [&] { (void)io::load_npy<std::int64_t, 1>(tmp.file("m.npy"), l, d); },
                                      "mutation " + std::to_string(i));
  }
  EXPECT_LT(loaded, 60);  // most mutations break the header
}

TYPED_TEST(IoBad, ZarrStoresThrowOnEveryRankAndLeaveTheDestination) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const Layout<2> l = Layout<2>::block(ProcessGrid::balanced(world, 2), {10, 6});
  const std::string s = tmp.file("s"), z = tmp.file("z");
  io::save_zarr(s, formula<double, 2>(l, d), {3, 4}, io::Compressor::none);
  io::save_zarr(z, formula<double, 2>(l, d), {3, 4}, io::Compressor::zlib);
  auto dst = io::load_zarr<double, 2>(z, l, d);
  ASSERT_TRUE(matches_formula(dst));
  const std::string zarray = tmp.get("s/.zarray"), zchunk = tmp.get("z/1.0");
  const auto expect_bad = [&](const std::string& store, const std::vector<std::string>& needles) {
    auto all = needles;
    all.insert(all.begin(), store);
    expect_io_error_everywhere(world, [&] { dst = io::load_zarr<double, 2>(store, l, d); }, all);
  };
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string t = zarray;
    t.replace(t.find(from), from.size(), to);
    return t;
  };

  // Chunks: truncated (the last chunk row is read by the last ranks only), bad zlib data.
  tmp.put("s/3.1", "short");
  expect_bad(s, {"chunk 3.1", "truncated chunk"});
  tmp.put("z/1.0", zchunk.substr(0, zchunk.size() / 2));
  expect_bad(z, {"chunk 1.0", "bad zlib data"});
  tmp.put("z/1.0", "not zlib at all");
  expect_bad(z, {"chunk 1.0", "bad zlib data"});
  tmp.put("z/1.0", std::string(zchunk.size(), '\0'));
  expect_bad(z, {"bad zlib data"});

  // Metadata: corrupt, mismatched, impossible.
  tmp.put("s/.zarray", zarray.substr(0, zarray.size() / 2));
  expect_bad(s, {"bad JSON"});
  tmp.put("s/.zarray", "\x89PNG\r\n\x1a\n");
  expect_bad(s, {"bad JSON"});
  tmp.put("s/.zarray", with("\"<f8\"", "\"<f4\""));
  expect_bad(s, {"dtype <f4 in the store, <f8 requested"});
  tmp.put("s/.zarray", with("[10, 6]", "[10, 7]"));
  expect_bad(s, {"shape [10,7] in the store, [10,6] in the layout"});
  tmp.put("s/.zarray", with("[10, 6]", "[10, 6, 1]"));
  expect_bad(s, {"axes"});
  tmp.put("s/.zarray", with("[3, 4]", "[100000000, 100000000]"));
  expect_bad(s, {"too large"});
  tmp.put("s/.zarray", with("[3, 4]", "[10000000, 10000000]"));
  expect_bad(s, {"too large to read"});
  tmp.put("s/.zarray", with("\"zarr_format\": 2", "\"zarr_format\": 3"));
  expect_bad(s, {"zarr_format"});
  tmp.on_root([&] { fs::remove(s + "/.zarray"); });
  expect_bad(s, {"cannot open"});
  expect_bad(tmp.file("nowhere"), {"cannot open"});

  // A fill value the dtype cannot hold is an error, not undefined behaviour.
  const Layout<1> li(ProcessGrid(world), {8}, {0});
  io::save_zarr(tmp.file("i"), formula<std::int32_t, 1>(li, d), {3});
  const std::string izarray = tmp.get("i/.zarray");
  std::string huge = izarray;
  huge.replace(huge.find("\"fill_value\": 0"), 15, "\"fill_value\": 1e300");
  tmp.put("i/.zarray", huge);
  expect_io_error_everywhere(world, [&] { (void)io::load_zarr<std::int32_t, 1>(tmp.file("i"), li, d); },
                             {tmp.file("i"), "does not fit dtype <i4"});

  EXPECT_TRUE(matches_formula(dst)) << "a failed load changed the destination";
}

// A missing chunk reads as the fill value, as zarr-python does (checkpoints, which write every
// chunk, treat it as damage instead: test_checkpoint.cpp).
TYPED_TEST(IoBad, ZarrMissingChunkIsTheFillValue) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const Layout<1> l(ProcessGrid(world), {9}, {0});
  io::save_zarr(tmp.file("s"), formula<double, 1>(l, d), {4});
  tmp.on_root([&] { fs::remove(tmp.file("s/1")); });
  const auto all = distributed::testing::gather_to_host(io::load_zarr<double, 1>(tmp.file("s"), l, d));
  for (index_t g = 0; g < 9; ++g) EXPECT_EQ(all[g], g >= 4 && g < 8 ? 0.0 : value_at<double>(g)) << g;
}

TYPED_TEST(IoBad, ZarrMutatedMetadataNeverCrashesOrDisagrees) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const Layout<2> l = Layout<2>::block(ProcessGrid::balanced(world, 2), {5, 4});
  io::save_zarr(tmp.file("s"), formula<std::complex<double>, 2>(l, d), {2, 3});
  const std::string good = tmp.get("s/.zarray");
  std::mt19937 rng(777);
  const std::string alphabet = "0123456789[]{},:\" -.eE<>cfi\\u";
  int loaded = 0;
  for (int i = 0; i < 60; ++i) {
    std::string m = good;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) m[rng() % m.size()] = alphabet[rng() % alphabet.size()];
    tmp.put("s/.zarray", m);
    loaded += same_outcome_everywhere(world, [&] { (void)io::load_zarr<std::complex<double>, 2>(tmp.file("s"), l, d); },
                                      "mutation " + std::to_string(i) + ": " + m);
  }
  EXPECT_LT(loaded, 60);
}

}  // namespace
