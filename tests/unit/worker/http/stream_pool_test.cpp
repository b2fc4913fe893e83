#include "worker/http/stream_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker {
namespace {

struct PoolOwner {
  int made = 0;
};

class PooledStream {
 public:
  explicit PooledStream(PoolOwner& owner) { id = ++owner.made; }
  int id;
  int recycled = 0;

 private:
  friend class StreamList<PooledStream>;
  friend class StreamPool<PooledStream>;
  void recycle() { ++recycled; }
  PooledStream* prev_ = nullptr;
  PooledStream* next_ = nullptr;
};

std::vector<int> poolActiveIds(const StreamPool<PooledStream>& pool) {
  std::vector<int> out;
  for (PooledStream* i = pool.active().front(); i != nullptr;
       i = StreamList<PooledStream>::next(i)) {
    out.push_back(i->id);
  }
  return out;
}

TEST(StreamPoolTest, MakesStreamsOnlyWhileNoneIsFree) {
  PoolOwner owner;
  StreamPool<PooledStream> pool;
  PooledStream* a = pool.take(owner);
  PooledStream* b = pool.take(owner);
  EXPECT_NE(a, b);
  EXPECT_EQ(owner.made, 2);
  EXPECT_EQ(pool.made(), 2u);
  EXPECT_EQ(poolActiveIds(pool), (std::vector<int>{2, 1}));

  pool.retire(a);
  EXPECT_EQ(poolActiveIds(pool), (std::vector<int>{2}));
  // Retired but not collected: not reused yet (its methods may still be on the stack).
  PooledStream* c = pool.take(owner);
  EXPECT_NE(c, a);
  EXPECT_EQ(owner.made, 3);
  EXPECT_EQ(a->recycled, 0);

  pool.collect();
  EXPECT_EQ(a->recycled, 1);
  PooledStream* d = pool.take(owner);
  EXPECT_EQ(d, a);  // the recycled object, no new one
  EXPECT_EQ(owner.made, 3);
  EXPECT_EQ(pool.made(), 3u);
  EXPECT_EQ(poolActiveIds(pool), (std::vector<int>{1, 3, 2}));
}

TEST(StreamPoolTest, CollectRecyclesEachRetiredStreamOnce) {
  PoolOwner owner;
  StreamPool<PooledStream> pool;
  PooledStream* a = pool.take(owner);
  PooledStream* b = pool.take(owner);
  pool.retire(b);
  pool.retire(a);
  pool.collect();
  pool.collect();
  EXPECT_EQ(a->recycled, 1);
  EXPECT_EQ(b->recycled, 1);
  EXPECT_TRUE(pool.active().empty());
  // Both are free again: two takes make nothing new.
  pool.take(owner);
  pool.take(owner);
  EXPECT_EQ(owner.made, 2);
}

TEST(StreamPoolTest, RecycleAllReachesActiveClosedAndFreeStreams) {
  PoolOwner owner;
  StreamPool<PooledStream> pool;
  PooledStream* active = pool.take(owner);
  PooledStream* closed = pool.take(owner);
  PooledStream* free = pool.take(owner);
  pool.retire(free);
  pool.collect();
  pool.retire(closed);
  pool.recycleAll();
  EXPECT_EQ(active->recycled, 1);
  EXPECT_EQ(closed->recycled, 1);
  EXPECT_EQ(free->recycled, 2);
}

}  // namespace
}  // namespace scalws::worker
