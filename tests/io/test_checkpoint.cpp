// Checkpoints: round trips of several fields and the metadata at 1-4 ranks (host and cuda),
// reading on other layouts, sub-groups (write on 4 ranks, read on 3) and devices, interrupted
// writes (a stale temporary directory, a crash between the renames), overwriting, and errors
// on every rank. Every loaded array is gathered and checked against the formula it was made of.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "detail/checkpoint_chunks.hpp"  // private (distributed/io/src): the default chunk shape
#include "detail/zarr_meta.hpp"         // private: the fields' zarr.json
#include "device_test.hpp"
#include "io_test_util.hpp"
#include "tessera/io/checkpoint.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using namespace tessera::io::testing;
using comm::ProcessGroup;
using io::CheckpointReader;
using io::CheckpointWriter;
using io::IoError;
namespace fs = std::filesystem;

// Explicit offsets: p parts of n, alternately large and empty-ish (uneven on purpose).
std::vector<index_t> uneven(index_t n, int p) {
  std::vector<index_t> o(p + 1, n);
  o[0] = 0;
  for (int k = 1; k < p; ++k) o[k] = std::min<index_t>(n, o[k - 1] + (k % 2 ? n / p + 2 : 0));
  return o;
}

// The three fields of the suite on the ranks of `g`, written with one set of layouts and read
// with another.
struct Fields {
  Layout<3> u;  // double 17x13x5
  Layout<2> v;  // complex<float> 11x3
  Layout<1> n;  // int32 29
  Layout<1> tiny;  // int64 2: empty blocks beyond 2 ranks
};
Fields write_layouts(const ProcessGroup& g) {
  const ProcessGrid g1(g), g3 = ProcessGrid::balanced(g, 3);
  return {Layout<3>::block(g3, {17, 13, 5}, {1, 1, 1}),
          Layout<2>(g1, {11, 3}, {0, -1}, {uneven(11, g.size()), std::vector<index_t>{0, 3}}, {1, 0}),
          Layout<1>(g1, {29}, {0}, {2}), Layout<1>(g1, {2}, {0})};
}
Fields read_layouts(const ProcessGroup& g) {
  const ProcessGrid g1(g), g2 = ProcessGrid::balanced(g, 2);
  return {Layout<3>(g1, {17, 13, 5}, {-1, 0, -1}), Layout<2>::block(g2, {11, 3}),
          Layout<1>(g1, {29}, {0}, {uneven(29, g.size())}, {0}), Layout<1>(ProcessGrid(g, {g.size()}), {2}, {-1})};
}

void write_all(const std::string& dir, const Fields& l, Device d, int salt, std::int64_t step) {
  CheckpointWriter w(dir, l.u.grid().group());
  w.set_step(step);
  w.set_time(0.1 * static_cast<double>(step));
  w.set("scheme", "rk4");
  w.set("tricky", "a \"quoted\" \\ value\n\twith UTF-8 \xc3\xa9 and \x01");
  w.add("u", formula<double, 3>(l.u, d, salt));
  w.add("v", formula<std::complex<float>, 2>(l.v, d, salt), io::Compressor::zlib);
  w.add("n", formula<std::int32_t, 1>(l.n, d, salt), {4});
  w.add("tiny", formula<std::int64_t, 1>(l.tiny, d, salt));
  w.commit();
}

void expect_all(const CheckpointReader& r, const Fields& l, Device d, int salt, std::int64_t step) {
  EXPECT_EQ(r.step(), step);
  EXPECT_EQ(r.time(), 0.1 * static_cast<double>(step));
  EXPECT_EQ(r.get("scheme"), "rk4");
  EXPECT_EQ(r.get("tricky"), "a \"quoted\" \\ value\n\twith UTF-8 \xc3\xa9 and \x01");
  EXPECT_EQ(r.names(), (std::vector<std::string>{"u", "v", "n", "tiny"}));
  EXPECT_EQ(r.field("v").dtype, "<c8");
  EXPECT_EQ(r.field("u").shape, (std::vector<std::int64_t>{17, 13, 5}));
  EXPECT_EQ(r.field("n").chunks, (std::vector<std::int64_t>{4}));
  EXPECT_TRUE(matches_formula(r.load<double, 3>("u", l.u, d), salt));
  EXPECT_TRUE(matches_formula(r.load<std::complex<float>, 2>("v", l.v, d), salt));
  EXPECT_TRUE(matches_formula(r.load<std::int32_t, 1>("n", l.n, d), salt));
  EXPECT_TRUE(matches_formula(r.load<std::int64_t, 1>("tiny", l.tiny, d), salt));
}

template <class K> class Checkpoint : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(Checkpoint, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(Checkpoint, RoundTripsFieldsAndMetadata) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const std::string dir = tmp.file("ckpt");
  write_all(dir, write_layouts(world), d, 0, 7);
  const CheckpointReader r(dir, world);
  EXPECT_EQ(r.path(), dir);
  expect_all(r, write_layouts(world), d, 0, 7);    // the same layouts
  expect_all(r, read_layouts(world), d, 0, 7);     // others
  expect_all(r, read_layouts(world), Device::host(), 0, 7);  // onto the host, whatever wrote it
  EXPECT_TRUE(r.has("scheme"));
  EXPECT_FALSE(r.has("nope"));
  EXPECT_THROW(r.get("nope"), IoError);
  // The checkpoint is a plain Zarr v3 group of arrays: nothing else is left around it.
  EXPECT_TRUE(fs::exists(dir + "/zarr.json"));
  EXPECT_TRUE(fs::exists(dir + "/u/zarr.json"));
  // Compressor::zlib is the standard gzip codec there (Zarr v3 has no zlib).
  EXPECT_EQ(io::parse_zarr_json(tmp.get("ckpt/v/zarr.json")).codecs.bytes.at(0).id, "gzip");
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()), 1);
}

// Checkpoints of earlier versions, whose zlib fields name a "zlib" codec (zlib-framed chunks),
// still load.
TYPED_TEST(Checkpoint, ReadsZlibFieldsOfEarlierVersions) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const std::string dir = tmp.file("ckpt");
  write_all(dir, write_layouts(world), d, 2, 9);
  rewrite_as_zlib_named(tmp, dir + "/v");
  EXPECT_NE(tmp.get("ckpt/v/zarr.json").find("\"name\": \"zlib\""), std::string::npos);
  expect_all(CheckpointReader(dir, world), read_layouts(world), d, 2, 9);
}

// Write with every rank, read with sub-groups: ranks [0, p-1) and the last rank alone (at 4
// ranks: write on 4, read on 3 and on 1), each on layouts of its own group.
TYPED_TEST(Checkpoint, WriteOnAllRanksReadOnFewer) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const std::string dir = tmp.file("ckpt");
  write_all(dir, write_layouts(world), d, 3, 11);
  const int p = world.size(), readers = std::max(1, p - 1);
  const ProcessGroup sub = world.split(world.rank() < readers ? 0 : 1, world.rank());
  EXPECT_EQ(sub.size(), world.rank() < readers ? readers : 1);
  const CheckpointReader r(dir, sub);
  expect_all(r, read_layouts(sub), d, 3, 11);
  expect_all(r, write_layouts(sub), d, 3, 11);
  world.barrier();
}

// A stale temporary directory (a writer that crashed) is ignored; a crash between the renames
// (only <dir>.old left) reads the previous checkpoint; one just before removing .old reads the
// new one; the next commit cleans all of it up. A writer destroyed without commit() leaves the
// previous checkpoint alone.
TYPED_TEST(Checkpoint, SurvivesInterruptedWrites) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const std::string dir = tmp.file("ckpt");
  const Fields l = write_layouts(world);
  write_all(dir, l, d, 1, 1);
  tmp.on_root([&] {  // a crashed writer's leftovers: half a field and garbage
    fs::create_directories(dir + ".tmp-999-dead/u");
    std::ofstream(dir + ".tmp-999-dead/u/.zarray") << "{\"zarr_fo";
    std::ofstream(dir + ".tmp-999-dead/zarr.json") << "garbage";
  });
  expect_all(CheckpointReader(dir, world), l, d, 1, 1);

  {  // a writer that never commits
    CheckpointWriter w(dir, world);
    w.add("u", formula<double, 3>(l.u, d, 5));
    EXPECT_TRUE(fs::exists(w.temp_path()));
    world.barrier();  // rank 0's destructor removes it: every rank looks first
  }
  world.barrier();
  expect_all(CheckpointReader(dir, world), l, d, 1, 1);

  tmp.on_root([&] { fs::rename(dir, dir + ".old"); });  // crash between the two renames
  {
    const CheckpointReader r(dir, world);
    EXPECT_EQ(r.path(), dir + ".old");
    expect_all(r, read_layouts(world), d, 1, 1);
  }
  write_all(dir, l, d, 2, 2);  // commits over a missing <dir> and an existing .old
  expect_all(CheckpointReader(dir, world), l, d, 2, 2);
  tmp.on_root([&] { fs::copy(dir, dir + ".old", fs::copy_options::recursive); });  // crash before removing .old
  expect_all(CheckpointReader(dir, world), l, d, 2, 2);
  write_all(dir, l, d, 3, 3);
  expect_all(CheckpointReader(dir, world), l, d, 3, 3);
  world.barrier();
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"ckpt"});  // no .old, no .tmp-*
}

TYPED_TEST(Checkpoint, OverwriteKeepsOnlyTheNewCheckpoint) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const std::string dir = tmp.file("ckpt") + "/";  // a trailing slash names the same checkpoint
  write_all(dir, write_layouts(world), d, 4, 40);
  const Layout<2> l = Layout<2>::block(ProcessGrid::balanced(world, 2), {6, 7});
  {
    CheckpointWriter w(dir, world);
    w.set_step(41);
    w.set_time(-INFINITY);
    w.add("w", formula<double, 2>(l, d, 6));
    w.commit();
    EXPECT_THROW(w.commit(), InvalidArgument);
    EXPECT_THROW(w.add("x", formula<double, 2>(l, d)), InvalidArgument);
  }
  const CheckpointReader r(dir, world);
  EXPECT_EQ(r.step(), 41);
  EXPECT_EQ(r.time(), -INFINITY);
  EXPECT_TRUE(r.attributes().empty());
  EXPECT_EQ(r.names(), std::vector<std::string>{"w"});
  EXPECT_TRUE(matches_formula(r.load<double, 2>("w", l, d), 6));
  EXPECT_FALSE(fs::exists(tmp.file("ckpt/u")));
  EXPECT_FALSE(fs::exists(tmp.file("ckpt.old")));
  {  // NaN time and an empty checkpoint
    CheckpointWriter w(tmp.file("empty"), world);
    w.set_time(NAN);
    w.commit();
  }
  const CheckpointReader e(tmp.file("empty"), world);
  EXPECT_TRUE(std::isnan(e.time()));
  EXPECT_TRUE(e.names().empty());
}

TYPED_TEST(Checkpoint, ErrorsOnEveryRank) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const std::string dir = tmp.file("ckpt");
  const Fields l = write_layouts(world);
  write_all(dir, l, d, 0, 5);
  const CheckpointReader r(dir, world);
  expect_io_error_everywhere(world, [&] { (void)r.load<double, 3>("nope", l.u, d); }, {dir, "no field 'nope'"});
  expect_io_error_everywhere(world, [&] { (void)r.load<float, 3>("u", l.u, d); }, {dir, "'u' is <f8", "asked for <f4"});
  const Layout<3> wrong = Layout<3>::block(ProcessGrid(world), {17, 13, 6});
  expect_io_error_everywhere(world, [&] { (void)r.load<double, 3>("u", wrong, d); }, {"[17, 13, 5]", "[17, 13, 6]"});
  expect_io_error_everywhere(world, [&] { (void)CheckpointReader(tmp.file("missing"), world); }, {"missing", "does not exist"});

  // Damaged files: only the rank reading the damage finds it; every rank throws.
  tmp.on_root([&] { fs::remove(dir + "/n/c/7"); });  // a missing chunk is damage in a checkpoint
  expect_io_error_everywhere(world, [&] { (void)r.load<std::int32_t, 1>("n", l.n, d); }, {dir + "/n", "chunk c/7 is missing"});
  tmp.put("ckpt/u/c/0/0/0", "short");
  expect_io_error_everywhere(world, [&] { (void)r.load<double, 3>("u", l.u, d); }, {dir + "/u", "truncated chunk"});
  tmp.put("ckpt/v/c/0/0", "not zlib");
  expect_io_error_everywhere(world, [&] { (void)r.load<std::complex<float>, 2>("v", l.v, d); }, {"bad gzip data"});
  const std::string json = tmp.get("ckpt/zarr.json");
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {json.substr(0, json.size() / 2), "bad JSON"},
           {"", "bad JSON"},
           {"{\"format\": \"other\"}", "format"},
           {"{\"format\": \"tessera-checkpoint\", \"version\": 3}", "version"},
           {"{\"format\": \"tessera-checkpoint\", \"version\": 2, \"step\": 1.5}", "step"},
           {"{\"format\": \"tessera-checkpoint\", \"version\": 2, \"step\": 99999999999999999999}", "step"},
           {"{\"format\": \"tessera-checkpoint\", \"version\": 2, \"step\": 1, \"time\": 0, \"attributes\": {},"
            " \"fields\": [{\"name\": \"../x\", \"dtype\": \"<f8\", \"shape\": [1], \"chunks\": [1]}]}", "field name"},
           {"{\"format\": \"tessera-checkpoint\", \"version\": 2, \"step\": 1, \"time\": 0, \"attributes\": {\"a\": 1},"
            " \"fields\": []}", "attribute"}}) {
    tmp.put("ckpt/zarr.json", text);
    expect_io_error_everywhere(world, [&] { (void)CheckpointReader(dir, world); }, {dir + "/zarr.json", needle});
  }
  tmp.on_root([&] { fs::remove(dir + "/zarr.json"); });
  expect_io_error_everywhere(world, [&] { (void)CheckpointReader(dir, world); }, {dir, "no zarr.json"});

  // Commit refuses to replace a directory that is not a checkpoint (and leaves it alone).
  tmp.on_root([&] { std::ofstream(tmp.file("ckpt/precious.txt")) << "keep me"; });
  {
    CheckpointWriter w(dir, world);
    w.add("n", formula<std::int32_t, 1>(l.n, d));
    expect_io_error_everywhere(world, [&] { w.commit(); }, {dir, "not a checkpoint"});
  }
  world.barrier();
  EXPECT_EQ(tmp.get("ckpt/precious.txt"), "keep me");

  // Caller errors: the same InvalidArgument on every rank, and the writer stays usable.
  CheckpointWriter w(tmp.file("other"), world);
  EXPECT_THROW(w.add("", formula<std::int32_t, 1>(l.n, d)), InvalidArgument);
  EXPECT_THROW(w.add(".hidden", formula<std::int32_t, 1>(l.n, d)), InvalidArgument);
  EXPECT_THROW(w.add("a/b", formula<std::int32_t, 1>(l.n, d)), InvalidArgument);
  w.add("n", formula<std::int32_t, 1>(l.n, d));
  EXPECT_THROW(w.add("n", formula<std::int32_t, 1>(l.n, d)), InvalidArgument);
  if (world.size() > 1) {  // the same ranks in another order are another group
    const ProcessGroup reversed = world.split(0, world.size() - 1 - world.rank());
    EXPECT_THROW(w.add("r", formula<std::int32_t, 1>(Layout<1>(ProcessGrid(reversed), {29}, {0}), d)), InvalidArgument);
  }
  w.commit();
  EXPECT_EQ(CheckpointReader(tmp.file("other"), world).names(), std::vector<std::string>{"n"});
}

// set_format(2): a Zarr v2 group (.zgroup, .zattrs) of v2 arrays, read back like a v3 one.
TYPED_TEST(Checkpoint, ZarrV2Group) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const Fields l = write_layouts(world);
  {
    CheckpointWriter w(tmp.file("ckpt"), world);
    w.set_format(2);
    w.set_step(4);
    w.set("k", "v");
    w.add("u", formula<double, 3>(l.u, d, 2), io::Compressor::zstd);
    w.commit();
  }
  EXPECT_TRUE(fs::exists(tmp.file("ckpt/.zgroup")));
  EXPECT_TRUE(fs::exists(tmp.file("ckpt/u/.zarray")));
  const CheckpointReader r(tmp.file("ckpt"), world);
  EXPECT_EQ(r.step(), 4);
  EXPECT_EQ(r.get("k"), "v");
  EXPECT_TRUE(matches_formula(r.load<double, 3>("u", read_layouts(world).u, d), 2));
  EXPECT_THROW(CheckpointWriter(tmp.file("other"), world).set_format(4), InvalidArgument);
}

// Fields written with a Codec, as save_zarr takes (Blosc with its compressor, level and shuffle;
// gzip at a level), and with shards: each loads back, and its zarr.json holds what was asked for.
TYPED_TEST(Checkpoint, FieldCodecsLevelsAndShards) {
  TempDir tmp;
  const auto world = tessera::testing::world();
  const Device d = this->device();
  const Fields l = write_layouts(world), back = read_layouts(world);
  io::Codec gz = io::Compressor::gzip;
  gz.level = 7;
  const io::Codec lz4hc = io::Codec::make_blosc(io::BloscCodec::lz4hc, 7, io::Shuffle::none);
  {
    CheckpointWriter w(tmp.file("ckpt"), world);
    w.add("u", formula<double, 3>(l.u, d, 1), io::Codec::make_blosc(io::BloscCodec::zstd, 3, io::Shuffle::bit));
    w.add("v", formula<std::complex<float>, 2>(l.v, d, 1), {4, 3}, gz);
    w.add("n", formula<std::int32_t, 1>(l.n, d, 1), {4}, {.codec = lz4hc, .shard = {12}});
    w.commit();
  }
  const CheckpointReader r(tmp.file("ckpt"), world);
  EXPECT_TRUE(matches_formula(r.load<double, 3>("u", back.u, d), 1));
  EXPECT_TRUE(matches_formula(r.load<std::complex<float>, 2>("v", back.v, d), 1));
  EXPECT_TRUE(matches_formula(r.load<std::int32_t, 1>("n", back.n, d), 1));
  EXPECT_EQ(r.field("n").chunks, (std::vector<std::int64_t>{4}));

  const auto u = io::parse_zarr_json(tmp.get("ckpt/u/zarr.json")).codecs;
  ASSERT_EQ(u.bytes.size(), 1u);
  EXPECT_EQ(u.bytes[0].id, "blosc");
  EXPECT_EQ(u.bytes[0].cname, "zstd");
  EXPECT_EQ(u.bytes[0].level, 3);
  EXPECT_EQ(u.bytes[0].shuffle, 2);
  const auto v = io::parse_zarr_json(tmp.get("ckpt/v/zarr.json")).codecs;
  ASSERT_EQ(v.bytes.size(), 1u);
  EXPECT_EQ(v.bytes[0].id, "gzip");
  EXPECT_EQ(v.bytes[0].level, 7);
  const auto n = io::parse_zarr_json(tmp.get("ckpt/n/zarr.json"));
  EXPECT_EQ(n.chunks, (std::vector<std::int64_t>{12}));  // the shards
  ASSERT_TRUE(n.codecs.shard);
  EXPECT_EQ(n.codecs.shard->inner, (std::vector<std::int64_t>{4}));
  ASSERT_EQ(n.codecs.shard->codecs.bytes.size(), 1u);
  EXPECT_EQ(n.codecs.shard->codecs.bytes[0].cname, "lz4hc");
  EXPECT_EQ(n.codecs.shard->codecs.bytes[0].level, 7);
  EXPECT_EQ(n.codecs.shard->codecs.bytes[0].shuffle, 0);
  EXPECT_TRUE(fs::exists(tmp.file("ckpt/n/c/2")));  // 29 elements: shards 0-2
  EXPECT_FALSE(fs::exists(tmp.file("ckpt/n/c/3")));

  // Zarr v2 has no shards; a shard that is not a multiple of the chunks is refused.
  CheckpointWriter w2(tmp.file("v2"), world);
  w2.set_format(2);
  EXPECT_THROW(w2.add("n", formula<std::int32_t, 1>(l.n, d), {4}, {.shard = {12}}), InvalidArgument);
  CheckpointWriter w3(tmp.file("v3"), world);
  EXPECT_THROW(w3.add("n", formula<std::int32_t, 1>(l.n, d), {4}, {.shard = {10}}), InvalidArgument);
}

TEST(CheckpointChunks, DefaultIsTheLargestBlockCappedAt64MiB) {
  using V = std::vector<std::int64_t>;
  using tessera::distributed::DynBox;
  EXPECT_EQ(io::detail::checkpoint_chunks({DynBox{{0, 0}, {6, 13}}, DynBox{{6, 0}, {11, 13}}}, 8), (V{6, 13}));
  EXPECT_EQ(io::detail::checkpoint_chunks({DynBox{{0}, {0}}, DynBox{{0}, {0}}}, 8), (V{1}));  // all empty
  const V big = io::detail::checkpoint_chunks({DynBox{{0, 0, 0}, {1024, 1024, 1024}}}, 8);
  std::int64_t elems = 1;
  for (auto c : big) elems *= c;
  EXPECT_LE(elems * 8, 64 << 20);
  EXPECT_GE(elems * 8, 32 << 20);
}

}  // namespace
