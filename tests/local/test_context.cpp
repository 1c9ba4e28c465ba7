// Context: streams per device and role, one stream waiting for another, ContextCache, resources released newest first when it ends, nesting,
// and buffers that outlive their context.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "device_test.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/context_cache.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/stream.hpp"

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

TYPED_TEST(ContextTest, AStreamWaitsForTheWorkQueuedOnAnother) {
  const auto dev = this->device();
  const tessera::Stream& compute = tessera::Stream::default_for(dev);
  tessera::Stream other(dev);
  // A fill queued on the compute stream, then a copy on another stream that waits for it: the
  // copy reads the filled values (without the wait it could start first, on a GPU).
  const tessera::local::index_t n = tessera::local::index_t(1) << 23;
  tessera::local::Array<double, 1> a({n}, dev);
  tessera::local::fill(a, 3.0);
  other.wait_for(compute);
  std::vector<double> back(static_cast<std::size_t>(n), 0.0);
  tessera::detail::memcpy_any(back.data(), tessera::Device::host(), a.data(), dev, back.size() * sizeof(double), other);
  other.synchronize();
  EXPECT_EQ(std::count(back.begin(), back.end(), 3.0), n);
  // One stream, or a host stream (always idle): nothing to wait for.
  compute.wait_for(compute);
  other.wait_for(tessera::Stream::default_for(tessera::Device::host()));
  // A host stream waiting for a GPU stream blocks until its work is done.
  tessera::local::fill(a, 4.0);
  tessera::Stream::default_for(tessera::Device::host()).wait_for(compute);
  tessera::detail::memcpy_any(back.data(), tessera::Device::host(), a.data(), dev, back.size() * sizeof(double), compute);
  compute.synchronize();
  EXPECT_EQ(std::count(back.begin(), back.end(), 4.0), n);
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

namespace {
struct CountTag;
struct SmallTag;
}  // namespace

TEST(ContextCache, MakesEachValueOnceAndCountsHitsAndMisses) {
  Context ctx;
  using Cache = tessera::ContextCache<CountTag, std::string, int>;
  auto& c = Cache::current();
  EXPECT_EQ(&c, &Cache::current());
  int made = 0;
  auto make = [&] { return std::make_shared<int>(++made); };
  EXPECT_EQ(*c.get("a", make), 1);
  EXPECT_EQ(*c.get("a", make), 1);
  EXPECT_EQ(*c.get("b", make), 2);
  EXPECT_EQ(c.find("c"), nullptr);
  EXPECT_EQ(made, 2);
  const tessera::CacheStats st = c.stats();
  EXPECT_EQ(st.hits, 1u);
  EXPECT_EQ(st.misses, 3u);  // a, b, and the find of c
  EXPECT_EQ(st.entries, 2u);
  EXPECT_EQ(st.str(), "hits 1, misses 3, entries 2");
  // A value held elsewhere outlives clear(); the next get makes a new one.
  auto held = c.get("a", make);
  c.clear();
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(*held, 1);
  EXPECT_EQ(*c.get("a", make), 3);
  {
    Context inner;  // another Context has caches of its own
    EXPECT_NE(&Cache::current(), &c);
    EXPECT_EQ(Cache::current().size(), 0u);
  }
}

TEST(ContextCache, ACapacityDropsTheLeastRecentlyUsedValueNobodyHolds) {
  Context ctx;
  using Cache = tessera::ContextCache<SmallTag, int, int, 2>;
  auto& c = Cache::current();
  auto make = [](int v) { return [v] { return std::make_shared<int>(v); }; };
  auto one = c.get(1, make(1));  // held: never dropped
  (void)c.get(2, make(2));
  (void)c.get(2, make(2));
  (void)c.get(3, make(3));  // over capacity: 2 is the only value nobody holds
  EXPECT_EQ(c.size(), 2u);
  EXPECT_NE(c.find(1), nullptr);
  EXPECT_EQ(c.find(2), nullptr);
  EXPECT_NE(c.find(3), nullptr);
  one.reset();
  (void)c.get(3, make(3));  // 3 is now more recent than 1
  (void)c.get(4, make(4));
  EXPECT_EQ(c.find(1), nullptr);
  EXPECT_NE(c.find(3), nullptr);
  EXPECT_NE(c.find(4), nullptr);
  // Everything held: the cache grows past its capacity rather than drop a value in use.
  auto a = c.get(3, make(3)), b = c.get(4, make(4)), d = c.get(5, make(5));
  EXPECT_EQ(c.size(), 3u);
  int visited = 0;
  c.for_each([&](int key, int value) {
    EXPECT_EQ(key, value);
    ++visited;
  });
  EXPECT_EQ(visited, 3);
}
