// Every ProcessGroup collective, on host and device buffers, against a serial reference that each
// rank computes from values every rank can compute: val(rank, i) for reductions, ids for moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "comm_test_util.hpp"
#include "device_test.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/local/array.hpp"

namespace {
using namespace tessera;
using comm::Group;
using comm::ProcessGroup;
using comm::ReduceOp;
using namespace tessera::testing;  // DeviceVec, HostVec and the serial references
using Sizes = std::vector<std::size_t>;

std::string name(DType t, ReduceOp op) { return dtype_name(t) + " " + comm::reduce_op_name(op); }
Stream& stream(Device d) { return Stream::default_for(d); }

// ---- checks, each run on a group and a device (also on a group without NCCL) ----
template <class T>
void check_all_reduce(const ProcessGroup& g, Device dev, ReduceOp op) {
  const std::size_t n = 37;
  const auto want = reduced<T>(op, g.size(), n);
  DeviceVec<T> in(values<T>(g.rank(), n), dev), out(n, dev);
  g.all_reduce(in.data(), out.data(), n, dtype_v<T>, op, stream(dev));
  expect_equal<T>(out.download(), want, "all_reduce " + name(dtype_v<T>, op));
  expect_equal<T>(in.download(), values<T>(g.rank(), n), "all_reduce send buffer");
  g.all_reduce(in.data(), n, op, stream(dev));  // in place, typed
  expect_equal<T>(in.download(), want, "in-place all_reduce " + name(dtype_v<T>, op));
}
void check_all_reduces(const ProcessGroup& g, Device dev) {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}) {
    check_all_reduce<std::int32_t>(g, dev, op);
    check_all_reduce<std::int64_t>(g, dev, op);
    check_all_reduce<float>(g, dev, op);
    check_all_reduce<double>(g, dev, op);
    check_all_reduce<bool>(g, dev, op);  // or for sum/max, and for prod/min
  }
  check_all_reduce<complex64>(g, dev, ReduceOp::sum);
  check_all_reduce<complex128>(g, dev, ReduceOp::sum);
}

template <class T>
void check_reduce(const ProcessGroup& g, Device dev, ReduceOp op) {
  const std::size_t n = 19;
  for (int root : {0, g.size() - 1})
    for (bool in_place : {false, true}) {
      DeviceVec<T> in(values<T>(g.rank(), n), dev), out(n, dev);
      g.reduce(in.data(), in_place ? in.data() : out.data(), n, dtype_v<T>, op, root, stream(dev));
      if (g.rank() == root)
        expect_equal<T>((in_place ? in : out).download(), reduced<T>(op, g.size(), n),
                        "reduce to " + std::to_string(root) + (in_place ? " in place " : " ") + name(dtype_v<T>, op));
    }
}
void check_reduces(const ProcessGroup& g, Device dev) {
  check_reduce<std::int64_t>(g, dev, ReduceOp::sum);
  check_reduce<double>(g, dev, ReduceOp::max);
  check_reduce<complex64>(g, dev, ReduceOp::sum);
}

template <class T>
void check_broadcast(const ProcessGroup& g, Device dev) {
  const std::size_t n = 23;
  for (int root : {0, g.size() - 1}) {
    DeviceVec<T> src(ids<T>(g.rank(), n), dev), dst(n, dev);
    g.broadcast(src.data(), dst.data(), n, dtype_v<T>, root, stream(dev));
    expect_equal<T>(dst.download(), ids<T>(root, n), "broadcast from " + std::to_string(root));
    g.broadcast(src.data(), src.data(), n, dtype_v<T>, root, stream(dev));
    expect_equal<T>(src.download(), ids<T>(root, n), "in-place broadcast from " + std::to_string(root));
  }
}

template <class T>
void check_all_gathers(const ProcessGroup& g, Device dev) {
  const std::size_t n = 5, p = g.size(), me = g.rank();
  const auto want = all_ids<T>(g.size(), n);
  DeviceVec<T> in(ids<T>(g.rank(), n), dev), out(p * n, dev);
  g.all_gather(in.data(), out.data(), n, dtype_v<T>, stream(dev));
  expect_equal<T>(out.download(), want, "all_gather");
  HostVec<T> mine(p * n, sentinel<T>);  // in place: this rank's block already in recv
  std::copy_n(ids<T>(g.rank(), n).begin(), n, mine.begin() + me * n);
  DeviceVec<T> buf(mine, dev);
  g.all_gather(buf.data() + me * n, buf.data(), n, dtype_v<T>, stream(dev));
  expect_equal<T>(buf.download(), want, "in-place all_gather");

  // Uneven: rank r gives r+1 elements; then odd ranks give none. Gaps keep the sentinel.
  for (bool zeros : {false, true}) {
    Sizes counts(p);
    for (std::size_t r = 0; r < p; ++r) counts[r] = zeros && r % 2 ? 0 : r + 1;
    std::size_t total = 0;
    const Sizes displs = gapped(counts, total);
    HostVec<T> wantv(total, sentinel<T>);
    for (std::size_t r = 0; r < p; ++r)
      for (std::size_t i = 0; i < counts[r]; ++i) wantv[displs[r] + i] = id<T>(int(r), i);
    DeviceVec<T> vin(ids<T>(g.rank(), counts[me]), dev), vout(HostVec<T>(total, sentinel<T>), dev);
    g.all_gatherv(vin.data(), counts[me], vout.data(), counts, displs, dtype_v<T>, stream(dev));
    expect_equal<T>(vout.download(), wantv, zeros ? "all_gatherv with empty ranks" : "all_gatherv");
  }
}

template <class T>
void check_reduce_scatter(const ProcessGroup& g, Device dev, ReduceOp op) {
  const std::size_t n = 3, me = g.rank();
  const auto want = reduced<T>(op, g.size(), n, me * n);  // block `rank` of the reduced vector
  DeviceVec<T> in(values<T>(g.rank(), g.size() * n), dev), out(n, dev);
  g.reduce_scatter(in.data(), out.data(), n, dtype_v<T>, op, stream(dev));
  expect_equal<T>(out.download(), want, "reduce_scatter " + name(dtype_v<T>, op));
  g.reduce_scatter(in.data(), in.data() + me * n, n, dtype_v<T>, op, stream(dev));  // own block of send
  const auto block = in.download();
  expect_equal<T>(HostVec<T>(block.begin() + me * n, block.begin() + (me + 1) * n), want,
                  "in-place reduce_scatter " + name(dtype_v<T>, op));
}
void check_reduce_scatters(const ProcessGroup& g, Device dev) {
  check_reduce_scatter<std::int32_t>(g, dev, ReduceOp::sum);
  check_reduce_scatter<float>(g, dev, ReduceOp::min);
  check_reduce_scatter<complex128>(g, dev, ReduceOp::sum);
}

// Element j of the block rank `from` sends to rank `to`.
template <class T> T msg(int from, int to, std::size_t j) { return T(from * 10000 + to * 100 + j + 1); }

template <class T>
void check_all_to_alls(const ProcessGroup& g, Device dev) {
  const int p = g.size(), me = g.rank();
  const std::size_t c = 4;
  HostVec<T> send(p * c), want(p * c);
  for (int q = 0; q < p; ++q)
    for (std::size_t j = 0; j < c; ++j) send[q * c + j] = msg<T>(me, q, j), want[q * c + j] = msg<T>(q, me, j);
  DeviceVec<T> in(send, dev), out(p * c, dev);
  g.all_to_all(in.data(), out.data(), c, dtype_v<T>, stream(dev));
  expect_equal<T>(out.download(), want, "all_to_all");

  // Uneven: rank a sends (a + 2b) % 3 elements to rank b, zeros included; gapped layouts.
  const auto cnt = [](int a, int b) { return static_cast<std::size_t>((a + 2 * b) % 3); };
  Sizes sc(p), rc(p);
  for (int q = 0; q < p; ++q) sc[q] = cnt(me, q), rc[q] = cnt(q, me);
  std::size_t stotal = 0, rtotal = 0;
  const Sizes sd = gapped(sc, stotal), rd = gapped(rc, rtotal);
  HostVec<T> sendv(stotal, sentinel<T>), wantv(rtotal, sentinel<T>);
  for (int q = 0; q < p; ++q) {
    for (std::size_t j = 0; j < sc[q]; ++j) sendv[sd[q] + j] = msg<T>(me, q, j);
    for (std::size_t j = 0; j < rc[q]; ++j) wantv[rd[q] + j] = msg<T>(q, me, j);
  }
  DeviceVec<T> vin(sendv, dev), vout(HostVec<T>(rtotal, sentinel<T>), dev);
  g.all_to_allv(vin.data(), sc, sd, vout.data(), rc, rd, dtype_v<T>, stream(dev));
  expect_equal<T>(vout.download(), wantv, "all_to_allv");
}

template <class T>
void check_gather_scatter(const ProcessGroup& g, Device dev) {
  const std::size_t n = g.size() + 2, p = g.size(), me = g.rank();
  const auto all = all_ids<T>(g.size(), n);
  Sizes counts(p);
  for (std::size_t r = 0; r < p; ++r) counts[r] = r + 1;
  std::size_t total = 0;
  const Sizes displs = gapped(counts, total);
  HostVec<T> packed(total, sentinel<T>);  // rank r's first r+1 ids at displs[r]
  for (std::size_t r = 0; r < p; ++r) std::copy_n(all.begin() + r * n, r + 1, packed.begin() + displs[r]);
  for (int root : {0, g.size() - 1}) {
    const std::string at = " at root " + std::to_string(root);
    const bool is_root = g.rank() == root;
    DeviceVec<T> in(ids<T>(g.rank(), n), dev), out(HostVec<T>(p * n, sentinel<T>), dev);
    g.gather(in.data(), out.data(), n, dtype_v<T>, root, stream(dev));
    if (is_root) expect_equal<T>(out.download(), all, "gather" + at);
    HostVec<T> mine(p * n, sentinel<T>);  // in place on root: send is root's block of recv
    std::copy_n(all.begin() + me * n, n, mine.begin() + me * n);
    DeviceVec<T> buf(mine, dev);
    g.gather(is_root ? buf.data() + me * n : in.data(), buf.data(), n, dtype_v<T>, root, stream(dev));
    if (is_root) expect_equal<T>(buf.download(), all, "in-place gather" + at);
    DeviceVec<T> vout(HostVec<T>(total, sentinel<T>), dev);
    g.gatherv(in.data(), me + 1, vout.data(), counts, displs, dtype_v<T>, root, stream(dev));
    if (is_root) expect_equal<T>(vout.download(), packed, "gatherv" + at);

    // Scatter: only root's send holds the data.
    DeviceVec<T> src(is_root ? all : HostVec<T>(p * n, sentinel<T>), dev), dst(n, dev);
    g.scatter(src.data(), dst.data(), n, dtype_v<T>, root, stream(dev));
    expect_equal<T>(dst.download(), ids<T>(g.rank(), n), "scatter" + at);
    DeviceVec<T> vsrc(is_root ? packed : HostVec<T>(total, sentinel<T>), dev), vdst(me + 1, dev);
    g.scatterv(vsrc.data(), counts, displs, vdst.data(), me + 1, dtype_v<T>, root, stream(dev));
    expect_equal<T>(vdst.download(), ids<T>(g.rank(), me + 1), "scatterv" + at);
  }
}

// Ring: send to the next rank and receive from the previous one (the same rank on one rank).
template <class T>
void check_point_to_point(const ProcessGroup& g, Device dev) {
  const int p = g.size(), next = (g.rank() + 1) % p, prev = (g.rank() + p - 1) % p;
  const std::size_t n = 6;
  DeviceVec<T> out(ids<T>(g.rank(), n), dev), in(n, dev);
  {
    Group group;  // without a group, a ring of blocking sends would deadlock
    g.send(out.data(), n, dtype_v<T>, next, stream(dev));
    g.recv(in.data(), n, dtype_v<T>, prev, stream(dev));
    group.end();
  }
  expect_equal<T>(in.download(), ids<T>(prev, n), "send/recv ring");
  // sendrecv with a count that differs per rank: rank r sends n + r elements.
  DeviceVec<T> big(ids<T>(g.rank(), n + g.rank()), dev), got(n + prev, dev);
  g.sendrecv(big.data(), n + g.rank(), next, got.data(), n + prev, prev, dtype_v<T>, stream(dev));
  expect_equal<T>(got.download(), ids<T>(prev, n + prev), "sendrecv ring");
}

void check_data_movement(const ProcessGroup& g, Device dev) {
  check_broadcast<std::int32_t>(g, dev);
  check_broadcast<complex128>(g, dev);
  check_all_gathers<double>(g, dev);
  check_all_gathers<std::int32_t>(g, dev);
  check_all_to_alls<std::int64_t>(g, dev);
  check_all_to_alls<float>(g, dev);
  check_gather_scatter<double>(g, dev);
  check_gather_scatter<complex64>(g, dev);
  check_point_to_point<std::int64_t>(g, dev);
  check_point_to_point<double>(g, dev);
}

// Several collectives in one Group, some in nested Groups ended by their destructors.
void check_grouped(const ProcessGroup& g, Device dev) {
  const int p = g.size(), me = g.rank(), next = (me + 1) % p, prev = (me + p - 1) % p;
  const std::size_t n = 11;
  DeviceVec<std::int32_t> a(values<std::int32_t>(me, n), dev);
  DeviceVec<double> b(values<double>(me, n), dev), c(values<double>(me, n), dev), c_out(n, dev);
  HostVec<std::int64_t> send(p), want(p);
  for (int q = 0; q < p; ++q) send[q] = msg<std::int64_t>(me, q, 0), want[q] = msg<std::int64_t>(q, me, 0);
  DeviceVec<std::int64_t> t_in(send, dev), t_out(p, dev), ring_out(ids<std::int64_t>(me, n), dev), ring_in(n, dev);
  {
    Group outer;
    g.all_reduce(a.data(), n, ReduceOp::sum, stream(dev));
    g.all_reduce(b.data(), n, ReduceOp::max, stream(dev));
    g.all_to_all(t_in.data(), t_out.data(), 1, DType::int64, stream(dev));
    {
      Group inner;
      g.all_reduce(c.data(), c_out.data(), n, ReduceOp::min, stream(dev));
      { Group innermost; g.send(ring_out.data(), n, DType::int64, next, stream(dev)); }  // must not launch yet:
    }
    g.recv(ring_in.data(), n, DType::int64, prev, stream(dev));  // the matching recv comes after it
    outer.end();
  }
  expect_equal<std::int32_t>(a.download(), reduced<std::int32_t>(ReduceOp::sum, p, n), "grouped all_reduce sum");
  expect_equal<double>(b.download(), reduced<double>(ReduceOp::max, p, n), "grouped all_reduce max");
  expect_equal<double>(c_out.download(), reduced<double>(ReduceOp::min, p, n), "nested all_reduce min");
  expect_equal<std::int64_t>(t_out.download(), want, "grouped all_to_all");
  expect_equal<std::int64_t>(ring_in.download(), ids<std::int64_t>(prev, n), "nested send/recv ring");
}

// Count 0 everywhere: nothing moves, nothing throws, buffers keep their contents.
void check_zero_counts(const ProcessGroup& g, Device dev) {
  const int p = g.size(), next = (g.rank() + 1) % p, prev = (g.rank() + p - 1) % p;
  DeviceVec<float> a(HostVec<float>{1.5f}, dev), b(HostVec<float>{2.5f}, dev);
  auto& s = stream(dev);
  g.all_reduce(a.data(), b.data(), 0, DType::float32, ReduceOp::sum, s);
  g.broadcast(a.data(), b.data(), 0, DType::float32, 0, s);
  g.all_gather(a.data(), b.data(), 0, DType::float32, s);
  g.reduce_scatter(a.data(), b.data(), 0, DType::float32, ReduceOp::sum, s);
  g.all_to_all(a.data(), b.data(), 0, DType::float32, s);
  g.sendrecv(a.data(), 0, next, b.data(), 0, prev, DType::float32, s);
  { Group group; g.send(a.data(), 0, DType::float32, next, s); g.recv(b.data(), 0, DType::float32, prev, s); }
  EXPECT_EQ(b.download(), HostVec<float>{2.5f});
  EXPECT_EQ(a.download(), HostVec<float>{1.5f});
}

// Big enough to be split into chunks; values that round, so compared with a tolerance.
void check_large_all_reduce(const ProcessGroup& g, Device dev) {
  const std::size_t n = 3'000'000;
  const auto x = [](int r, std::size_t i) { return 1.0f / float(1 + (i + 7 * r) % 101); };
  HostVec<float> mine(n);
  for (std::size_t i = 0; i < n; ++i) mine[i] = x(g.rank(), i);
  DeviceVec<float> buf(mine, dev);
  g.all_reduce(buf.data(), n, ReduceOp::sum, stream(dev));
  const auto got = buf.download();
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double want = 0;
    for (int r = 0; r < g.size(); ++r) want += x(r, i);
    if (std::abs(got[i] - want) > 4e-7 * g.size() * want && bad++ == 0) first = i;
  }
  EXPECT_EQ(bad, 0u) << "large all_reduce: first wrong at " << first << ": " << got[first];
}

using Check = void (*)(const ProcessGroup&, Device);
const Check kChecks[] = {check_all_reduces, check_reduces, check_reduce_scatters, check_data_movement,
                         check_grouped, check_zero_counts, check_large_all_reduce};

template <class K> class Collectives : public DeviceTest<K> {};
TYPED_TEST_SUITE(Collectives, DeviceKinds, DeviceKindNames);
}  // namespace

TYPED_TEST(Collectives, AllReduceEveryTypeAndOp) { check_all_reduces(ProcessGroup::world(), this->device()); }
TYPED_TEST(Collectives, ReduceToFirstAndLastRank) { check_reduces(ProcessGroup::world(), this->device()); }
TYPED_TEST(Collectives, ReduceScatter) { check_reduce_scatters(ProcessGroup::world(), this->device()); }
TYPED_TEST(Collectives, BroadcastGatherScatterAllToAllSendRecv) {
  check_data_movement(ProcessGroup::world(), this->device());
}
TYPED_TEST(Collectives, GroupedAndNestedCalls) { check_grouped(ProcessGroup::world(), this->device()); }
TYPED_TEST(Collectives, ZeroCounts) { check_zero_counts(ProcessGroup::world(), this->device()); }
TYPED_TEST(Collectives, LargeAllReduce) { check_large_all_reduce(ProcessGroup::world(), this->device()); }

TYPED_TEST(Collectives, DeviceBuffersWithoutNccl) {
  const Device dev = this->device();
  if (dev.is_host()) GTEST_SKIP() << "host buffers never use NCCL: the other host tests cover this";
  ScopedEnv env("TESSERA_NCCL", "0");
  ProcessGroup g(MPI_COMM_WORLD);  // fresh: the transport is chosen on a group's first device call
  for (Check check : kChecks) check(g, dev);
  EXPECT_EQ(g.device_transport(dev), comm::Transport::mpi) << g.device_transport_str(dev);
}

TYPED_TEST(Collectives, LocalArrayOverloads) {
  const Device dev = this->device();
  const auto g = ProcessGroup::world();
  const int p = g.size(), me = g.rank(), next = (me + 1) % p, prev = (me + p - 1) % p;
  auto a = local::from_host(values<double>(me, 12), local::Shape<2>{3, 4}, dev);
  g.all_reduce(a, ReduceOp::sum);
  expect_equal<double>(local::to_host(a), reduced<double>(ReduceOp::sum, p, 12), "Array all_reduce");
  auto m = local::from_host(values<double>(me, 12), local::Shape<2>{3, 4}, dev);
  g.all_reduce(m, ReduceOp::max, stream(dev));
  expect_equal<double>(local::to_host(m), reduced<double>(ReduceOp::max, p, 12), "Array all_reduce on a stream");
  auto b = local::from_host(ids<std::int64_t>(me, 8), local::Shape<1>{8}, dev);
  g.broadcast(b, p - 1);
  expect_equal<std::int64_t>(local::to_host(b), ids<std::int64_t>(p - 1, 8), "Array broadcast");

  auto mine = local::from_host(ids<std::int64_t>(me, 3), local::Shape<1>{3}, dev);
  local::Array<std::int64_t, 2> all({p, 3}, dev);
  g.all_gather(mine, all);
  expect_equal<std::int64_t>(local::to_host(all), all_ids<std::int64_t>(p, 3), "Array all_gather");
  auto swapped = local::zeros<std::int64_t, 2>({p, 3}, dev);
  g.all_to_all(all, swapped);  // block q of `all` is rank q's ids: every rank gets its own back p times
  HostVec<std::int64_t> own;
  for (int r = 0; r < p; ++r) for (auto x : ids<std::int64_t>(me, 3)) own.push_back(x);
  expect_equal<std::int64_t>(local::to_host(swapped), own, "Array all_to_all");
  auto rs_in = local::from_host(values<double>(me, 2 * p), local::Shape<2>{p, 2}, dev);
  local::Array<double, 1> rs_out({2}, dev);
  g.reduce_scatter(rs_in, rs_out, ReduceOp::sum);
  expect_equal<double>(local::to_host(rs_out), reduced<double>(ReduceOp::sum, p, 2, 2 * me), "Array reduce_scatter");
  local::Array<std::int64_t, 1> from_prev({3}, dev);
  { Group group; g.send(mine, next); g.recv(from_prev, prev); }
  expect_equal<std::int64_t>(local::to_host(from_prev), ids<std::int64_t>(prev, 3), "Array send/recv ring");
}

// Every rank passes the same bad arguments, so every rank must throw before communicating; if
// some rank communicates anyway, the short deadline turns its wait into a failure, not a hang.
TYPED_TEST(Collectives, InvalidArgumentsThrow) {
  const Device dev = this->device();
  auto g = ProcessGroup::world();
  g.set_timeout(10.0);
  const int p = g.size();
  auto& s = stream(dev);
  DeviceVec<complex64> c(values<complex64>(g.rank(), 4), dev);
  DeviceVec<double> d(HostVec<double>(4 * p + 4, 1.0), dev), e(4 * p + 4, dev);
  EXPECT_THROW(g.all_reduce(c.data(), c.data(), 4, DType::complex64, ReduceOp::min, s), InvalidArgument);
  EXPECT_THROW(g.all_reduce(c.data(), c.data(), 4, DType::complex64, ReduceOp::prod, s), InvalidArgument);
  DeviceVec<complex128> z(HostVec<complex128>(p, 1.0), dev), z_out(1, dev);
  EXPECT_THROW(g.reduce_scatter(z.data(), z_out.data(), 1, DType::complex128, ReduceOp::max, s), InvalidArgument);
  for (int root : {-1, p}) {
    EXPECT_THROW(g.reduce(d.data(), e.data(), 4, DType::float64, ReduceOp::sum, root, s), InvalidArgument);
    EXPECT_THROW(g.broadcast(d.data(), e.data(), 4, DType::float64, root, s), InvalidArgument);
    EXPECT_THROW(g.gather(d.data(), e.data(), 4, DType::float64, root, s), InvalidArgument);
    EXPECT_THROW(g.scatter(d.data(), e.data(), 4, DType::float64, root, s), InvalidArgument);
  }
  const Sizes ok(p, 1), longer(p + 1, 1), shorter(p - 1, 1);
  EXPECT_THROW(g.all_gatherv(d.data(), 1, e.data(), longer, ok, DType::float64, s), InvalidArgument);
  EXPECT_THROW(g.all_gatherv(d.data(), 1, e.data(), ok, shorter, DType::float64, s), InvalidArgument);
  EXPECT_THROW(g.all_to_allv(d.data(), shorter, ok, e.data(), ok, ok, DType::float64, s), InvalidArgument);
  EXPECT_THROW(g.all_to_allv(d.data(), ok, ok, e.data(), ok, longer, DType::float64, s), InvalidArgument);
  EXPECT_THROW(g.gatherv(d.data(), 1, e.data(), longer, ok, DType::float64, 0, s), InvalidArgument);
  EXPECT_THROW(g.scatterv(d.data(), ok, shorter, e.data(), 1, DType::float64, 0, s), InvalidArgument);

  auto whole = local::zeros<double, 2>({4, 6}, dev);
  auto strided = whole.slice(1, 0, 6, 2);  // every other column: not contiguous
  auto transposed = whole.transpose();
  local::Array<double, 2> recv({4 * p, 6}, dev);
  EXPECT_THROW(g.all_reduce(strided, ReduceOp::sum), InvalidArgument);
  EXPECT_THROW(g.broadcast(transposed, 0), InvalidArgument);
  EXPECT_THROW(g.all_gather(transposed, recv), InvalidArgument);
}
