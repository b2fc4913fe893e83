// WorkerLog: a worker's stderr pipe, read into prefixed, escaped lines.
#include "controller/instances/worker_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using common::UniqueFd;

class WorkerLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    read_end_ = UniqueFd(fds[0]);
    write_end_ = UniqueFd(fds[1]);
    log_ = std::make_unique<WorkerLog>(loop_.get(), "instance web worker 42: ",
                                       [this](const std::string& l) { lines_.push_back(l); });
    ASSERT_TRUE(log_->start(std::move(read_end_)).ok());
  }
  void TearDown() override {
    log_.reset();
    loop_.spin(5);
  }

  void write(const std::string& text) {
    ASSERT_EQ(::write(write_end_.get(), text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
  }

  ipc::testing::TestLoop loop_;
  UniqueFd read_end_;
  UniqueFd write_end_;
  std::unique_ptr<WorkerLog> log_;
  std::vector<std::string> lines_;
};

TEST_F(WorkerLogTest, LinesArePrefixedAndCannotForgeAControllerLine) {
  write("listening\n2026-12-01 [info] controller: instance api started\x1b[2K\nhalf");
  ASSERT_TRUE(loop_.runUntil([&] { return lines_.size() == 2; }));
  EXPECT_EQ(lines_[0], "instance web worker 42: listening");
  // The forged line stays on one line of ours, behind our prefix, its escape escaped.
  EXPECT_EQ(lines_[1].rfind("instance web worker 42: 2026-12-01 [info] controller:", 0), 0u)
      << lines_[1];
  EXPECT_EQ(lines_[1].find('\x1b'), std::string::npos) << lines_[1];
  // The unfinished line comes out once the writer is gone.
  write_end_.reset();
  ASSERT_TRUE(loop_.runUntil([&] { return lines_.size() == 3; }));
  EXPECT_EQ(lines_[2], "instance web worker 42: half");
}

TEST_F(WorkerLogTest, ALongLineIsCutAndAFloodIsDroppedAndCounted) {
  write(std::string(WorkerLog::kMaxLine + 10, 'a') + "\n");
  ASSERT_TRUE(loop_.runUntil([&] { return lines_.size() == 2; }));
  EXPECT_EQ(lines_[0].size(), std::string("instance web worker 42: ").size() + WorkerLog::kMaxLine);
  lines_.clear();
  std::string flood;
  for (int i = 0; i < 1000; ++i) flood += "line\n";
  write(flood);
  auto passed = [&] {
    size_t n = 0;
    for (const std::string& l : lines_) n += l == "instance web worker 42: line";
    return n;
  };
  ASSERT_TRUE(loop_.runUntil([&] { return passed() + log_->dropped() == 1000; }));
  EXPECT_GE(passed(), static_cast<size_t>(WorkerLog::kLineBurst) - 2);  // 2: the long line
  EXPECT_GT(log_->dropped(), 0u);
}

}  // namespace
}  // namespace scalws::controller
