#include "controller/state/state_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "tests/support/test_files.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller::state {
namespace {

using common::Result;
using common::StatusCode;
using scalws::testing::TempDir;

using ::scalws::testing::readFile;

TEST(StateLockTest, HolderWritesItsPid) {
  TempDir dir;
  Result<StateLock> lock = StateLock::acquire(dir.path());
  ASSERT_TRUE(lock.ok()) << lock.status().message();
  EXPECT_EQ(lock->path(), dir.file("lock"));
  EXPECT_EQ(readFile(dir.file("lock")), std::to_string(getpid()) + "\n");
  EXPECT_EQ(StateLock::readHolderPid(dir.path()), getpid());
  EXPECT_TRUE(fcntl(lock->fd(), F_GETFD) & FD_CLOEXEC);
}

TEST(StateLockTest, SecondLockInTheSameProcessIsRefusedUntilTheFirstCloses) {
  TempDir dir;
  {
    Result<StateLock> first = StateLock::acquire(dir.path());
    ASSERT_TRUE(first.ok());
    Result<StateLock> second = StateLock::acquire(dir.path());
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(second.status().message().find("pid " + std::to_string(getpid())), std::string::npos)
        << second.status().message();
    EXPECT_NE(second.status().message().find(dir.path()), std::string::npos);
    // Moving the lock keeps it held.
    StateLock moved = std::move(*first);
    EXPECT_FALSE(StateLock::acquire(dir.path()).ok());
  }
  Result<StateLock> again = StateLock::acquire(dir.path());
  EXPECT_TRUE(again.ok()) << again.status().message();
}

TEST(StateLockTest, StalePidFromAPreviousHolderIsReplaced) {
  TempDir dir;
  std::ofstream(dir.file("lock")) << "4194303999\n";  // longer than our pid: tail must go
  Result<StateLock> lock = StateLock::acquire(dir.path());
  ASSERT_TRUE(lock.ok());
  EXPECT_EQ(readFile(dir.file("lock")), std::to_string(getpid()) + "\n");
}

TEST(StateLockTest, MissingDirectoryIsNotFound) {
  TempDir dir;
  Result<StateLock> lock = StateLock::acquire(dir.file("missing"));
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), StatusCode::kNotFound) << lock.status().message();
}

// A child process takes the lock, reports, then waits for an order on a pipe:
// 'r' = release the lock and stay alive, 'x' = exit.
struct ChildHolder {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
};

ChildHolder startHolder(const std::string& dir) {
  int down[2];
  int up[2];
  EXPECT_EQ(pipe2(down, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(up, O_CLOEXEC), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    std::optional<StateLock> lock;
    Result<StateLock> got = StateLock::acquire(dir);
    char ok = got.ok() ? 'L' : 'E';
    if (got.ok()) lock.emplace(std::move(*got));
    if (write(up[1], &ok, 1) != 1) _exit(3);
    char order = 0;
    while (read(down[0], &order, 1) == 1) {
      if (order == 'r') {
        lock.reset();
        if (write(up[1], "R", 1) != 1) _exit(3);
      } else if (order == 'x') {
        break;
      }
    }
    _exit(0);
  }
  close(down[0]);
  close(up[1]);
  ChildHolder child{pid, down[1], up[0]};
  char report = 0;
  EXPECT_EQ(read(child.from_child, &report, 1), 1);
  EXPECT_EQ(report, 'L');
  return child;
}

void finish(ChildHolder& child) {
  if (write(child.to_child, "x", 1) != 1) kill(child.pid, SIGKILL);
  int status = 0;
  EXPECT_EQ(waitpid(child.pid, &status, 0), child.pid);
  close(child.to_child);
  close(child.from_child);
}

TEST(StateLockTest, AnotherProcessIsRefusedWithTheHoldersPid) {
  TempDir dir;
  ChildHolder child = startHolder(dir.path());
  ASSERT_GT(child.pid, 0);
  Result<StateLock> mine = StateLock::acquire(dir.path());
  ASSERT_FALSE(mine.ok());
  EXPECT_EQ(mine.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(mine.status().message().find("pid " + std::to_string(child.pid) + ","),
            std::string::npos)
      << mine.status().message();
  EXPECT_EQ(StateLock::readHolderPid(dir.path()), child.pid);

  // Released when the holder closes its fd, even though the holder lives on.
  ASSERT_EQ(write(child.to_child, "r", 1), 1);
  char report = 0;
  ASSERT_EQ(read(child.from_child, &report, 1), 1);
  ASSERT_EQ(report, 'R');
  Result<StateLock> after = StateLock::acquire(dir.path());
  EXPECT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(StateLock::readHolderPid(dir.path()), getpid());
  finish(child);
}

TEST(StateLockTest, AKilledHolderLeavesNoStaleLock) {
  TempDir dir;
  ChildHolder child = startHolder(dir.path());
  ASSERT_GT(child.pid, 0);
  EXPECT_FALSE(StateLock::acquire(dir.path()).ok());
  ASSERT_EQ(kill(child.pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child.pid, &status, 0), child.pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  Result<StateLock> after = StateLock::acquire(dir.path());
  EXPECT_TRUE(after.ok()) << after.status().message();
  close(child.to_child);
  close(child.from_child);
}

}  // namespace
}  // namespace scalws::controller::state
