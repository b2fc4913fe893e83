// A long-lived multiplexed connection across reloads: running streams keep their config,
// new ones move on, and at most two snapshots are held at once.
#include "worker/http/stream_snapshots.h"

#include <gtest/gtest.h>

#include <memory>
#include <string_view>

#include "tests/unit/worker/http/test_stream.h"
#include "worker/config_snapshot.h"

namespace scalws::worker {
namespace {

using test_support::snapshotFor;

constexpr std::string_view kSite = R"(
[[listen]]
address = "127.0.0.1:1"
[[route]]
match = { prefix = "/" }
respond = { status = 200, body = "x" }
)";

TEST(StreamSnapshotsTest, NewStreamsTakeTheLatestOnceTheOldOneIsFree) {
  std::shared_ptr<const ConfigSnapshot> first = snapshotFor(kSite);
  std::shared_ptr<const ConfigSnapshot> second = snapshotFor(kSite);
  std::shared_ptr<const ConfigSnapshot> third = snapshotFor(kSite);
  StreamSnapshots snapshots(first);

  const ConfigSnapshot* a = &snapshots.forNewStream(first);
  EXPECT_EQ(a, first.get());
  // A reload: the next stream moves on while `a` still runs under the first.
  const ConfigSnapshot* b = &snapshots.forNewStream(second);
  EXPECT_EQ(b, second.get());
  EXPECT_EQ(&snapshots.current(), second.get());
  // Another reload while the first is still in use: new streams stay on the second, so
  // no more than two snapshots are ever pinned.
  const ConfigSnapshot* c = &snapshots.forNewStream(third);
  EXPECT_EQ(c, second.get());

  snapshots.release(a);
  std::weak_ptr<const ConfigSnapshot> first_seen = first;
  first.reset();
  EXPECT_TRUE(first_seen.expired());  // the connection let the first go with its last stream

  const ConfigSnapshot* d = &snapshots.forNewStream(third);
  EXPECT_EQ(d, third.get());
  snapshots.release(b);
  snapshots.release(c);
  snapshots.release(d);
  std::weak_ptr<const ConfigSnapshot> second_seen = second;
  second.reset();
  EXPECT_TRUE(second_seen.expired());
  EXPECT_EQ(&snapshots.current(), third.get());
}

TEST(StreamSnapshotsTest, ReleasingAStreamWithoutASnapshotChangesNothing) {
  std::shared_ptr<const ConfigSnapshot> first = snapshotFor(kSite);
  std::shared_ptr<const ConfigSnapshot> second = snapshotFor(kSite);
  StreamSnapshots snapshots(first);
  const ConfigSnapshot* a = &snapshots.forNewStream(first);
  snapshots.release(nullptr);  // a stream reset before its head was dispatched
  // `a` still counts: after a reload the first stays held until `a` is over.
  EXPECT_EQ(&snapshots.forNewStream(second), second.get());
  std::weak_ptr<const ConfigSnapshot> first_seen = first;
  first.reset();
  EXPECT_FALSE(first_seen.expired());
  snapshots.release(a);
  EXPECT_TRUE(first_seen.expired());
}

}  // namespace
}  // namespace scalws::worker
