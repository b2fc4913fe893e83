#include "common/object_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::common {
namespace {

struct PoolHome {
  int made = 0;
  int destroyed = 0;
};

struct PooledThing {
  explicit PooledThing(PoolHome& h) : home(h) { id = ++h.made; }
  ~PooledThing() { ++home.destroyed; }
  PoolHome& home;
  int id;
};

TEST(ObjectPoolTest, ReusesWhatWasGivenBackBeforeMakingMore) {
  PoolHome home;
  ObjectPool<PooledThing> pool;
  PooledThing& a = pool.take(home);
  PooledThing& b = pool.take(home);
  EXPECT_NE(&a, &b);
  EXPECT_EQ(home.made, 2);
  pool.give(a);
  PooledThing& c = pool.take(home);
  EXPECT_EQ(&c, &a);
  EXPECT_EQ(home.made, 2);
  EXPECT_EQ(pool.made(), 2u);
  PooledThing& d = pool.take(home);  // none free: a new one
  EXPECT_EQ(d.id, 3);
  EXPECT_EQ(pool.made(), 3u);
}

TEST(ObjectPoolTest, TheLastGivenIsTheFirstTaken) {
  PoolHome home;
  ObjectPool<PooledThing> pool;
  PooledThing& a = pool.take(home);
  PooledThing& b = pool.take(home);
  pool.give(a);
  pool.give(b);
  EXPECT_EQ(&pool.take(home), &b);  // still warm in the caches
  EXPECT_EQ(&pool.take(home), &a);
}

TEST(ObjectPoolTest, VisitsEveryObjectMadeAndFreesThemWithThePool) {
  PoolHome home;
  {
    ObjectPool<PooledThing> pool;
    PooledThing& a = pool.take(home);
    pool.take(home);
    pool.give(a);
    std::vector<int> ids;
    pool.forEachMade([&](PooledThing& t) { ids.push_back(t.id); });
    EXPECT_EQ(ids, (std::vector<int>{1, 2}));
    EXPECT_EQ(home.destroyed, 0);
  }
  EXPECT_EQ(home.destroyed, 2);
}

}  // namespace
}  // namespace scalws::common
