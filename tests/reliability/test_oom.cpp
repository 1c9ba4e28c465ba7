// Out of memory: an allocation larger than the device throws OutOfMemory naming the device and
// the size; arrays that existed are unchanged and later allocations (and collectives) work.
// 2^50 bytes is more than any GPU and more than the 47-bit user address space of x86-64 hosts.
#include <gtest/gtest.h>

#include <string>

#include "device_test.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/local/basic_ops.hpp"

namespace {
using namespace tessera;
using tessera::testing::DeviceTest;
using local::index_t;

constexpr index_t kHugeDoubles = index_t(1) << 47;  // 2^50 bytes

template <class K> class OutOfMemoryTest : public DeviceTest<K> {};
TYPED_TEST_SUITE(OutOfMemoryTest, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(OutOfMemoryTest, LocalArrayTooLargeThrowsAndLeavesOthersAlone) {
  const Device d = this->device();
  auto keep = local::full<double, 1>({1000}, 3.0, d);
  auto a = keep;
  try {
    a = local::Array<double, 1>({kHugeDoubles}, d);
    FAIL() << "allocating 2^50 bytes on " << d.str() << " did not throw";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(std::to_string(kHugeDoubles * 8)), std::string::npos) << m;
    EXPECT_NE(m.find(d.is_cuda() ? d.str() : "host"), std::string::npos) << m;
  }
  EXPECT_EQ(a.data(), keep.data());  // the handle was not reassigned
  EXPECT_EQ(a.shape(), (local::Shape<1>{1000}));
  for (double v : local::to_host(keep)) ASSERT_EQ(v, 3.0);
  auto later = local::full<double, 1>({1 << 20}, 2.0, d);  // 8 MiB: works
  EXPECT_EQ(local::to_host(later)[(1 << 20) - 1], 2.0);
}

TYPED_TEST(OutOfMemoryTest, DistributedArrayTooLargeThrowsOnEveryRank) {
  namespace td = tessera::distributed;
  const Device d = this->device();
  const auto world = comm::ProcessGroup::world();
  const td::ProcessGrid grid(world);
  const auto small = td::Layout<1>::block(grid, {100});
  auto keep = td::full<double, 1>(small, 1.5, d);
  // Every rank's block is 2^47 doubles, so every rank throws (no collective is left waiting).
  const auto huge = td::Layout<1>::block(grid, {kHugeDoubles * world.size()});
  EXPECT_THROW((void)(td::zeros<double, 1>(huge, d)), OutOfMemory);
  EXPECT_DOUBLE_EQ(td::sum(keep), 150.0);  // unchanged, and the group still works
  auto later = td::ones<double, 1>(td::Layout<1>::block(grid, {1 << 20}), d);
  EXPECT_DOUBLE_EQ(td::sum(later), double(1 << 20));
}

TYPED_TEST(OutOfMemoryTest, SizeOverflowIsOutOfMemoryNotAWrappedAllocation) {
  // 2^65 elements of 8 bytes wrap a 64-bit byte count to 0: must throw, not allocate 0 bytes.
  const Device d = this->device();
  EXPECT_THROW((local::Array<double, 2>({index_t(1) << 62, 8}, d)), OutOfMemory);
  // A zero extent makes any other extents fine (no bytes), without overflow on the way.
  const local::Array<double, 3> none({index_t(1) << 40, index_t(1) << 40, 0}, d);
  EXPECT_EQ(none.size(), 0);
}

}  // namespace
