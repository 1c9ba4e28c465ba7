// Zarr codecs and formats: every v2 compressor (zlib, gzip, zstd, Blosc with each inner codec and
// shuffle), order F and big-endian stores, Zarr v3 (bytes, transpose, sharding_indexed with a
// crc32c index), the v3 fixtures of tests/io/make_zarr3_fixtures.py, corrupt shards, and the
// zarr.json parser. Every load is checked against the serial reference value_at(global index).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <string>

#include "detail/zarr_codecs.hpp"  // private (distributed/io/src): tested directly
#include "detail/zarr_meta.hpp"
#include "detail/zarr_store.hpp"  // private: the staging slab size, shrunk to one row
#include "device_test.hpp"
#include "io_test_util.hpp"
#include "tessera/io/zarr.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using namespace tessera::io::testing;
using comm::ProcessGroup;
using io::BloscCodec;
using io::Codec;
using io::Compressor;
using io::Shuffle;
using io::ZarrWriteOptions;
using tessera::testing::DeviceTest;
namespace fs = std::filesystem;

template <class K> class IoZarrCodecs : public DeviceTest<K> {};
TYPED_TEST_SUITE(IoZarrCodecs, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

std::vector<std::pair<std::string, Codec>> every_codec() {
  return {{"none", Compressor::none},
          {"zlib", Compressor::zlib},
          {"gzip", Compressor::gzip},
          {"zstd", Compressor::zstd},
          {"blosc-lz4-shuffle", Codec{}},
          {"blosc-lz4hc-noshuffle", Codec::make_blosc(BloscCodec::lz4hc, 3, Shuffle::none)},
          {"blosc-blosclz-bitshuffle", Codec::make_blosc(BloscCodec::blosclz, 5, Shuffle::bit)},
          {"blosc-zstd", Codec::make_blosc(BloscCodec::zstd, 2)},
          {"blosc-zlib", Codec::make_blosc(BloscCodec::zlib, 1)}};
}

// Saves formula<T>(save) with options o, loads it onto `load` and checks it; returns the store.
template <class T, int R>
void round_trip(const TempDir& tmp, const std::string& name, const Layout<R>& save, const Layout<R>& load, Device d,
                Index<R> chunks, const ZarrWriteOptions& o) {
  io::save_zarr(tmp.file(name), formula<T, R>(save, d), chunks, o);
  EXPECT_TRUE(matches_formula(io::load_zarr<T, R>(tmp.file(name), load, d))) << name;
}

TYPED_TEST(IoZarrCodecs, V2EveryCodec) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  auto save = Layout<2>::block(ProcessGrid::balanced(world, 2), {19, 11});
  Layout<2> load(ProcessGrid(world), {19, 11}, {-1, 0});
  for (const auto& [name, c] : every_codec()) {
    round_trip<float, 2>(tmp, name + "_f4", save, load, d, {4, 5}, {c});
    round_trip<std::complex<double>, 2>(tmp, name + "_c16", save, load, d, {7, 3}, {c});
    round_trip<std::int32_t, 2>(tmp, name + "_i4", save, load, d, {5, 5}, {c});
    round_trip<std::int64_t, 2>(tmp, name + "_i8", load, save, d, {19, 2}, {c});
  }
}

// Blocks on the inner-chunk grid along the split axis (a multiple of 2 but the last, 13), or off it
// (odd boundaries), over the ranks of `grid`.
Layout<3> rows_of(const ProcessGrid& grid, bool on_grid) {
  const int p = grid.size();
  std::vector<index_t> off(p + 1);
  for (int c = 0; c <= p; ++c)
    off[c] = c == 0 ? 0 : c == p ? 13 : on_grid ? 2 * ((13 * c) / (2 * p)) : ((13 * c) / p) | 1;
  return Layout<3>(grid, {13, 6, 4}, {0, -1, -1}, {off, {0, 6}, {0, 4}}, {});
}

// Store `b` holds the files of store `a`, byte for byte, and no others (`count` of them, where
// given). The bytes are compared, not printed: a shard may be tens of MiB.
void expect_same_files(const TempDir& tmp, const std::string& a, const std::string& b, int count = -1) {
  tmp.on_root([&] {
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(tmp.file(a))) {
      if (!e.is_regular_file()) continue;
      const auto rel = fs::relative(e.path(), tmp.file(a)).string();
      const std::string x = tmp.get(a + "/" + rel), y = tmp.get(b + "/" + rel);
      EXPECT_TRUE(x == y) << b << "/" << rel << " (" << y.size() << " bytes) differs from " << a << "/" << rel << " ("
                          << x.size() << " bytes)";
      ++files;
    }
    int others = 0;
    for (const auto& e : fs::recursive_directory_iterator(tmp.file(b))) others += e.is_regular_file();
    EXPECT_EQ(others, files) << b;
    if (count >= 0) EXPECT_EQ(files, count) << a;
  });
}

// Shards whose inner chunks each lie in one rank's block are written by the ranks holding them,
// in place; the files are the ones the gathering writer makes (blocks off the inner grid), byte
// for byte, with every codec, an inner transpose, a shard past the array's end and an inner chunk
// wholly outside it (rows 14-15 of the second shard).
TYPED_TEST(IoZarrCodecs, ShardsWrittenInPlaceByTheRanksHoldingThem) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  const ProcessGrid grid(world);
  const auto on = rows_of(grid, true), off = rows_of(grid, false);
  for (const auto& [name, c] : every_codec())
    for (bool fortran : {false, true}) {
      ZarrWriteOptions o{c};
      o.format = 3, o.shard = {8, 6, 4}, o.fortran_order = fortran;
      const std::string a = name + (fortran ? "_F" : "") + "_in_place", b = name + (fortran ? "_F" : "") + "_gathered";
      round_trip<double, 3>(tmp, a, on, off, d, {2, 3, 4}, o);
      round_trip<double, 3>(tmp, b, off, on, d, {2, 3, 4}, o);
      expect_same_files(tmp, b, a, 3);  // zarr.json and two shards
    }
}

// A durable save (every file written in 16 MiB slices handed to writeback, then fsynced) writes
// the files a plain one writes: chunk files, shards gathered or written in place by the ranks
// holding their inner chunks, and inner chunks of more than one slice.
TYPED_TEST(IoZarrCodecs, DurableSavesWriteTheSameFiles) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  const ProcessGrid grid(world);
  const auto save_both = [&](const std::string& name, const auto& a, const auto& chunks, ZarrWriteOptions o) {
    io::save_zarr(tmp.file(name), a, chunks, o);
    o.durable = true;
    io::save_zarr(tmp.file(name + "_durable"), a, chunks, o);
    expect_same_files(tmp, name, name + "_durable");
  };
  for (bool on_grid : {true, false}) {
    const auto a = formula<double, 3>(rows_of(grid, on_grid), d);
    for (const Codec& c : {Codec{Compressor::none}, Codec{}, Codec{Compressor::zstd}}) {
      const std::string name = std::to_string(static_cast<int>(c.id)) + (on_grid ? "_on" : "_off");
      for (int format : {2, 3}) {
        ZarrWriteOptions o{c};
        o.format = format;
        save_both(name + "_v" + std::to_string(format), a, Index<3>{2, 3, 4}, o);
      }
      ZarrWriteOptions o{c};
      o.format = 3, o.shard = {8, 6, 4};
      save_both(name + "_shard", a, Index<3>{2, 3, 4}, o);
    }
  }
  Layout<3> large(ProcessGrid(world), {8, 1024, 600}, {0, -1, -1});  // inner chunks of 18.75 MiB
  ZarrWriteOptions o{Compressor::none};
  o.format = 3, o.shard = {8, 1024, 600};
  save_both("large_shard", formula<double, 3>(large, d), Index<3>{4, 1024, 600}, o);
  EXPECT_TRUE(matches_formula(io::load_zarr<double, 3>(tmp.file("large_shard_durable"), large, d)));
}

TYPED_TEST(IoZarrCodecs, FortranOrderAndBigEndian) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  auto save = Layout<3>::block(ProcessGrid::balanced(world, 3), {9, 7, 5});
  Layout<3> load(ProcessGrid(world), {9, 7, 5}, {-1, -1, 0});
  for (int format : {2, 3})
    for (bool f : {false, true})
      for (bool be : {false, true}) {
        ZarrWriteOptions o{Compressor::zstd};
        o.format = format, o.fortran_order = f, o.big_endian = be;
        const std::string name = "v" + std::to_string(format) + (f ? "F" : "C") + (be ? "BE" : "LE");
        round_trip<double, 3>(tmp, name + "_f8", save, load, d, {4, 3, 5}, o);
        round_trip<std::complex<float>, 3>(tmp, name + "_c8", load, save, d, {2, 7, 2}, o);
        round_trip<std::int32_t, 3>(tmp, name + "_i4", save, save, d, {9, 1, 3}, o);
      }
  const std::string meta = tmp.get("v2FBE_f8/.zarray");
  EXPECT_NE(meta.find("\"order\": \"F\""), std::string::npos) << meta;
  EXPECT_NE(meta.find("\">f8\""), std::string::npos) << meta;
}

TYPED_TEST(IoZarrCodecs, V3ShardedAndNot) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  auto save = Layout<3>::block(ProcessGrid::balanced(world, 2), {10, 6, 3});
  Layout<3> load(ProcessGrid(world), {10, 6, 3}, {-1, 0, -1});
  for (const auto& [name, c] : every_codec()) {
    ZarrWriteOptions o{c};
    o.format = 3;
    round_trip<float, 3>(tmp, name + "_plain", save, load, d, {3, 4, 3}, o);
    o.shard = {6, 4, 3};
    round_trip<float, 3>(tmp, name + "_shard", save, load, d, {2, 2, 3}, o);
    round_trip<std::complex<double>, 3>(tmp, name + "_shard_c16", load, save, d, {2, 2, 3}, o);
  }
  // Inner chunks that are whole runs of their shard: raw ones are written from the block as they
  // lie and read straight into it (rows split over the ranks; the last shard runs past the end).
  Layout<3> rows(ProcessGrid(world), {10, 6, 3}, {0, -1, -1});
  for (const auto& [name, c] : every_codec()) {
    ZarrWriteOptions o{c};
    o.format = 3, o.shard = {6, 6, 3};
    round_trip<float, 3>(tmp, name + "_runs", save, rows, d, {2, 6, 3}, o);
    round_trip<double, 3>(tmp, name + "_runs_rows", rows, load, d, {2, 6, 3}, o);
    round_trip<std::int64_t, 3>(tmp, name + "_runs_rows2", rows, rows, d, {2, 6, 3}, o);
  }
  // One file per shard under c/, plus zarr.json.
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp.file("zstd_shard")))
    files += e.is_regular_file() && e.path().filename() != "zarr.json";
  EXPECT_EQ(files, 2 * 2 * 1);
  EXPECT_TRUE(fs::exists(tmp.file("zstd_shard/c/1/1/0")));
  const auto m = io::parse_zarr_json(tmp.get("zstd_shard/zarr.json"));
  ASSERT_TRUE(m.codecs.shard);
  EXPECT_EQ(m.codecs.shard->inner, (std::vector<std::int64_t>{2, 2, 3}));
  EXPECT_EQ(m.chunks, (std::vector<std::int64_t>{6, 4, 3}));
  // A shard that is not a multiple of the chunks, or sharding in v2, is refused.
  ZarrWriteOptions o;
  o.format = 3, o.shard = {5, 4, 3};
  EXPECT_THROW(io::save_zarr(tmp.file("bad"), formula<float, 3>(save, d), {2, 2, 3}, o), InvalidArgument);
  o.format = 2, o.shard = {6, 4, 3};
  EXPECT_THROW(io::save_zarr(tmp.file("bad"), formula<float, 3>(save, d), {2, 2, 3}, o), InvalidArgument);
}

// Inner chunks of 1 MiB and more: a shard a rank's block holds whole is read inner chunk by inner
// chunk on the pool, as part of a shard is (rows split over the ranks: whole shards and parts; the
// last shard runs past the array's end), the inner chunks' codecs on the threads the others leave.
TYPED_TEST(IoZarrCodecs, V3WholeShardsOfLargeInnerChunks) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  Layout<3> rows(ProcessGrid(world), {250, 64, 64}, {0, -1, -1});
  auto cols = Layout<3>::block(ProcessGrid::balanced(world, 2), {250, 64, 64});
  for (const auto& [name, c] : every_codec()) {
    ZarrWriteOptions o{c};
    o.format = 3, o.shard = {64, 64, 64};
    round_trip<double, 3>(tmp, name + "_large", rows, rows, d, {32, 64, 64}, o);
    round_trip<double, 3>(tmp, name + "_large_cols", cols, rows, d, {32, 64, 64}, o);
  }
}

// Zarr v3 has no zlib codec: Compressor::zlib is written there as the standard gzip codec
// (gzip framing, RFC 1952), which zarr-python 3 and tensorstore read; v2 keeps numcodecs' zlib
// (zlib framing, RFC 1950). v3 stores of earlier versions (a "zlib" codec) still load.
TYPED_TEST(IoZarrCodecs, V3ZlibIsTheGzipCodec) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  Layout<2> l(ProcessGrid(world), {9, 5}, {0, -1});
  ZarrWriteOptions o{Compressor::zlib};
  o.format = 3;
  io::save_zarr(tmp.file("v3"), formula<double, 2>(l, d), {4, 5}, o);
  const std::string meta = tmp.get("v3/zarr.json");
  const auto m = io::parse_zarr_json(meta);
  ASSERT_EQ(m.codecs.bytes.size(), 1u) << meta;
  EXPECT_EQ(m.codecs.bytes[0].id, "gzip") << meta;
  EXPECT_EQ(m.codecs.bytes[0].level, 1) << meta;
  EXPECT_EQ(meta.find("zlib"), std::string::npos) << meta;
  EXPECT_EQ(tmp.get("v3/c/2/0").substr(0, 2), "\x1f\x8b");  // the gzip magic
  EXPECT_TRUE(matches_formula(io::load_zarr<double, 2>(tmp.file("v3"), l, d)));
  o.compressor.level = 6;
  io::save_zarr(tmp.file("v3_6"), formula<double, 2>(l, d), {4, 5}, o);
  EXPECT_EQ(io::parse_zarr_json(tmp.get("v3_6/zarr.json")).codecs.bytes.at(0).level, 6);
  EXPECT_TRUE(matches_formula(io::load_zarr<double, 2>(tmp.file("v3_6"), l, d)));

  io::save_zarr(tmp.file("v2"), formula<double, 2>(l, d), {4, 5}, Compressor::zlib);
  EXPECT_EQ(io::parse_zarray(tmp.get("v2/.zarray")).compressor.value_or(""), "zlib");
  EXPECT_EQ(tmp.get("v2/2.0").substr(0, 1), "\x78");  // a zlib header (deflate, 32K window)

  rewrite_as_zlib_named(tmp, tmp.file("v3"));
  EXPECT_EQ(io::parse_zarr_json(tmp.get("v3/zarr.json")).codecs.bytes.at(0).id, "zlib");
  EXPECT_EQ(tmp.get("v3/c/2/0").substr(0, 1), "\x78");
  EXPECT_TRUE(matches_formula(io::load_zarr<double, 2>(tmp.file("v3"), l, d)));
}

// Shards with halos (and device shards) are staged by slabs while ready chunks are written, and
// loaded by slabs as their chunks are decoded: one row per slab here, with chunks inside one
// rank's rows and chunks straddling ranks.
TYPED_TEST(IoZarrCodecs, StagedRowByRow) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  const std::size_t saved = io::detail::zarr_stage_bytes();
  io::detail::set_zarr_stage_bytes(1);
  auto halo = Layout<3>::block(ProcessGrid::balanced(world, 2), {13, 9, 4}, {1, 1, 0});
  Layout<3> load(ProcessGrid(world), {13, 9, 4}, {-1, 0, -1});
  for (const auto& [name, c] : every_codec()) {
    round_trip<double, 3>(tmp, name, halo, load, d, {2, 9, 4}, {c});
    round_trip<float, 3>(tmp, name + "_straddle", halo, load, d, {5, 4, 3}, {c});
    round_trip<std::int64_t, 3>(tmp, name + "_into_halo", load, halo, d, {3, 4, 4}, {c});
  }
  io::detail::set_zarr_stage_bytes(saved);
}

// Every codec path with all its buffers from the byte pool (codec outputs, chunk files read,
// shards and their pieces): a pool too small to keep much (buffers freed as they return), then
// one that keeps them (buffers handed out again, their old bytes still in them).
TYPED_TEST(IoZarrCodecs, ThroughTheBytePool) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  auto& pool = io::detail::BytePool::get();
  const auto saved = pool.bounds();
  auto save = Layout<3>::block(ProcessGrid::balanced(world, 2), {10, 6, 3});
  Layout<3> load(ProcessGrid(world), {10, 6, 3}, {-1, 0, -1});
  for (std::size_t keep : {std::size_t(256), std::size_t(64) << 20}) {
    pool.set_bounds({keep, 1});
    for (const auto& [name, c] : every_codec()) {
      ZarrWriteOptions o{c};
      round_trip<double, 3>(tmp, name + "_v2", save, load, d, {3, 4, 3}, o);
      o.format = 3, o.fortran_order = true, o.big_endian = true;
      round_trip<float, 3>(tmp, name + "_FBE", save, load, d, {4, 3, 2}, o);
      o.fortran_order = o.big_endian = false, o.shard = {6, 6, 3};
      round_trip<std::int64_t, 3>(tmp, name + "_shard", save, load, d, {2, 2, 3}, o);
    }
    if (keep > 256) EXPECT_GT(pool.kept(), 0u);  // the library's pool is this one
  }
  pool.set_bounds(saved);
}

// A v2 store overwritten as v3 (and back) reads as the last one written.
TYPED_TEST(IoZarrCodecs, FormatChangeInPlace) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  Layout<1> l(ProcessGrid(world), {13}, {0});
  for (int format : {2, 3, 2}) {
    ZarrWriteOptions o;
    o.format = format;
    io::save_zarr(tmp.file("s"), formula<std::int32_t, 1>(l, d, format), {4}, o);
    EXPECT_TRUE(matches_formula(io::load_zarr<std::int32_t, 1>(tmp.file("s"), l, d), format));
  }
}

TYPED_TEST(IoZarrCodecs, CorruptShards) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  TempDir tmp;
  Layout<2> l(ProcessGrid(world), {8, 4}, {0, -1});
  ZarrWriteOptions o{Compressor::zstd};
  o.format = 3, o.shard = {8, 4};
  io::save_zarr(tmp.file("s"), formula<double, 2>(l, d), {2, 2}, o);
  const std::string shard = tmp.get("s/c/0/0");
  tmp.put("s/c/0/0", shard.substr(0, 20));
  expect_io_error_everywhere(world, [&] { io::load_zarr<double, 2>(tmp.file("s"), l, d); }, {"s: chunk c/0/0", "shorter than its index"});
  const Layout<2> haloed(ProcessGrid(world), {8, 4}, {0, -1}, {1, 0});  // loaded slab by slab
  expect_io_error_everywhere(world, [&] { io::load_zarr<double, 2>(tmp.file("s"), haloed, d); }, {"shorter than its index"});
  std::string flipped = shard;
  flipped[flipped.size() - 10] ^= 1;  // inside the index: the crc32c catches it
  tmp.put("s/c/0/0", flipped);
  expect_io_error_everywhere(world, [&] { io::load_zarr<double, 2>(tmp.file("s"), l, d); }, {"crc32c checksum mismatch"});
  flipped = shard;
  flipped[3] ^= 0x55;  // inside the first inner chunk's zstd frame
  tmp.put("s/c/0/0", flipped);
  expect_io_error_everywhere(world, [&] { io::load_zarr<double, 2>(tmp.file("s"), l, d); }, {"zstd"});
}

// Stores written by tests/io/make_zarr3_fixtures.py from the v3 spec (see that script).
TYPED_TEST(IoZarrCodecs, V3Fixtures) {
  auto world = tessera::testing::world();
  const auto d = this->device();
  const std::string dir = TESSERA_ZARR3_FIXTURES;
  auto g2 = ProcessGrid::balanced(world, 2);
  EXPECT_TRUE(matches_formula(io::load_zarr<float, 2>(dir + "/f4_gzip", Layout<2>::block(g2, {7, 5}), d)));
  EXPECT_TRUE(matches_formula(io::load_zarr<double, 3>(dir + "/f8_transpose_be_blosc_v2keys",
                                                       Layout<3>(ProcessGrid(world), {5, 4, 3}, {-1, 0, -1}), d)));
  EXPECT_TRUE(matches_formula(io::load_zarr<std::complex<float>, 1>(dir + "/c8_shard_index_start",
                                                                    Layout<1>(ProcessGrid(world), {6}, {0}), d)));
  // Inner chunk (1, 1) of the first shard is absent: fill value 42 there.
  const auto a = io::load_zarr<std::int64_t, 2>(dir + "/i8_shard_crc32c_missing", Layout<2>::block(g2, {9, 6}), d);
  const auto all = distributed::testing::gather_to_host(a);
  for (index_t g = 0; g < 54; ++g) {
    const index_t i = g / 6, j = g % 6;
    const std::int64_t want = i >= 2 && i < 4 && j >= 3 ? 42 : value_at<std::int64_t>(g);
    ASSERT_EQ(all[g], want) << "element " << g;
  }
}

TEST(IoZarr3Parser, ValidAndRejected) {
  const std::string head = R"({"zarr_format": 3, "node_type": "array", "shape": [10, 4], "data_type": "float64",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}}, "fill_value": "NaN", )";
  const auto m = io::parse_zarr_json(head + R"("codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
    {"name": "bytes", "configuration": {"endian": "big"}}, {"name": "blosc", "configuration": {"cname": "zstd",
    "clevel": 3, "shuffle": "bitshuffle", "typesize": 8, "blocksize": 0}}], "attributes": {"a": 1}})");
  EXPECT_EQ(m.dtype, "<f8");
  EXPECT_TRUE(std::isnan(m.fill_real));
  EXPECT_EQ(m.codecs.transpose, (std::vector<int>{1, 0}));
  EXPECT_TRUE(m.codecs.big_endian);
  ASSERT_EQ(m.codecs.bytes.size(), 1u);
  EXPECT_EQ(m.codecs.bytes[0].cname, "zstd");
  EXPECT_EQ(m.codecs.bytes[0].shuffle, 2);
  EXPECT_EQ(io::chunk_key(m, {2, 0}), "c/2/0");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"zarr_format": 3, "node_type": "group"})", "node_type"},
      {head + R"("codecs": []})", "no array -> bytes codec"},
      {head + R"("codecs": [{"name": "zstd"}, {"name": "bytes"}]})", "before the array -> bytes"},
      {head + R"("codecs": [{"name": "bytes"}, {"name": "lzma"}]})", "codec lzma is not supported"},
      {head + R"("codecs": [{"name": "transpose", "configuration": {"order": [0, 0]}}, {"name": "bytes"}]})", "permutation"},
      {head + R"("codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 4], "codecs": [{"name": "bytes"}]}}]})",
       "does not divide"},
      {head + R"("codecs": [{"name": "bytes"}], "storage_transformers": [{"name": "x"}]})", "storage_transformers"},
  };
  for (const auto& [text, needle] : bad) {
    try {
      io::parse_zarr_json(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const io::IoError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

TEST(IoZarrCodecsUnit, BytePoolReusesWithinBounds) {
  using io::detail::PooledBytes;
  auto& pool = io::detail::BytePool::get();
  const auto saved = pool.bounds();
  const std::size_t mib = std::size_t(1) << 20;
  pool.set_bounds({64 * mib, mib});
  pool.trim(0);
  const char* first = nullptr;
  {
    PooledBytes a(3 * mib);
    first = a.data();
    PooledBytes b(std::move(a));  // moves keep the bytes where they are
    EXPECT_EQ(b.data(), first);
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(b.size(), 3 * mib);
    b.shrink(10);
    EXPECT_EQ(b.view().size(), 10u);
  }
  EXPECT_EQ(pool.kept(), 3 * mib);
  {
    PooledBytes a(3 * mib - 100);  // a little smaller: the same buffer
    EXPECT_EQ(a.data(), first);
    EXPECT_EQ(pool.kept(), 0u);
  }
  {
    PooledBytes small(mib);  // not the 3 MiB one (over twice as large)
    EXPECT_NE(small.data(), first);
    PooledBytes tiny(100);  // under `min`: never kept
  }
  EXPECT_EQ(pool.kept(), 3 * mib + mib);
  pool.set_bounds({2 * mib, mib});  // the oldest (3 MiB) goes first
  EXPECT_EQ(pool.kept(), mib);
  { PooledBytes a(8 * mib); }  // larger than the bound: freed, and the rest with it
  EXPECT_EQ(pool.kept(), 0u);
  pool.set_bounds(saved);
}

TEST(IoZarrCodecsUnit, Crc32cKnownValue) {
  EXPECT_EQ(io::detail::crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C check value
}

}  // namespace
