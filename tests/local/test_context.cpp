// Context: streams per device and role, resources released newest first when it ends, nesting,
// and buffers that outlive their context.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "device_test.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/context.hpp"

namespace {
using tessera::Context;
using tessera::StreamRole;

template <class K>
class ContextTest : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(ContextTest, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

struct Tracker {
  std::vector<int>* log;
  int id;
  Tracker(std::vector<int>* l, int i) : log(l), id(i) {}
  Tracker(const Tracker&) = delete;
  ~Tracker() { log->push_back(id); }
};
struct First : Tracker { using Tracker::Tracker; };
struct Second : Tracker { using Tracker::Tracker; };
}  // namespace

TYPED_TEST(ContextTest, StreamsPerRoleAndNesting) {
  const auto dev = this->device();
  Context& outer = Context::current();
  {
    Context inner;
    EXPECT_EQ(&Context::current(), &inner);
    EXPECT_TRUE(Context::explicit_context_alive());
    EXPECT_NE(inner.id(), outer.id());
    tessera::Stream& compute = inner.stream(dev);
    EXPECT_EQ(&compute, &tessera::Stream::default_for(dev));  // default streams are the context's
    EXPECT_EQ(&compute, &inner.stream(dev, StreamRole::compute));
    if (dev.is_cuda()) {
      EXPECT_NE(&compute, &inner.stream(dev, StreamRole::transfer));
      EXPECT_NE(&inner.stream(dev, StreamRole::transfer), &inner.stream(dev, StreamRole::comm));
    } else {
      EXPECT_EQ(&compute, &inner.stream(dev, StreamRole::transfer));  // one host stream
    }
  }
  EXPECT_EQ(&Context::current(), &outer);
}

TYPED_TEST(ContextTest, ResourcesEndNewestFirstWithTheContext) {
  std::vector<int> log;
  {
    Context ctx;
    auto& a = ctx.resource<First>([&] { return std::make_shared<First>(&log, 1); });
    auto& b = ctx.resource<Second>([&] { return std::make_shared<Second>(&log, 2); });
    EXPECT_EQ(&a, &ctx.resource<First>([&]() -> std::shared_ptr<First> { ADD_FAILURE() << "made twice"; return nullptr; }));
    EXPECT_EQ(&b, &ctx.resource<Second>([&]() -> std::shared_ptr<Second> { ADD_FAILURE() << "made twice"; return nullptr; }));
    EXPECT_TRUE(log.empty());
  }
  EXPECT_EQ(log, (std::vector<int>{2, 1}));
}

TYPED_TEST(ContextTest, ArraysOutlivingTheirContextAreFreedSafely) {
  const auto dev = this->device();
  tessera::local::Array<double, 1> kept;
  {
    Context ctx;
    tessera::local::Array<double, 1> a({1000}, dev);
    tessera::local::fill(a, 3.0);
    kept = a;
  }
  // Its stream is gone: reading it (on the outer context's stream) and freeing it still work.
  auto h = kept.to(tessera::Device::host());
  EXPECT_EQ(h.data()[999], 3.0);
  kept = {};
  h = {};
}
