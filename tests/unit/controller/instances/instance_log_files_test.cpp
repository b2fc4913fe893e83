// An instance's log files: made beneath a directory only the controller writes to, never
// through a symlink or into a FIFO, and reopened under their names after a rename.
#include "controller/instances/instance_log_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/support/test_files.h"

namespace scalws::controller {
namespace {

namespace fs = std::filesystem;

class InstanceLogFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "scalws-logs-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    ::chmod(root_.c_str(), 0755);
    dir_ = root_ + "/logs";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_;
  std::string dir_;
};

TEST_F(InstanceLogFilesTest, MakesTheDirectoriesAndBothFiles) {
  InstanceLogFiles logs(dir_, "web");
  ASSERT_TRUE(logs.open(true).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/web").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  ASSERT_EQ(::stat((dir_ + "/web/access.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_GE(logs.accessFd(), 0);
  logs.writeError("one");
  logs.writeError("two");
  EXPECT_EQ(testing::readFile(dir_ + "/web/error.log"), "one\ntwo\n");
  common::Result<common::UniqueFd> copy = logs.duplicateAccess();
  ASSERT_TRUE(copy.ok());
  ASSERT_EQ(::write(copy->get(), "a\n", 2), 2);
  EXPECT_EQ(testing::readFile(dir_ + "/web/access.log"), "a\n");
}

TEST_F(InstanceLogFilesTest, NoAccessLogWhenTurnedOff) {
  InstanceLogFiles logs(dir_, "web");
  ASSERT_TRUE(logs.open(false).ok());
  EXPECT_EQ(logs.accessFd(), -1);
  EXPECT_FALSE(fs::exists(dir_ + "/web/access.log"));
  common::Result<common::UniqueFd> copy = logs.duplicateAccess();
  ASSERT_TRUE(copy.ok());
  EXPECT_FALSE(copy->valid());
}

TEST_F(InstanceLogFilesTest, ReopenFollowsTheNameAfterARename) {
  InstanceLogFiles logs(dir_, "web");
  ASSERT_TRUE(logs.open(true).ok());
  logs.writeError("before");
  fs::rename(dir_ + "/web/error.log", dir_ + "/web/error.log.1");
  logs.writeError("still old");
  ASSERT_TRUE(logs.reopen().ok());
  logs.writeError("after");
  EXPECT_EQ(testing::readFile(dir_ + "/web/error.log.1"), "before\nstill old\n");
  EXPECT_EQ(testing::readFile(dir_ + "/web/error.log"), "after\n");
}

TEST_F(InstanceLogFilesTest, ASymlinkPlantedAsALogIsNotFollowed) {
  ASSERT_TRUE(openInstanceLogDir(dir_, "web").ok());
  std::string target = root_ + "/target";
  std::ofstream(target) << "untouched\n";
  fs::create_symlink(target, dir_ + "/web/access.log");
  InstanceLogFiles logs(dir_, "web");
  common::Status opened = logs.open(true);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.message().find("symlink"), std::string::npos) << opened.message();
  EXPECT_EQ(testing::readFile(target), "untouched\n");
  // The same beneath openLogFile itself, and a FIFO is refused without blocking.
  common::Result<common::UniqueFd> dir = openInstanceLogDir(dir_, "web");
  ASSERT_TRUE(dir.ok());
  EXPECT_FALSE(openLogFile(dir->get(), "access.log").ok());
  ASSERT_EQ(::mkfifo((dir_ + "/web/fifo.log").c_str(), 0600), 0);
  EXPECT_FALSE(openLogFile(dir->get(), "fifo.log").ok());
}

TEST_F(InstanceLogFilesTest, ADirectoryOthersMayWriteToIsRefused) {
  ASSERT_TRUE(openInstanceLogDir(dir_, "web").ok());
  ASSERT_EQ(::chmod((dir_ + "/web").c_str(), 0777), 0);
  common::Result<common::UniqueFd> dir = openInstanceLogDir(dir_, "web");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), common::StatusCode::kPermissionDenied);
  // A symlink in place of the instance's directory is not followed either.
  fs::remove(dir_ + "/web");
  fs::create_directory(root_ + "/elsewhere");
  fs::create_directory_symlink(root_ + "/elsewhere", dir_ + "/web");
  EXPECT_FALSE(openInstanceLogDir(dir_, "web").ok());
  for (const char* bad : {"", ".", "..", "a/b"}) EXPECT_FALSE(openInstanceLogDir(dir_, bad).ok());
  EXPECT_FALSE(openInstanceLogDir("relative", "web").ok());
}

}  // namespace
}  // namespace scalws::controller
