// Bad arguments: each case is one TEST that expects the specific typed exception, on every rank
// (nothing hangs or crashes), and that the message names the offending values. Host arrays; the
// mismatched-device cases use views labelled cuda:0, which no operation may touch.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <typeinfo>
#include <vector>

#include "tessera/comm/error.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/elementwise.hpp"
#include "tessera/fft/fft.hpp"
#include "tessera/io/npy.hpp"
#include "tessera/io/zarr.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using comm::ProcessGroup;
using local::index_t;
using cplx = std::complex<double>;
const Device host = Device::host();

// Runs f; expects E (or a subclass) whose what() contains every part; any other outcome fails.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected " << typeid(E).name();
  } catch (const E& e) {
    const std::string m = e.what();
    for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
  }
}
#define EXPECT_ERROR(E, stmt, ...) expect_error<E>([&] { (void)(stmt); }, {__VA_ARGS__})

ProcessGroup world() { return ProcessGroup::world(); }
ProcessGrid grid1() { return ProcessGrid(world()); }
std::string np_str(int extra = 0) { return std::to_string(world().size() + extra); }
double buffer[64];  // memory behind views that must never be read
template <int R> local::Array<double, R> cuda_view(local::Shape<R> s) {
  return local::Array<double, R>::view(buffer, s, Device::cuda(0));
}
// A path under a directory that does not exist (the same on every rank).
std::string missing_dir() { return "/tmp/tessera_no_such_dir_8c1f/x"; }

// ---------------- local arrays ----------------
TEST(BadArgs, LocalNegativeExtent) {
  EXPECT_ERROR(InvalidArgument, (local::Array<double, 2>({3, -2}, host)), "-2", "[3,-2]");
}
TEST(BadArgs, LocalViewNegativeExtent) {
  EXPECT_ERROR(InvalidArgument, (local::Array<double, 1>::view(buffer, {-1}, host)), "-1");
}
TEST(BadArgs, LocalByteCountOverflow) {
  EXPECT_ERROR(OutOfMemory, (local::Array<double, 2>({index_t(1) << 62, 8}, host)), "4611686018427387904");
}
TEST(BadArgs, LocalSliceZeroStep) {
  auto a = local::zeros<double, 1>({10}, host);
  EXPECT_ERROR(InvalidArgument, (a.slice(0, 0, 4, 0)), "slice");
}
TEST(BadArgs, LocalSliceStopPastEnd) {
  auto a = local::zeros<double, 1>({10}, host);
  EXPECT_ERROR(InvalidArgument, (a.slice(0, 2, 11)), "11");
}
TEST(BadArgs, LocalSliceAxisOutOfRange) {
  auto a = local::zeros<double, 2>({2, 2}, host);
  EXPECT_ERROR(InvalidArgument, (a.slice(3, 0, 1)), "axis 3");
}
TEST(BadArgs, LocalReshapeWrongSize) {
  auto a = local::zeros<double, 1>({10}, host);
  EXPECT_ERROR(ShapeMismatch, (a.reshape<2>({3, 4})), "[10]", "[3,4]");
}
TEST(BadArgs, LocalPermuteNotAPermutation) {
  auto a = local::zeros<double, 2>({2, 3}, host);
  EXPECT_ERROR(InvalidArgument, (a.permute({0, 0})), "permutation");
}
TEST(BadArgs, LocalCopyShapeMismatch) {
  auto a = local::zeros<double, 1>({3}, host);
  auto b = local::zeros<double, 1>({4}, host);
  EXPECT_ERROR(ShapeMismatch, (local::copy(a, b), 0), "[3]", "[4]");
}
TEST(BadArgs, LocalAddShapeMismatch) {
  auto a = local::zeros<double, 1>({3}, host);
  auto b = local::zeros<double, 1>({4}, host);
  EXPECT_ERROR(ShapeMismatch, (local::add(a, a, b), 0), "3", "4");
}
TEST(BadArgs, LocalAddDeviceMismatch) {
  auto a = local::zeros<double, 1>({3}, host);
  EXPECT_ERROR(DeviceMismatch, (local::add(a, a, cuda_view<1>({3})), 0), "cuda:0", "host");
}
TEST(BadArgs, LocalFromHostWrongCount) {
  EXPECT_ERROR(ShapeMismatch, (local::from_host(std::vector<double>(5), local::Shape<2>{2, 3}, host)), "5", "[2,3]");
}
TEST(BadArgs, LocalLinspaceNegativeCount) {
  EXPECT_ERROR(InvalidArgument, (local::linspace<double>(0, 1, -3, host)), "-3");
}
TEST(BadArgs, LocalArangeZeroStep) { EXPECT_ERROR(InvalidArgument, (local::arange<double>(0, 1, 0, host)), "step"); }
TEST(BadArgs, DeviceParseGarbage) { EXPECT_ERROR(InvalidArgument, Device::parse("gpu:1"), "gpu:1"); }

// ---------------- process groups ----------------
TEST(BadArgs, BroadcastRootOutsideGroup) {
  auto a = local::zeros<double, 1>({4}, host);
  EXPECT_ERROR(InvalidArgument, (world().broadcast(a, world().size()), 0), "root " + np_str());
}
TEST(BadArgs, SendPeerNegative) {
  auto a = local::zeros<double, 1>({4}, host);
  EXPECT_ERROR(InvalidArgument, (world().send(a, -1), 0), "peer -1");
}
TEST(BadArgs, CollectiveOnNonContiguousView) {
  auto a = local::zeros<double, 2>({4, 4}, host);
  auto v = a.slice(1, 0, 2);
  EXPECT_ERROR(InvalidArgument, (world().all_reduce(v, comm::ReduceOp::sum), 0), "non-contiguous");
}
TEST(BadArgs, ComplexMaxReduction) {
  auto a = local::zeros<cplx, 1>({2}, host);
  EXPECT_ERROR(InvalidArgument, (world().all_reduce(a, comm::ReduceOp::max), 0), "complex128", "sum");
}
TEST(BadArgs, AllGatherDeviceMismatch) {
  auto a = local::zeros<double, 1>({1}, host);
  auto r = cuda_view<1>({world().size()});
  EXPECT_ERROR(DeviceMismatch, (world().all_gather(a, r), 0), "cuda:0", "host");
}
TEST(BadArgs, TimeoutNotPositive) {
  auto g = world();
  EXPECT_ERROR(InvalidArgument, (g.set_timeout(-2), 0), "-2");
}
TEST(BadArgs, SplitNegativeColor) { EXPECT_ERROR(InvalidArgument, (world().split(-1, 0)), "-1"); }

// ---------------- grids and layouts ----------------
TEST(BadArgs, GridDimsDoNotMatchRanks) {
  EXPECT_ERROR(InvalidArgument, (ProcessGrid(world(), {world().size() + 1})), np_str(1));
}
TEST(BadArgs, GridNegativeDim) { EXPECT_ERROR(InvalidArgument, (ProcessGrid(world(), {-1})), "negative"); }
TEST(BadArgs, GridPeriodicCountMismatch) {
  EXPECT_ERROR(InvalidArgument, (ProcessGrid(world(), {world().size()}, {true, false})), "2 periods");
}
TEST(BadArgs, GridZeroAxes) { EXPECT_ERROR(InvalidArgument, (ProcessGrid::balanced(world(), 0)), "ndims"); }
TEST(BadArgs, GridCoordsOfRankOutside) { EXPECT_ERROR(InvalidArgument, grid1().coords(world().size()), np_str()); }
TEST(BadArgs, GridAxisGroupOutOfRange) { EXPECT_ERROR(InvalidArgument, grid1().axis_group(5), "axis 5"); }
TEST(BadArgs, LayoutNegativeExtent) { EXPECT_ERROR(InvalidArgument, (Layout<2>::block(grid1(), {4, -1})), "[4,-1]"); }
TEST(BadArgs, LayoutNegativeHalo) { EXPECT_ERROR(InvalidArgument, (Layout<2>::block(grid1(), {4, 4}, {0, -1})), "[0,-1]"); }
TEST(BadArgs, LayoutSplitOverMissingGridAxis) {
  EXPECT_ERROR(InvalidArgument, (Layout<2>(grid1(), {4, 4}, {1, -1})), "grid axis 1");
}
TEST(BadArgs, LayoutSplitBelowMinusOne) { EXPECT_ERROR(InvalidArgument, (Layout<2>(grid1(), {4, 4}, {-2, 0})), "-2"); }
TEST(BadArgs, LayoutTwoArrayAxesOnOneGridAxis) {
  EXPECT_ERROR(InvalidArgument, (Layout<2>(grid1(), {4, 4}, {0, 0})), "grid axis 0");
}
TEST(BadArgs, LayoutOffsetsWrongCount) {
  std::vector<index_t> o(world().size() + 2, 0);  // one too many
  o.back() = 10;
  EXPECT_ERROR(InvalidArgument, (Layout<1>(grid1(), {10}, {0}, Layout<1>::Offsets{o}, {0})), "axis 0", np_str(1) + " non-decreasing");
}
TEST(BadArgs, LayoutOffsetsDecreasing) {
  std::vector<index_t> o(world().size() + 1, 0);
  o.back() = 10;
  o[1] = 11;  // then back down to 10 or less
  EXPECT_ERROR(InvalidArgument, (Layout<1>(grid1(), {10}, {0}, Layout<1>::Offsets{o}, {0})), "non-decreasing");
}
TEST(BadArgs, LayoutOffsetsNotCoveringShape) {
  std::vector<index_t> o(world().size() + 1, 0);
  o.back() = 9;
  EXPECT_ERROR(InvalidArgument, (Layout<1>(grid1(), {10}, {0}, Layout<1>::Offsets{o}, {0})), "to 10");
}
TEST(BadArgs, LayoutHaloWiderThanBlock) {
  EXPECT_ERROR(InvalidArgument, (Layout<1>::block(grid1(), {4 * world().size()}, {5})), "halo 5", "4 elements");
}
TEST(BadArgs, GridLargerThanArrayForHalo) {
  // One element per rank cannot carry halos of 2 (empty blocks are fine, tiny ones are not).
  EXPECT_ERROR(InvalidArgument, (Layout<1>::block(grid1(), {world().size()}, {2})), "halo 2", "1 elements");
}
TEST(BadArgs, WithHaloTooWide) {
  const auto l = Layout<1>::block(grid1(), {3 * world().size()});
  EXPECT_ERROR(InvalidArgument, l.with_halo({4}), "halo 4");
}
TEST(BadArgs, OwnerOfIndexOutsideShape) {
  const auto l = Layout<1>::block(grid1(), {10});
  EXPECT_ERROR(InvalidArgument, l.owner({10}), "[10]");
}
TEST(BadArgs, WrapShardOfWrongShape) {
  const auto l = Layout<1>::block(grid1(), {10 * world().size()});
  EXPECT_ERROR(ShapeMismatch, (Array<double, 1>::wrap(l, local::zeros<double, 1>({11}, host))), "[11]", "[10]");
}
TEST(BadArgs, AdoptWithStreamOfOtherDevice) {
  const auto l = Layout<1>::block(grid1(), {4 * world().size()});
  EXPECT_ERROR(DeviceMismatch, (Array<double, 1>::adopt(buffer, l, Device::cuda(0), Stream::default_for(host))), "cuda:0",
               "host");
}

// ---------------- distributed operations ----------------
Array<double, 2> arr(Index<2> shape) { return arange<double, 2>(Layout<2>::block(grid1(), shape), host); }

TEST(BadArgs, RedistributeToOtherGlobalShape) {
  auto a = arr({8, 8});
  EXPECT_ERROR(ShapeMismatch, (redistribute(a, Layout<2>::block(grid1(), {8, 9}))), "[8,8]", "[8,9]");
}
TEST(BadArgs, RedistributeToOtherProcessGroup) {
  if (world().size() < 2) GTEST_SKIP() << "another order of the ranks needs 2 of them";
  auto a = arr({8, 8});
  const ProcessGrid reversed(world().split(0, world().size() - 1 - world().rank()));
  EXPECT_ERROR(LayoutMismatch, (redistribute(a, Layout<2>::block(reversed, {8, 8}))), "different process groups");
}
TEST(BadArgs, GatherRootTooLarge) { EXPECT_ERROR(InvalidArgument, (gather(arr({4, 4}), world().size())), "root " + np_str()); }
TEST(BadArgs, GatherRootNegative) { EXPECT_ERROR(InvalidArgument, (gather(arr({4, 4}), -1)), "root -1"); }
TEST(BadArgs, ScatterRootTooLarge) {
  auto g = local::zeros<double, 1>({6}, host);
  EXPECT_ERROR(InvalidArgument, (scatter(world().size(), g, Layout<1>::block(grid1(), {6}), host)), "root " + np_str());
}
TEST(BadArgs, ScatterWrongGlobalShape) {
  auto g = local::zeros<double, 1>({5}, host);
  EXPECT_ERROR(ShapeMismatch, (scatter(0, g, Layout<1>::block(grid1(), {6}), host)), "[6]");
}
TEST(BadArgs, SliceBeyondShape) { EXPECT_ERROR(InvalidArgument, (slice(arr({4, 4}), Box<2>{{0, 0}, {5, 4}})), "[0:5, 0:4]", "[4,4]"); }
TEST(BadArgs, SliceReversedBox) { EXPECT_ERROR(InvalidArgument, (slice(arr({4, 4}), Box<2>{{3, 0}, {1, 4}})), "[3:1, 0:4]"); }
TEST(BadArgs, SliceNegativeStart) { EXPECT_ERROR(InvalidArgument, (slice(arr({4, 4}), Box<2>{{-1, 0}, {2, 4}})), "[-1:2, 0:4]"); }
TEST(BadArgs, ReduceAlongAxisOutOfRange) { EXPECT_ERROR(InvalidArgument, (sum(arr({4, 4}), 2)), "axis 2"); }
TEST(BadArgs, ReduceAlongNegativeAxis) { EXPECT_ERROR(InvalidArgument, (max(arr({4, 4}), -1)), "axis -1"); }
TEST(BadArgs, MinOfEmptyArray) { EXPECT_ERROR(InvalidArgument, (min(arr({0, 4}))), "min", "zero elements"); }
TEST(BadArgs, ArgmaxOfEmptyArray) { EXPECT_ERROR(InvalidArgument, (argmax(arr({4, 0}))), "argmax", "zero elements"); }
TEST(BadArgs, MeanAlongEmptyAxis) { EXPECT_ERROR(InvalidArgument, (mean(arr({0, 3}), 0)), "mean"); }
TEST(BadArgs, DotOfDifferentBlocks) {
  EXPECT_ERROR(LayoutMismatch, (dot(arr({8, 8}), arr({8, 6}))), "dot", "[8,8]", "[8,6]");
}
TEST(BadArgs, ElementwiseOfDifferentShapes) {
  auto a = arr({8, 8});
  auto b = arr({8, 7});
  Array<double, 2> c(a.layout(), host);
  EXPECT_ERROR(LayoutMismatch, (c = a + b, 0), "[8,8]", "[8,7]");
}
TEST(BadArgs, RandomUniformEmptyRange) {
  EXPECT_ERROR(InvalidArgument, (random_uniform<double, 1>(Layout<1>::block(grid1(), {8}), host, 1, 2.0, 2.0)), "low (2");
}
TEST(BadArgs, RandomNormalNegativeStddev) {
  EXPECT_ERROR(InvalidArgument, (random_normal<double, 1>(Layout<1>::block(grid1(), {8}), host, 1, 0.0, -1.0)), "stddev (-1");
}
TEST(BadArgs, RandomIntegersEmptyRange) {
  EXPECT_ERROR(InvalidArgument, (random_integers<std::int64_t, 1>(Layout<1>::block(grid1(), {8}), host, 1, 5, 3)), "low (5");
}

// ---------------- FFT ----------------
TEST(BadArgs, FftEmptyAxis) {
  EXPECT_ERROR(InvalidArgument, (fft::Plan<cplx, 2>(Layout<2>::block(grid1(), {0, 8}), host)), "empty axis", "[0,8]");
}
TEST(BadArgs, FftPencilOf2dArray) {
  fft::Options o;
  o.decomposition = fft::Decomposition::pencil;
  EXPECT_ERROR(InvalidArgument, (fft::Plan<cplx, 2>(Layout<2>::block(grid1(), {8, 8}), host, o)), "pencil", "2-D");
}
TEST(BadArgs, Fft1dSpectralOnSeveralRanks) {
  if (world().size() < 2) GTEST_SKIP() << "a 1-D spectral multiply on one rank is legal";
  fft::Plan<cplx, 1> p(Layout<1>::block(grid1(), {16}), host);
  auto x = zeros<cplx, 1>(Layout<1>::block(grid1(), {16}), host);
  EXPECT_ERROR(InvalidArgument, p.forward(x, fft::Norm::backward, fft::Spectral{fft::Spectral::Kind::laplacian}),
               "Spectral multiply", np_str() + " ranks", "four-step 4 x 4");
}
TEST(BadArgs, FftInputOfWrongShape) {
  fft::Plan<cplx, 2> p(Layout<2>::block(grid1(), {8, 8}), host);
  auto x = zeros<cplx, 2>(Layout<2>::block(grid1(), {8, 4}), host);
  EXPECT_ERROR(ShapeMismatch, p.forward(x), "[8,4]", "[8,8]");
}
TEST(BadArgs, FftBackwardOfWrongShape) {
  fft::Plan<double, 2> p(Layout<2>::block(grid1(), {8, 8}), host);  // R2C: spectrum is [8,5]
  auto y = zeros<cplx, 2>(Layout<2>::block(grid1(), {8, 8}), host);
  EXPECT_ERROR(ShapeMismatch, p.backward(y), "[8,8]", "[8,5]");
}
TEST(BadArgs, FftfreqAxisOutOfRange) {
  EXPECT_ERROR(InvalidArgument, (fft::fftfreq<double, 2>(Layout<2>::block(grid1(), {8, 8}), 2, host)), "axis 2");
}
TEST(BadArgs, FftfreqSpacingNotPositive) {
  EXPECT_ERROR(InvalidArgument, (fft::fftfreq<double, 2>(Layout<2>::block(grid1(), {8, 8}), 0, host, 0.0)), "spacing");
}

// ---------------- files ----------------
TEST(BadArgs, SaveNpyIntoMissingDirectory) {
  const std::string p = missing_dir() + ".npy";
  EXPECT_ERROR(io::IoError, (io::save_npy(p, arr({4, 4})), 0), p);
}
TEST(BadArgs, LoadNpyMissingFile) {
  const std::string p = missing_dir() + ".npy";
  EXPECT_ERROR(io::IoError, (io::load_npy<double, 2>(p, Layout<2>::block(grid1(), {4, 4}), host)), p);
}
TEST(BadArgs, SaveZarrZeroChunk) {
  EXPECT_ERROR(InvalidArgument, (io::save_zarr(missing_dir(), arr({4, 4}), {0, 2}), 0), "chunk");
}
TEST(BadArgs, LoadZarrMissingStore) {
  const std::string p = missing_dir();
  EXPECT_ERROR(io::IoError, (io::load_zarr<double, 2>(p, Layout<2>::block(grid1(), {4, 4}), host)), p);
}
TEST(BadArgs, CheckpointReaderMissingDirectory) {
  const std::string p = missing_dir();
  EXPECT_ERROR(io::IoError, (io::CheckpointReader(p, world())), p);
}

}  // namespace
