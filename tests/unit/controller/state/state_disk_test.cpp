// StateDisk on a real directory (a full filesystem is driven by
// tests/integration/test_controller_state_disk.py, which mounts a small tmpfs).
#include "controller/state/state_disk.h"

#include <gtest/gtest.h>

#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller::state {
namespace {

TEST(StateDiskTest, ADirectoryWithRoomIsNotFull) {
  scalws::testing::TempDir dir;
  StateDisk disk(dir.path());
  EXPECT_FALSE(disk.check());
  ipc::Json s = disk.status();
  EXPECT_EQ(s["full"], false);
  EXPECT_GE(s["free_bytes"].get<uint64_t>(), StateDisk::kFullBelowBytes);
  EXPECT_GT(s["free_inodes"].get<uint64_t>(), 0u);
  EXPECT_EQ(s["message"], "");
}

TEST(StateDiskTest, AMissingDirectoryKeepsTheLastAnswer) {
  StateDisk disk("/nonexistent/scalws-state");
  EXPECT_FALSE(disk.check());
  EXPECT_FALSE(disk.full());
}

}  // namespace
}  // namespace scalws::controller::state
