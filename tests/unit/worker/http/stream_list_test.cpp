#include "worker/http/stream_list.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker {
namespace {

class Item {
 public:
  explicit Item(int v) : value(v) {}
  int value;

 private:
  friend class StreamList<Item>;
  Item* prev_ = nullptr;
  Item* next_ = nullptr;
};

std::vector<int> values(const StreamList<Item>& list) {
  std::vector<int> out;
  for (Item* i = list.front(); i != nullptr; i = StreamList<Item>::next(i)) out.push_back(i->value);
  return out;
}

TEST(StreamListTest, MovesItemsBetweenListsFromAnyPosition) {
  Item a(1), b(2), c(3);
  StreamList<Item> active;
  StreamList<Item> closed;
  active.pushFront(&a);
  active.pushFront(&b);
  active.pushFront(&c);
  EXPECT_EQ(values(active), (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(active.size(), 3u);

  active.remove(&b);  // the middle
  closed.pushFront(&b);
  active.remove(&a);  // the tail
  closed.pushFront(&a);
  EXPECT_EQ(values(active), (std::vector<int>{3}));
  EXPECT_EQ(values(closed), (std::vector<int>{1, 2}));

  active.remove(&c);  // the only one
  EXPECT_TRUE(active.empty());
  EXPECT_EQ(active.size(), 0u);
  EXPECT_EQ(closed.popFront(), &a);
  EXPECT_EQ(closed.popFront(), &b);
  EXPECT_EQ(closed.popFront(), nullptr);
  EXPECT_TRUE(closed.empty());
}

}  // namespace
}  // namespace scalws::worker
