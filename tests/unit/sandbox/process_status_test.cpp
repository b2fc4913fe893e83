#include "sandbox/process_status.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace scalws::sandbox {
namespace {

constexpr const char* kSandboxedStatus =
    "Name:\tscalwsd\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t4242\n"
    "Uid:\t65534\t65534\t65534\t65534\n"
    "Gid:\t65534\t65534\t65534\t65534\n"
    "Groups:\t65534 \n"
    "Threads:\t1\n"
    "CapInh:\t0000000000000000\n"
    "CapPrm:\t0000000000000000\n"
    "CapEff:\t0000000000000000\n"
    "NoNewPrivs:\t1\n"
    "Seccomp:\t2\n"
    "Seccomp_filters:\t1\n";

SandboxReport sandboxedReport() {
  SandboxReport report;
  report.identity.uid = 65534;
  report.identity.gid = 65534;
  report.noNewPrivs = true;
  report.seccomp.enforced = true;
  return report;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(ProcessStatusTest, ParsesTheSandboxFields) {
  auto s = parseProcessStatus(kSandboxedStatus);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->uid[0], 65534u);
  EXPECT_EQ(s->uid[3], 65534u);
  EXPECT_EQ(s->gid[2], 65534u);
  EXPECT_EQ(s->threads, 1);
  EXPECT_TRUE(s->noNewPrivs);
  EXPECT_EQ(s->seccompMode, 2);  // "Seccomp_filters" must not be mistaken for it
  EXPECT_EQ(s->capEffective, 0u);
}

TEST(ProcessStatusTest, ParsesHexCapabilities) {
  auto s = parseProcessStatus(
      replaced(kSandboxedStatus, "CapEff:\t0000000000000000", "CapEff:\t000001ffffffffff"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->capEffective, 0x1ffffffffffULL);
}

TEST(ProcessStatusTest, MissingFieldIsAnError) {
  auto s = parseProcessStatus(replaced(kSandboxedStatus, "NoNewPrivs:\t1\n", ""));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("NoNewPrivs"), std::string::npos);
  EXPECT_FALSE(parseProcessStatus("Uid:\t1\t2\n").ok());  // Uid has four numbers
}

TEST(ProcessStatusTest, CheckAcceptsAMatchingStatus) {
  auto s = parseProcessStatus(kSandboxedStatus);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(checkProcessStatus(*s, sandboxedReport()).ok());
}

TEST(ProcessStatusTest, CheckCatchesEachMismatch) {
  struct Case {
    const char* from;
    const char* to;
  };
  for (Case c :
       {Case{"Seccomp:\t2", "Seccomp:\t0"}, Case{"NoNewPrivs:\t1", "NoNewPrivs:\t0"},
        Case{"Uid:\t65534\t65534\t65534", "Uid:\t65534\t65534\t0"}, Case{"Gid:\t65534", "Gid:\t0"},
        Case{"CapPrm:\t0000000000000000", "CapPrm:\t0000000000000400"}}) {
    auto s = parseProcessStatus(replaced(kSandboxedStatus, c.from, c.to));
    ASSERT_TRUE(s.ok()) << c.to;
    EXPECT_FALSE(checkProcessStatus(*s, sandboxedReport()).ok()) << c.to;
  }
}

TEST(ProcessStatusTest, ReadsThisProcess) {
  auto s = readProcessStatusOf(0);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->uid[1], geteuid());
  EXPECT_EQ(s->gid[1], getegid());
  EXPECT_GE(s->threads, 1);
  auto byPid = readProcessStatusOf(getpid());
  ASSERT_TRUE(byPid.ok());
  EXPECT_EQ(byPid->uid[0], s->uid[0]);
  EXPECT_FALSE(readProcessStatusOf(999999999).ok());
}

}  // namespace
}  // namespace scalws::sandbox
