// The exchange engine called directly, as a new distributed operation would: arbitrary boxes on
// both sides (a transpose, a gather to one rank, replicated sources, empty boxes), chunked by
// options and by a producer, checked element by element against the serially known values.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "device_test.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/context.hpp"
#include "tessera/distributed/settings.hpp"

namespace {
namespace td = tessera::distributed;
using tessera::Device;
using tessera::local::index_t;
using td::Box;
using td::Index;

template <class K> class Exchange : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(Exchange, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

constexpr index_t N0 = 13, N1 = 7;

double value(index_t i, index_t j) { return 100.0 * i + j; }

// Box r of `p` boxes cutting axis `axis` of [N0, N1) unevenly (the last ranks may be empty).
Box<2> cut(int r, int p, int axis) {
  const index_t n = axis == 0 ? N0 : N1;
  Box<2> b;
  b.hi = {N0, N1};
  b.lo[axis] = std::min<index_t>(n, n * r * r / (p * p));
  b.hi[axis] = std::min<index_t>(n, n * (r + 1) * (r + 1) / (p * p));
  return b;
}

tessera::local::Array<double, 2> filled(const Box<2>& b, Device d) {
  const auto s = b.shape();
  std::vector<double> h(static_cast<std::size_t>(b.size()));
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j) h[i * s[1] + j] = value(b.lo[0] + i, b.lo[1] + j);
  auto a = tessera::local::Array<double, 2>(s, d);
  tessera::local::copy(a, tessera::local::Array<double, 2>::view(h.data(), s, Device::host()));
  return a;
}

void expect_box(const tessera::local::Array<double, 2>& got, const Box<2>& b, const char* what) {
  const auto h = got.to(Device::host());
  const auto s = b.shape();
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      ASSERT_EQ(h.data()[i * s[1] + j], value(b.lo[0] + i, b.lo[1] + j)) << what << " at " << b.lo[0] + i << "," << b.lo[1] + j;
}
}  // namespace

TYPED_TEST(Exchange, ArbitraryBoxesWithChunkOptions) {
  const auto g = tessera::testing::world();
  const int p = g.size(), me = g.rank();
  const Device d = this->device();
  std::vector<Box<2>> rows(p), cols(p), root(p);
  for (int r = 0; r < p; ++r) rows[r] = cut(r, p, 0), cols[r] = cut(r, p, 1);
  root[0].hi = {N0, N1};
  for (int chunks : {1, 2, 5}) {
    const td::ExchangeOptions o{.chunks = chunks, .chunk_mib = 0};
    auto out = tessera::local::Array<double, 2>(cols[me].shape(), d);
    td::exchange<double, 2>(g, {rows, filled(rows[me], d)}, {cols, out}, tessera::Stream::default_for(d), d, o);
    expect_box(out, cols[me], "rows -> columns");
    auto whole = tessera::local::Array<double, 2>(root[me].shape(), d);
    td::exchange<double, 2>(g, {cols, out}, {root, whole}, tessera::Stream::default_for(d), d, o);
    if (me == 0) expect_box(whole, root[0], "columns -> rank 0");
  }
  // Every rank holds the whole array (replicated source): each element still arrives once.
  std::vector<Box<2>> all(p, root[0]);
  auto out = tessera::local::Array<double, 2>(rows[me].shape(), d);
  td::exchange<double, 2>(g, {all, filled(root[0], d)}, {rows, out}, tessera::Stream::default_for(d), d);
  expect_box(out, rows[me], "replicated -> rows");
}

TYPED_TEST(Exchange, ProducerWritesEachChunkBeforeItTravels) {
  const auto g = tessera::testing::world();
  const int p = g.size(), me = g.rank();
  const Device d = this->device();
  std::vector<Box<2>> rows(p), cols(p);
  for (int r = 0; r < p; ++r) rows[r] = cut(r, p, 0), cols[r] = cut(r, p, 1);
  const tessera::distributed::Settings saved = tessera::distributed::settings();
  for (bool taper : {false, true}) {  // equal chunks, and half-size first and last ones
    SCOPED_TRACE(taper ? "tapered" : "equal");
    tessera::distributed::Settings s = saved;
    s.exchange_taper = taper;
    tessera::distributed::set_settings(s);
    // The source starts empty; the producer fills chunk s (rows of this rank's box along axis 0).
    auto src = tessera::local::Array<double, 2>(rows[me].shape(), d);
    tessera::local::fill(src, -1.0);
    const auto full = filled(rows[me], d);
    std::vector<int> produced;
    const td::ExchangeChunking ch{0, 4, [&](int s, int n, const tessera::Stream&) {
                                    const index_t e = rows[me].shape()[0];
                                    const index_t lo = td::chunk_begin(e, s, n), hi = td::chunk_begin(e, s + 1, n);
                                    produced.push_back(s);
                                    tessera::local::copy(src.slice(0, lo, hi), full.slice(0, lo, hi));
                                  }};
    auto out = tessera::local::Array<double, 2>(cols[me].shape(), d);
    td::exchange<double, 2>(g, {rows, src}, {cols, out}, tessera::Stream::default_for(d), d, {.chunking = &ch});
    expect_box(out, cols[me], "produced rows -> columns");
    const int steps = static_cast<int>(std::max<index_t>(1, std::min<index_t>(4, rows[me].shape()[0])));
    ASSERT_EQ(static_cast<int>(produced.size()), steps);
    for (int s = 0; s < steps; ++s) EXPECT_EQ(produced[s], s);
    // Staged chunks (no producer) are cut the same way: a transpose and back.
    const td::ExchangeOptions o{.chunks = 4, .chunk_mib = 0};
    auto back = tessera::local::Array<double, 2>(rows[me].shape(), d);
    td::exchange<double, 2>(g, {cols, out}, {rows, back}, tessera::Stream::default_for(d), d, o);
    expect_box(back, rows[me], "columns -> rows");
  }
  tessera::distributed::set_settings(saved);
}

// The consumer sees chunk s of its destination whole (every peer's part and its own) and may
// rewrite it: nothing lands there afterwards. With a producer too, both along one axis.
TYPED_TEST(Exchange, ConsumerGetsEachChunkOnceItHasLanded) {
  const auto g = tessera::testing::world();
  const int p = g.size(), me = g.rank();
  const Device d = this->device();
  std::vector<Box<2>> rows(p), cols(p), flipped(p);
  for (int r = 0; r < p; ++r) rows[r] = cut(r, p, 0), cols[r] = cut(r, p, 1), flipped[r] = cut(p - 1 - r, p, 0);
  for (bool with_producer : {false, true}) {
    SCOPED_TRACE(with_producer ? "producer and consumer" : "consumer");
    // Cut along axis 1, which every source box spans for each destination box: rows -> columns,
    // or (with a producer, whose chunks must span the destinations too) rows -> rows of the
    // ranks in reverse order.
    const auto& to = with_producer ? flipped : cols;
    const auto full = filled(rows[me], d);
    auto src = with_producer ? tessera::local::Array<double, 2>(rows[me].shape(), d) : full;
    if (with_producer) tessera::local::fill(src, -1.0);
    auto out = tessera::local::Array<double, 2>(to[me].shape(), d);
    auto seen = tessera::local::Array<double, 2>(to[me].shape(), d);
    tessera::local::fill(seen, -3.0);
    std::vector<int> consumed;
    td::ExchangeChunking ch{1, 3, {}, [&](int s, int n, const tessera::Stream&) {
                              const index_t e = to[me].shape()[1];
                              const index_t lo = td::chunk_begin(e, s, n), hi = td::chunk_begin(e, s + 1, n);
                              consumed.push_back(s);
                              tessera::local::copy(seen.slice(1, lo, hi), out.slice(1, lo, hi));
                              tessera::local::fill(out.slice(1, lo, hi), -2.0);
                            }};
    if (with_producer)
      ch.produce = [&](int s, int n, const tessera::Stream&) {
        const index_t e = rows[me].shape()[1];
        const index_t lo = td::chunk_begin(e, s, n), hi = td::chunk_begin(e, s + 1, n);
        tessera::local::copy(src.slice(1, lo, hi), full.slice(1, lo, hi));
      };
    td::exchange<double, 2>(g, {rows, src}, {to, out}, tessera::Stream::default_for(d), d, {.chunking = &ch});
    expect_box(seen, to[me], "what the consumer saw");
    const int steps = static_cast<int>(std::max<index_t>(1, std::min<index_t>(3, to[me].shape()[1])));
    ASSERT_EQ(static_cast<int>(consumed.size()), steps);
    for (int s = 0; s < steps; ++s) EXPECT_EQ(consumed[s], s);
    const auto h = out.to(Device::host());
    for (index_t i = 0; i < out.size(); ++i) ASSERT_EQ(h.data()[i], -2.0) << "element " << i << " landed after its consumer";
  }
}

TYPED_TEST(Exchange, PlansAreMadeOnceAndRunAgain) {
  const auto g = tessera::testing::world();
  const int p = g.size(), me = g.rank();
  const Device d = this->device();
  tessera::Context ctx;  // a fresh cache
  std::vector<Box<2>> rows(p), cols(p);
  for (int r = 0; r < p; ++r) rows[r] = cut(r, p, 0), cols[r] = cut(r, p, 1);
  const td::ExchangeOptions o{.chunks = 2, .chunk_mib = 0};
  const td::ExchangeSide<double, 2> src{rows, filled(rows[me], d)};
  const td::ExchangeSide<double, 2> dst{cols, tessera::local::Array<double, 2>(cols[me].shape(), d)};
  const auto plan = td::plan_exchange(g, src, dst, d, o);
  EXPECT_EQ(td::exchange_plan_cache_stats<2>().misses, 1u);
  // The plan: what this rank sends and receives, against the boxes' intersections.
  std::size_t sends = 0, recvs = 0;
  for (int q = 0; q < p; ++q) {
    if (q == me) continue;
    sends += !rows[me].intersect(cols[q]).empty();
    recvs += !rows[q].intersect(cols[me]).empty();
  }
  EXPECT_EQ(plan->sends.size(), sends);
  EXPECT_EQ(plan->recvs.size(), recvs);
  EXPECT_EQ(plan->self.has_value(), !rows[me].intersect(cols[me]).empty());
  for (const auto* side : {&plan->sends, &plan->recvs})
    for (const auto& piece : *side) EXPECT_LE(piece.parts.size(), 2u) << plan->str();
  EXPECT_NE(plan->str().find("exchange plan: " + std::to_string(sends) + " sends"), std::string::npos) << plan->str();
  // The same boxes and options: the same plan, counted as a hit; exchange() uses it too.
  EXPECT_EQ(td::plan_exchange(g, src, dst, d, o), plan);
  td::run(*plan, g, src, dst, tessera::Stream::default_for(d), d, o);
  expect_box(dst.data, cols[me], "run(plan)");
  tessera::local::fill(dst.data, 0.0);
  td::exchange(g, src, dst, tessera::Stream::default_for(d), d, o);
  expect_box(dst.data, cols[me], "exchange with a cached plan");
  auto st = td::exchange_plan_cache_stats<2>();
  EXPECT_EQ(st.misses, 1u) << st.str();
  EXPECT_EQ(st.hits, 2u) << st.str();
  // Other chunking is another plan.
  (void)td::plan_exchange(g, src, dst, d, td::ExchangeOptions{.chunks = 3, .chunk_mib = 0});
  st = td::exchange_plan_cache_stats<2>();
  EXPECT_EQ(st.misses, 2u) << st.str();
  EXPECT_EQ(st.entries, 2u) << st.str();
}

TEST(ExchangeChunks, EqualOrTaperedBounds) {
  const tessera::distributed::Settings saved = tessera::distributed::settings();
  tessera::distributed::Settings s = saved;
  s.exchange_taper = false;
  tessera::distributed::set_settings(s);
  for (int k = 0; k <= 4; ++k) EXPECT_EQ(td::chunk_begin(12, k, 4), 3 * k);
  s.exchange_taper = true;
  tessera::distributed::set_settings(s);
  const index_t tapered[] = {0, 2, 6, 10, 12};  // weights 1, 2, 2, 1
  for (int k = 0; k <= 4; ++k) EXPECT_EQ(td::chunk_begin(12, k, 4), tapered[k]);
  for (int k = 0; k <= 2; ++k) EXPECT_EQ(td::chunk_begin(12, k, 2), 6 * k);  // two chunks: equal
  for (int k = 0; k <= 4; ++k) EXPECT_EQ(td::chunk_begin(7, k, 4), 7 * k / 4);  // too short to taper
  for (int n : {3, 5, 8})
    for (index_t e : {6, 16, 17, 1000}) {
      index_t last = 0;
      for (int k = 1; k <= n; ++k) {
        const index_t b = td::chunk_begin(e, k, n);
        if (e >= 2 * n) EXPECT_GT(b, last) << e << " in " << n << ": chunk " << k - 1 << " empty";
        last = b;
      }
      EXPECT_EQ(last, e);
    }
  tessera::distributed::set_settings(saved);
}

// Every transport, chosen per call: the same transposes (repeated, and growing, so that windows
// are reused and regrown), and the name of what ran. Host buffers always travel through MPI.
TYPED_TEST(Exchange, EveryTransportByOption) {
  using tessera::distributed::Transport;
  const auto g = tessera::testing::world();
  const int p = g.size(), me = g.rank();
  const Device d = this->device();
  std::vector<Box<2>> rows(p), cols(p);
  for (int r = 0; r < p; ++r) rows[r] = cut(r, p, 0), cols[r] = cut(r, p, 1);
  for (Transport t : {Transport::automatic, Transport::nccl, Transport::nccl_window, Transport::ipc, Transport::mpi}) {
    SCOPED_TRACE(tessera::distributed::transport_name(t));
    const std::string ran = td::exchange_transport_name(g, d, t);
    if (d.is_host()) EXPECT_EQ(ran, "mpi");
    if (t == Transport::mpi) EXPECT_EQ(ran.rfind("mpi", 0), 0u) << ran;
    // Across nodes (TESSERA_EMULATE_NODES) ipc and nccl-window give way to the group's own
    // transport, which is NCCL where every rank has a GPU of its own on its node.
    const bool one_node = g.local_size() == p;
    const std::string own = d.is_cuda() ? g.device_transport_str(d) : "mpi";
    if (t == Transport::ipc && d.is_cuda() && p > 1) EXPECT_EQ(ran, one_node ? "ipc" : own);
    if (!one_node && d.is_cuda()) {
      if (t != Transport::mpi) EXPECT_EQ(ran, own);
      if (g.local_size() == 1) EXPECT_EQ(own, "nccl");
    }
    for (int round = 0; round < 2; ++round)
      for (int chunks : {1, 3}) {
        const td::ExchangeOptions o{.chunks = chunks, .chunk_mib = 0, .transport = t};
        auto out = tessera::local::Array<double, 2>(cols[me].shape(), d);
        td::exchange<double, 2>(g, {rows, filled(rows[me], d)}, {cols, out}, tessera::Stream::default_for(d), d, o);
        expect_box(out, cols[me], "rows -> columns");
        auto back = tessera::local::Array<double, 2>(rows[me].shape(), d);
        td::exchange<double, 2>(g, {cols, out}, {rows, back}, tessera::Stream::default_for(d), d, o);
        expect_box(back, rows[me], "columns -> rows");
      }
  }
}

// Pieces whose rows are long (64 KiB here): ipc sends them as they lie, by 2-D copies, without
// packing; every transport, equal and uneven boxes, chunked and not, both ways.
TYPED_TEST(Exchange, LongRowsTravelUnpacked) {
  using tessera::distributed::Transport;
  const auto g = tessera::testing::world();
  const int p = g.size(), me = g.rank();
  const Device d = this->device();
  constexpr index_t L = 8192;
  auto box = [&](int r, int axis) {  // axis 0 or 1 of [N0, N1, L] cut like cut()
    const auto b = cut(r, p, axis);
    Box<3> x;
    x.lo = {b.lo[0], b.lo[1], 0};
    x.hi = {b.hi[0], b.hi[1], L};
    return x;
  };
  auto fill3 = [&](const Box<3>& b) {
    const auto s = b.shape();
    std::vector<double> h(static_cast<std::size_t>(b.size()));
    for (index_t i = 0; i < static_cast<index_t>(h.size()); ++i) {
      const index_t z = i % s[2], y = i / s[2] % s[1], x = i / (s[1] * s[2]);
      h[i] = value(b.lo[0] + x, b.lo[1] + y) * L + z;
    }
    auto a = tessera::local::Array<double, 3>(s, d);
    tessera::local::copy(a, tessera::local::Array<double, 3>::view(h.data(), s, Device::host()));
    return a;
  };
  auto expect3 = [&](const tessera::local::Array<double, 3>& got, const Box<3>& b, const char* what) {
    const auto want = fill3(b).to(Device::host());
    const auto h = got.to(Device::host());
    for (index_t i = 0; i < b.size(); ++i)
      ASSERT_EQ(h.data()[i], want.data()[i]) << what << " at element " << i << " of " << td::Layout<3>::idx_str(b.lo);
  };
  std::vector<Box<3>> rows(p), cols(p);
  for (int r = 0; r < p; ++r) rows[r] = box(r, 0), cols[r] = box(r, 1);
  for (Transport t : {Transport::ipc, Transport::nccl_window, Transport::nccl})
    for (int chunks : {1, 3}) {
      SCOPED_TRACE(tessera::distributed::transport_name(t) + std::string(" chunks ") + std::to_string(chunks));
      const td::ExchangeOptions o{.chunks = chunks, .chunk_mib = 0, .transport = t};
      auto out = tessera::local::Array<double, 3>(cols[me].shape(), d);
      td::exchange<double, 3>(g, {rows, fill3(rows[me])}, {cols, out}, tessera::Stream::default_for(d), d, o);
      expect3(out, cols[me], "rows -> columns");
      auto back = tessera::local::Array<double, 3>(rows[me].shape(), d);
      td::exchange<double, 3>(g, {cols, out}, {rows, back}, tessera::Stream::default_for(d), d, o);
      expect3(back, rows[me], "columns -> rows");
    }
}
