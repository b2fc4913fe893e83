#include "worker/http2/body_queue.h"

#include <gtest/gtest.h>

#include <string>

namespace scalws::worker::http2 {
namespace {

struct Owner : RefCounted {
  void onLastRelease() noexcept override {}
};

// What the queue holds, in order, as text (file slices as "<fd:offset+length>").
std::string contents(BodyQueue& q) {
  std::string out;
  while (!q.empty()) {
    const BodyQueue::Segment& s = q.front();
    switch (s.kind) {
      case BodyQueue::Kind::kOwned:
        out.append(q.ownedData(s), s.length);
        break;
      case BodyQueue::Kind::kStable:
        out.append(s.data, s.length);
        break;
      case BodyQueue::Kind::kFile:
        out += "<" + std::to_string(s.fd) + ":" + std::to_string(s.offset) + "+" +
               std::to_string(s.length) + ">";
        break;
    }
    q.consume(s.length);
  }
  return out;
}

TEST(BodyQueue, KeepsOrderAcrossKinds) {
  BodyQueue q;
  Owner owner;
  static const char kStable[] = "stable";
  q.append("copy|");
  q.appendStable(kStable);
  q.appendFile(FileSlice{7, 100, 50, &owner});
  q.append("|tail");
  EXPECT_EQ(q.size(), 5u + 6 + 50 + 5);
  EXPECT_EQ(owner.refCountForTest(), 2u);
  EXPECT_EQ(contents(q), "copy|stable<7:100+50>|tail");
  EXPECT_EQ(owner.refCountForTest(), 1u);
}

TEST(BodyQueue, PartialConsumptionAdvancesWithinSegments) {
  BodyQueue q;
  Owner owner;
  q.append("abcdef");
  q.appendFile(FileSlice{3, 0, 10, &owner});
  q.consume(4);
  EXPECT_EQ(q.size(), 12u);
  EXPECT_EQ(std::string(q.ownedData(q.front()), q.front().length), "ef");
  q.consume(5);  // "ef" and 3 bytes of the file
  EXPECT_EQ(q.front().offset, 3u);
  EXPECT_EQ(q.front().length, 7u);
  EXPECT_EQ(owner.refCountForTest(), 2u);
  q.clear();
  EXPECT_EQ(owner.refCountForTest(), 1u);
  EXPECT_TRUE(q.empty());
}

TEST(BodyQueue, AQueueThatNeverEmptiesDoesNotGrowWithoutBound) {
  BodyQueue q;
  q.append("c");
  std::string chunk(4096, 'd');
  for (int i = 0; i < 1000; ++i) {
    q.append(chunk);
    q.consume(4096);  // one byte always stays behind
  }
  EXPECT_EQ(q.size(), 1u);
  EXPECT_LT(q.ownedBytesForTest(), 100u * 1024);
  EXPECT_EQ(contents(q), "d");
}

}  // namespace
}  // namespace scalws::worker::http2
