// redistribute, gather, allgather, scatter and slice, checked against a formula of the global
// index: interiors hold value<T>(global flat index), halos a sentinel that must never travel.
#include <gtest/gtest.h>

#include <complex>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "device_test.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/distributed/settings.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;

template <class T>
T value(index_t flat) {
  if constexpr (std::is_same_v<T, bool>) return flat % 3 == 1;
  else if constexpr (is_complex_v<T>) return T(typename T::value_type(flat), typename T::value_type(-0.5 * flat));
  else return T(flat);
}

template <int R>
index_t flat_of(const Index<R>& i, const Index<R>& shape) {
  index_t f = 0;
  for (int a = 0; a < R; ++a) f = f * shape[a] + i[a];
  return f;
}
template <int R>
Index<R> unflat(index_t f, const Index<R>& shape) {
  Index<R> i{};
  for (int a = R - 1; a >= 0; --a) i[a] = f % shape[a], f /= shape[a];
  return i;
}

// An array on `l` whose interior holds value<T>(global flat index) and whose halos hold T(-7).
template <class T, int R>
Array<T, R> filled(const Layout<R>& l, Device d) {
  Array<T, R> a(l, d);
  local::fill(a.local(), T(-7));
  const auto b = l.local_box();
  std::vector<T> host(static_cast<std::size_t>(b.size()));
  for (index_t k = 0; k < b.size(); ++k) {
    auto i = unflat<R>(k, b.shape());
    for (int ax = 0; ax < R; ++ax) i[ax] += b.lo[ax];
    host[k] = value<T>(flat_of<R>(i, l.global_shape()));
  }
  if (b.size()) local::copy(a.interior(), local::from_host(host, b.shape(), d));
  return a;
}

// Element i of `got` (global shape `shape`) must be value<T>(flat index of origin + i in `of`).
template <class T, int R>
void expect_formula(const local::Array<T, R>& got, const Index<R>& shape, const std::string& what,
                    const Index<R>& origin = {}, std::optional<Index<R>> of = std::nullopt) {
  ASSERT_EQ(got.shape(), shape) << what;
  const auto host = local::to_host(got);
  int bad = 0;
  for (index_t k = 0; k < got.size() && bad < 5; ++k) {
    auto i = unflat<R>(k, shape);
    for (int a = 0; a < R; ++a) i[a] += origin[a];
    const T want = value<T>(flat_of<R>(i, of.value_or(shape)));
    if (!(host[k] == want)) ++bad, ADD_FAILURE() << what << ": element " << k << " is " << host[k] << ", want " << want;
  }
}

template <class T, int R>
std::vector<T> interior_on_host(const Array<T, R>& a) {
  auto c = local::empty<T, R>(a.interior().shape(), a.device());
  local::copy(c, a.interior());
  return local::to_host(c);
}

// Redistributes a filled array from `from` to `to` and checks the layout and every element.
template <class T, int R>
void check_pair(const Layout<R>& from, const Layout<R>& to, Device d) {
  const std::string what = from.str() + " -> " + to.str();
  const auto a = filled<T, R>(from, d);
  const auto b = redistribute(a, to);
  EXPECT_TRUE(b.layout() == to) << what;
  EXPECT_EQ(b.device(), d);
  EXPECT_EQ(b.local().shape(), to.padded_shape()) << what;
  expect_formula<T, R>(allgather(b), to.global_shape(), what);
}

template <class T, int R>
void check_all_pairs(const std::vector<Layout<R>>& ls, Device d) {
  for (const auto& from : ls)
    for (const auto& to : ls) check_pair<T, R>(from, to, d);
}

// Offsets with the first block empty and the rest balanced (for p parts of n).
std::vector<index_t> skewed(index_t n, int p) {
  std::vector<index_t> o(p + 1, 0);
  for (int k = 1; k <= p; ++k) o[k] = p == 1 ? n : n * (k - 1) / (p - 1);
  return o;
}

template <class K> class Redistribute : public DeviceTest<K> {};
TYPED_TEST_SUITE(Redistribute, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(Redistribute, SplitAxisChangesOnOneDGrid) {
  const ProcessGrid g(tessera::testing::world());
  std::vector<Layout<3>> ls;
  for (int axis = -1; axis < 3; ++axis) {
    Layout<3>::Split s{-1, -1, -1};
    if (axis >= 0) s[axis] = 0;
    ls.emplace_back(g, Index<3>{9, 7, 6}, s);
  }
  check_all_pairs<double, 3>(ls, this->device());
}

TYPED_TEST(Redistribute, BetweenOneTwoAndThreeDGrids) {
  const auto w = tessera::testing::world();
  const ProcessGrid g1(w);
  const auto g2 = ProcessGrid::balanced(w, 2), g3 = ProcessGrid::balanced(w, 3);
  const Index<3> n{17, 13, 5};
  const std::vector<Layout<3>> ls = {
      Layout<3>(g1, n, {0, -1, -1}), Layout<3>(g1, n, {-1, -1, 0}), Layout<3>::block(g2, n),
      Layout<3>(g2, n, {1, -1, 0}),  Layout<3>(g2, n, {0, -1, -1}),  // grid axis 1 replicates
      Layout<3>::block(g3, n),       Layout<3>(g3, n, {2, 0, 1})};
  check_all_pairs<float, 3>(ls, this->device());
}

TYPED_TEST(Redistribute, HalosOnSourceAndTarget) {
  const auto w = tessera::testing::world();
  const ProcessGrid g1(w);
  const auto g2 = ProcessGrid::balanced(w, 2);
  const Index<3> n{17, 13, 5};
  const std::vector<Layout<3>> ls = {Layout<3>(g1, n, {0, -1, -1}, {1, 2, 0}), Layout<3>(g1, n, {-1, 0, -1}),
                                     Layout<3>::block(g2, n, {0, 2, 1}), Layout<3>(g2, n, {-1, 1, 0}, {1, 1, 1})};
  check_all_pairs<std::int64_t, 3>(ls, this->device());
}

TYPED_TEST(Redistribute, UnevenEmptyAndExplicitBlocks) {
  const auto w = tessera::testing::world();
  const ProcessGrid g1(w);
  const auto g2 = ProcessGrid::balanced(w, 2);
  const int p = w.size();
  const Index<3> n{17, 13, 5};
  Layout<3>::Offsets skew{{skewed(17, p), {0, 13}, {0, 5}}};
  Layout<3>::Offsets skew2{{{0, 17}, skewed(13, g2.dims()[0]), skewed(5, g2.dims()[1])}};
  const std::vector<Layout<3>> ls = {Layout<3>(g1, n, {0, -1, -1}, skew, {}),
                                     Layout<3>(g2, n, {-1, 0, 1}, skew2, {0, 1, 0}),
                                     Layout<3>(g1, n, {-1, -1, 0}),  // 5 over p: empty blocks past 5 ranks
                                     Layout<3>::block(g2, n)};
  check_all_pairs<complex64, 3>(ls, this->device());
  // Axes shorter than the grid: most blocks empty.
  const Index<2> thin{1, 10};
  check_all_pairs<double, 2>({Layout<2>(g1, thin, {0, -1}), Layout<2>(g1, thin, {-1, 0}), Layout<2>::block(g2, thin),
                              Layout<2>(g2, thin, {1, 0})},
                             this->device());
  check_pair<double, 2>(Layout<2>::block(g2, {2, 3}), Layout<2>(g1, {2, 3}, {-1, 0}), this->device());
}

// Pipelining cuts pieces into chunks that travel in steps; the result must not change. The
// settings are the defaults of every exchange (TESSERA_EXCHANGE_CHUNKS, _CHUNK_MIB).
struct ChunkEnv {
  tessera::distributed::Settings saved = tessera::distributed::settings();
  explicit ChunkEnv(int chunks) {
    tessera::distributed::Settings s = saved;
    s.exchange_chunks = chunks;
    s.exchange_chunk_mib = 0;
    tessera::distributed::set_settings(s);
  }
  ~ChunkEnv() { tessera::distributed::set_settings(saved); }
};

TYPED_TEST(Redistribute, PipelinedChunksGiveTheSameResult) {
  const auto w = tessera::testing::world();
  const ProcessGrid g1(w);
  const auto g2 = ProcessGrid::balanced(w, 2);
  const Index<3> n{17, 13, 5};
  for (int chunks : {2, 3, 64}) {
    ChunkEnv env(chunks);
    // Packed sends, staged receives, contiguous pieces, halos and replication, all cut.
    check_all_pairs<double, 3>({Layout<3>(g1, n, {0, -1, -1}), Layout<3>(g1, n, {-1, -1, 0}, {0, 1, 1}),
                                Layout<3>::block(g2, n, {1, 0, 0}), Layout<3>(g2, n, {-1, 0, -1})},
                               this->device());
    const auto a = filled<float, 3>(Layout<3>(g1, n, {0, -1, -1}), this->device());
    const auto g0 = gather(a, 0);
    if (w.rank() == 0) expect_formula<float, 3>(g0, n, "gather, chunked");
    expect_formula<float, 3>(allgather(a), n, "allgather, chunked");
  }
}

TYPED_TEST(Redistribute, RoundTripRestoresSource) {
  const auto w = tessera::testing::world();
  const auto g2 = ProcessGrid::balanced(w, 2);
  const auto from = Layout<3>::block(g2, {11, 8, 6}, {1, 0, 1});
  const auto to = Layout<3>(ProcessGrid(w), {11, 8, 6}, {-1, -1, 0});
  const auto a = filled<complex128, 3>(from, this->device());
  const auto back = redistribute(redistribute(a, to), from);
  EXPECT_TRUE(back.layout() == from);
  EXPECT_EQ(interior_on_host(back), interior_on_host(a));
}

template <class T>
void every_rank_of(Device d) {
  const auto w = tessera::testing::world();
  const ProcessGrid g1(w);
  const auto g2 = ProcessGrid::balanced(w, 2);
  check_pair<T, 1>(Layout<1>(g1, {23}, {0}), Layout<1>(g1, {23}, {0}, {skewed(23, w.size())}, {1}), d);
  check_pair<T, 1>(Layout<1>(g1, {23}, {0}), Layout<1>(g1, {23}, {-1}), d);
  check_pair<T, 2>(Layout<2>::block(g2, {7, 11}), Layout<2>(g1, {7, 11}, {-1, 0}, {1, 0}), d);
  check_pair<T, 4>(Layout<4>::block(g2, {3, 4, 5, 6}, {0, 1, 0, 0}), Layout<4>(g2, {3, 4, 5, 6}, {-1, -1, 1, 0}), d);
}

TYPED_TEST(Redistribute, EveryElementTypeAndRank) {
  const Device d = this->device();
  every_rank_of<bool>(d);
  every_rank_of<std::int32_t>(d);
  every_rank_of<std::int64_t>(d);
  every_rank_of<float>(d);
  every_rank_of<double>(d);
  every_rank_of<complex64>(d);
  every_rank_of<complex128>(d);
}

TYPED_TEST(Redistribute, ScatterThenGatherIsIdentity) {
  const Device d = this->device();
  const auto w = tessera::testing::world();
  const int root = w.size() - 1;
  const Index<3> n{17, 13, 5};
  std::vector<double> host(static_cast<std::size_t>(local::shape_size(n)));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = value<double>(static_cast<index_t>(i));
  const auto layout = Layout<3>::block(ProcessGrid::balanced(w, 2), n, {1, 1, 0});
  for (Device from : {Device::host(), d}) {  // root's array on the host or on the device
    const auto global = w.rank() == root ? local::from_host(host, n, from) : local::Array<double, 3>();
    const auto a = scatter(root, global, layout, d);
    EXPECT_TRUE(a.layout() == layout);
    const auto g0 = gather(a, 0);
    if (w.rank() == 0) expect_formula<double, 3>(g0, n, "gather to 0");
    else EXPECT_EQ(g0.size(), 0);
    const auto gr = gather(a, root);
    if (w.rank() == root) expect_formula<double, 3>(gr, n, "gather to root");
    expect_formula<double, 3>(allgather(a), n, "allgather");
  }
  // A strided (transposed) view on root scatters as its logical contents.
  const auto t = local::from_host(host, Index<3>{5, 13, 17}, d);
  const auto a = scatter(0, t.transpose(), Layout<3>(ProcessGrid(w), {17, 13, 5}, {0, -1, -1}), d);
  const auto all = local::to_host(allgather(a));
  for (index_t i = 0; i < 17; ++i)
    for (index_t k = 0; k < 5; ++k) EXPECT_EQ(all[(i * 13 + 3) * 5 + k], host[(k * 13 + 3) * 17 + i]);
}

TYPED_TEST(Redistribute, SliceMatchesFormula) {
  const Device d = this->device();
  const auto w = tessera::testing::world();
  const Index<3> n{17, 13, 5};
  for (const auto& l : {Layout<3>::block(ProcessGrid::balanced(w, 2), n, {1, 0, 1}),
                        Layout<3>(ProcessGrid(w), n, {-1, -1, 0})}) {
    const auto a = filled<std::int32_t, 3>(l, d);
    for (const Box<3>& r : {Box<3>{{2, 3, 1}, {15, 10, 4}}, Box<3>{{0, 0, 0}, n}, Box<3>{{16, 0, 4}, {17, 13, 5}},
                            Box<3>{{4, 5, 2}, {4, 9, 5}}}) {
      const auto s = slice(a, r);
      EXPECT_EQ(s.global_shape(), r.shape());
      EXPECT_EQ(s.layout().split(), l.split());
      EXPECT_EQ(s.layout().halo(), (Index<3>{}));
      EXPECT_TRUE(s.layout() == Layout<3>(l.grid(), r.shape(), l.split()));
      expect_formula<std::int32_t, 3>(allgather(s), r.shape(), "slice " + r.str() + " of " + l.str(), r.lo, n);
    }
  }
}

TYPED_TEST(Redistribute, ArrayOnItsOwnStream) {
  const Device d = this->device();
  const auto w = tessera::testing::world();
  const auto l = Layout<2>::block(ProcessGrid::balanced(w, 2), {19, 6}, {1, 0});
  const auto src = filled<float, 2>(l, d);
  Stream s(d);
  local::Array<float, 2> mem(l.padded_shape(), d);
  local::copy(mem, src.local());
  Stream::default_for(d).synchronize();
  const auto a = Array<float, 2>::adopt(mem.data(), l, d, s);
  const auto b = redistribute(a, Layout<2>(ProcessGrid(w), {19, 6}, {-1, 0}));
  expect_formula<float, 2>(allgather(b), {19, 6}, "adopted");
  expect_formula<float, 2>(allgather(redistribute(b, l)), {19, 6}, "back");
  s.synchronize();
}

TYPED_TEST(Redistribute, Errors) {
  const Device d = this->device();
  const auto w = tessera::testing::world();
  const ProcessGrid g(w);
  const auto a = filled<double, 2>(Layout<2>(g, {8, 4}, {0, -1}), d);
  EXPECT_THROW(redistribute(a, Layout<2>(g, {8, 5}, {-1, 0})), ShapeMismatch);
  EXPECT_THROW(gather(a, w.size()), InvalidArgument);
  EXPECT_THROW(gather(a, -1), InvalidArgument);
  EXPECT_THROW(slice(a, Box<2>{{0, 0}, {9, 4}}), InvalidArgument);
  EXPECT_THROW(slice(a, Box<2>{{3, 0}, {2, 4}}), InvalidArgument);
  EXPECT_THROW(scatter(0, local::zeros<double, 2>({8, 5}, d), a.layout(), d), ShapeMismatch);
  EXPECT_THROW(scatter(w.size(), local::zeros<double, 2>({8, 4}, d), a.layout(), d), InvalidArgument);
  if (w.size() > 1) {  // the same ranks in another order are another group
    const ProcessGrid reversed(w.split(0, w.size() - w.rank()));
    EXPECT_THROW(redistribute(a, Layout<2>(reversed, {8, 4}, {0, -1})), LayoutMismatch);
    const auto sub = w.split(w.rank() % 2, w.rank());
    EXPECT_THROW(redistribute(a, Layout<2>(ProcessGrid(sub), {8, 4}, {0, -1})), LayoutMismatch);
  }
  // The array is still usable after the failures.
  expect_formula<double, 2>(allgather(a), {8, 4}, "after errors");
}

}  // namespace
