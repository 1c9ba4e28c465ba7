// The exchange engine called directly, as a new distributed operation would: arbitrary boxes on
// both sides (a transpose, a gather to one rank, replicated sources, empty boxes), chunked by
// options and by a producer, checked element by element against the serially known values.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "device_test.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/local/basic_ops.hpp"

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
  // The source starts empty; the producer fills chunk s (rows of this rank's box along axis 0).
  auto src = tessera::local::Array<double, 2>(rows[me].shape(), d);
  tessera::local::fill(src, -1.0);
  const auto full = filled(rows[me], d);
  std::vector<int> produced;
  const td::ExchangeChunking ch{0, 3, [&](int s, int n, const tessera::Stream&) {
                                  const index_t e = rows[me].shape()[0];
                                  produced.push_back(s);
                                  tessera::local::copy(src.slice(0, e * s / n, e * (s + 1) / n),
                                                       full.slice(0, e * s / n, e * (s + 1) / n));
                                }};
  auto out = tessera::local::Array<double, 2>(cols[me].shape(), d);
  td::exchange<double, 2>(g, {rows, src}, {cols, out}, tessera::Stream::default_for(d), d, {.chunking = &ch});
  expect_box(out, cols[me], "produced rows -> columns");
  const int steps = static_cast<int>(std::max<index_t>(1, std::min<index_t>(3, rows[me].shape()[0])));
  ASSERT_EQ(static_cast<int>(produced.size()), steps);
  for (int s = 0; s < steps; ++s) EXPECT_EQ(produced[s], s);
}

// Every transport, chosen per call: the same transposes (repeated, and growing, so that windows
// are reused and regrown), and the name of what ran. Host buffers always travel through MPI.
TYPED_TEST(Exchange, EveryTransportByOption) {
  using tessera::Transport;
  const auto g = tessera::testing::world();
  const int p = g.size(), me = g.rank();
  const Device d = this->device();
  std::vector<Box<2>> rows(p), cols(p);
  for (int r = 0; r < p; ++r) rows[r] = cut(r, p, 0), cols[r] = cut(r, p, 1);
  for (Transport t : {Transport::automatic, Transport::nccl, Transport::nccl_window, Transport::ipc, Transport::mpi}) {
    SCOPED_TRACE(tessera::transport_name(t));
    const std::string ran = td::exchange_transport_name(g, d, t);
    if (d.is_host()) EXPECT_EQ(ran, "mpi");
    if (t == Transport::mpi) EXPECT_EQ(ran.rfind("mpi", 0), 0u) << ran;
    if (t == Transport::ipc && d.is_cuda() && p > 1) EXPECT_EQ(ran, "ipc");
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
