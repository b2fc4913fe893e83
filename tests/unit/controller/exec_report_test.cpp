#include "controller/exec_report.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

namespace scalws::controller {
namespace {

TEST(ExecReportTest, AChildThatExecsReportsNothing) {
  common::Result<ExecReport> report = ExecReport::open();
  ASSERT_TRUE(report.ok()) << report.status().message();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    ::execv(argv[0], argv);
    report->fail(7);
  }
  EXPECT_FALSE(report->wait(pid).has_value());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ExecReportTest, AFailedStepArrivesWithItsErrnoAndTheChildIsReaped) {
  common::Result<ExecReport> report = ExecReport::open();
  ASSERT_TRUE(report.ok()) << report.status().message();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::chdir("/nonexistent/scalws-exec-report") != 0) report->fail(4);
    _exit(0);
  }
  std::optional<ExecReport::Failure> failure = report->wait(pid);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->step, 4);
  EXPECT_EQ(failure->err, ENOENT);
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);  // already reaped
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace scalws::controller
