#include "common/log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace scalws::common::log {
namespace {

// Points the log at a pipe for one test and restores the process-wide settings after.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe2(fds_, O_NONBLOCK | O_CLOEXEC), 0);
    saved_fd_ = fd();
    saved_level_ = level();
    setFd(fds_[1]);
  }
  void TearDown() override {
    setFd(saved_fd_);
    setLevel(saved_level_);
    setProgramName("scalws");
    close(fds_[0]);
    close(fds_[1]);
  }
  std::string drain() {
    std::string out;
    char buf[8192];
    ssize_t n;
    while ((n = read(fds_[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

  int fds_[2] = {-1, -1};
  int saved_fd_ = 2;
  Level saved_level_ = Level::kInfo;
};

TEST(LogLevel, ParseAndName) {
  EXPECT_EQ(*parseLevel("debug"), Level::kDebug);
  EXPECT_EQ(*parseLevel("info"), Level::kInfo);
  EXPECT_EQ(*parseLevel("notice"), Level::kNotice);
  EXPECT_EQ(*parseLevel("warn"), Level::kWarn);
  EXPECT_EQ(*parseLevel("warning"), Level::kWarn);
  EXPECT_EQ(*parseLevel("error"), Level::kError);
  EXPECT_EQ(*parseLevel("alert"), Level::kAlert);
  Result<Level> bad = parseLevel("loud");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "unknown log level \"loud\" (expected debug, info, notice, warn, error or alert)");
  for (Level l :
       {Level::kDebug, Level::kInfo, Level::kNotice, Level::kWarn, Level::kError, Level::kAlert}) {
    EXPECT_EQ(*parseLevel(levelName(l)), l);
  }
}

// "2024-01-31T12:34:56.789Z": digits where the pattern has 'd', the rest literally.
bool isTimestamp(std::string_view text) {
  constexpr std::string_view kPattern = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (text.size() != kPattern.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool digit = text[i] >= '0' && text[i] <= '9';
    if (kPattern[i] == 'd' ? !digit : text[i] != kPattern[i]) return false;
  }
  return true;
}

TEST_F(LogTest, LineFormat) {
  setLevel(Level::kInfo);
  setProgramName("scalwsd");
  LOG_WARN("worker %d exited with %s", 3, "signal 9");
  std::string line = drain();
  ASSERT_GT(line.size(), 25u) << line;
  EXPECT_TRUE(isTimestamp(std::string_view(line).substr(0, 24))) << line;
  EXPECT_EQ(line.substr(24),
            " [warn] scalwsd[" + std::to_string(getpid()) + "]: worker 3 exited with signal 9\n");
}

TEST_F(LogTest, LevelFilters) {
  setLevel(Level::kWarn);
  EXPECT_FALSE(enabled(Level::kInfo));
  EXPECT_TRUE(enabled(Level::kWarn));
  EXPECT_TRUE(enabled(Level::kAlert));
  LOG_DEBUG("hidden debug");
  LOG_INFO("hidden info");
  LOG_NOTICE("hidden notice");
  LOG_ERROR("shown error");
  LOG_ALERT("shown alert");
  std::string out = drain();
  EXPECT_EQ(out.find("hidden"), std::string::npos) << out;
  EXPECT_NE(out.find("[error] scalws["), std::string::npos) << out;
  EXPECT_NE(out.find("shown error\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[alert] scalws["), std::string::npos) << out;
  EXPECT_EQ(level(), Level::kWarn);
}

TEST_F(LogTest, LongMessageIsTruncatedToOneLine) {
  setLevel(Level::kDebug);
  std::string big(10000, 'x');
  LOG_DEBUG("%s", big.c_str());
  std::string out = drain();
  ASSERT_FALSE(out.empty());
  EXPECT_LE(out.size(), 4096u);
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1);  // one line
}

TEST_F(LogTest, ProgramNameIsCopiedAndBounded) {
  setLevel(Level::kInfo);
  std::string name(100, 'p');
  setProgramName(name);
  name.assign("changed");
  LOG_INFO("x");
  std::string out = drain();
  EXPECT_NE(out.find("] " + std::string(31, 'p') + "["), std::string::npos) << out;
}

}  // namespace
}  // namespace scalws::common::log
