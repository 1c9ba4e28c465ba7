#include <gtest/gtest.h>

#include <sstream>

#include "device_test.hpp"
#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/self_test.hpp"

using tessera::Device;

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(Device::parse("host"), Device::host());
  EXPECT_EQ(Device::parse("cpu"), Device::host());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:3"), Device::cuda(3));
  EXPECT_EQ(Device::cuda(7).str(), "cuda:7");
  std::ostringstream os;
  os << Device::host() << " " << Device::cuda(1);
  EXPECT_EQ(os.str(), "host cuda:1");
  EXPECT_TRUE(Device::cuda(2).is_cuda());
  EXPECT_EQ(Device::cuda(2).index(), 2);
  EXPECT_NE(Device::cuda(0), Device::cuda(1));
  EXPECT_LT(Device::host(), Device::cuda(0));
}

TEST(Device, RejectsBadNames) {
  for (const char* bad : {"", "gpu", "cuda:", "cuda:-1", "cuda:1x", "cuda:01:2"}) {
    EXPECT_THROW(Device::parse(bad), tessera::InvalidArgument) << "'" << bad << "'";
  }
  try {
    Device::parse("tpu:0");
    FAIL() << "no exception";
  } catch (const tessera::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'tpu:0'"), std::string::npos) << e.what();
  }
}

TEST(Device, NonexistentGpuIsRejected) {
  const Device d = Device::cuda(tessera::cuda_device_count() + 5);
  EXPECT_THROW(tessera::check_device_usable(d), tessera::Error);
  EXPECT_THROW(tessera::device_self_test(d), tessera::Error);
}

template <class K>
class DeviceRuns : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(DeviceRuns, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(DeviceRuns, SelfTestFindsNoWrongElements) {
  const Device d = this->device();
  EXPECT_NO_THROW(tessera::check_device_usable(d));
  EXPECT_EQ(tessera::device_self_test(d, 1 << 20), 0u);
  EXPECT_EQ(tessera::device_self_test(d, 1), 0u);
  EXPECT_FALSE(tessera::device_description(d).empty());
}
