// FifoLog: a child's log copied from its FIFO to a capped, rotated file; readFileTail.
// (A full disk is driven by tests/integration/test_controller_state_disk.py.)
#include "controller/fifo_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/support/test_files.h"
#include "tests/unit/controller/temp_dir.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using ::scalws::testing::readFile;

off_t sizeOf(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

class FifoLogTest : public ::testing::Test {
 protected:
  std::string pipe() { return dir_.file("php-fpm.pipe"); }
  std::string log() { return dir_.file("php-fpm.log"); }
  scalws::testing::TempDir dir_;
  ipc::testing::TestLoop loop_;
};

TEST_F(FifoLogTest, CopiesWhatIsWrittenToTheFifo) {
  FifoLog pl(loop_.get(), "pool p", pipe(), log(), kMinLogCap);
  ASSERT_TRUE(pl.open().ok());
  struct stat st;
  ASSERT_EQ(::lstat(pipe().c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  int probe = ::open(pipe().c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(probe, 0);
  EXPECT_GE(::fcntl(probe, F_GETPIPE_SZ), kPipeBytes);  // one pipe, whoever opens it
  ::close(probe);
  // A writer, as php-fpm opens it: no wait, a reader is there.
  int w = ::open(pipe().c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(w, 0);
  ASSERT_EQ(::write(w, "first line\nsecond", 17), 17);
  ::close(w);  // no end of file for the reader: it holds a write end itself
  // Whole lines only: "second" waits for its end, or for the close.
  EXPECT_TRUE(
      loop_.runUntil([&] { return readFile(log()) == "first line\n"; }, std::chrono::seconds(5)));
  EXPECT_TRUE(pl.isOpen());
  // Opened again (a new controller): the same FIFO, kept.
  pl.close();
  EXPECT_EQ(readFile(log()), "first line\nsecond");
  FifoLog again(loop_.get(), "pool p", pipe(), log(), kMinLogCap);
  ASSERT_TRUE(again.open().ok());
  struct stat st2;
  ASSERT_EQ(::lstat(pipe().c_str(), &st2), 0);
  EXPECT_EQ(st.st_ino, st2.st_ino);
}

TEST_F(FifoLogTest, AFileInThePlaceOfTheFifoIsReplaced) {
  std::ofstream(pipe()) << "not a fifo";
  FifoLog pl(loop_.get(), "pool p", pipe(), log(), kMinLogCap);
  ASSERT_TRUE(pl.open().ok());
  struct stat st;
  ASSERT_EQ(::lstat(pipe().c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(FifoLogTest, RotatesAtTheCapAndNeverTakesMoreThanTwice) {
  FifoLog pl(loop_.get(), "pool p", pipe(), log(), kMinLogCap);
  std::string line(99, 'x');
  line += '\n';
  for (int i = 0; i < 3000; ++i) pl.append(line);  // 300 KB into a 64 KiB cap
  EXPECT_LE(sizeOf(log()), static_cast<off_t>(kMinLogCap));
  EXPECT_LE(sizeOf(log() + ".1"), static_cast<off_t>(kMinLogCap));
  EXPECT_GT(sizeOf(log() + ".1"), static_cast<off_t>(kMinLogCap) - 100);
  EXPECT_FALSE(std::ifstream(log() + ".2").good());
  EXPECT_EQ(readFile(log()).size() % 100, 0u);  // whole lines: rotated between writes
  // One write bigger than the cap keeps its end only.
  std::string huge(3 * kMinLogCap, 'y');
  huge.back() = 'z';
  pl.append(huge);
  EXPECT_LE(sizeOf(log()), static_cast<off_t>(kMinLogCap));
  EXPECT_EQ(readFile(log()).back(), 'z');
  EXPECT_GT(pl.droppedBytes(), 0u);
}

TEST_F(FifoLogTest, ARotationNeverSplitsALineThatCameInTwoReads) {
  FifoLog pl(loop_.get(), "app a", pipe(), log(), kMinLogCap);
  // Reads cut at 1000 bytes, lines of 61: most reads end inside a line, one of them at
  // the cap.
  std::string text;
  for (int i = 0; i < 1500; ++i) {
    char line[64];
    std::snprintf(line, sizeof(line), "line %04d %s\n", i, std::string(50, 'x').c_str());
    text += line;
  }
  for (size_t at = 0; at < text.size(); at += 1000) {
    pl.copyLines(std::string_view(text).substr(at, 1000));
  }
  std::string both = readFile(log() + ".1") + readFile(log());
  EXPECT_EQ(both, text);
  EXPECT_EQ(readFile(log() + ".1").back(), '\n');
  EXPECT_LE(sizeOf(log() + ".1"), static_cast<off_t>(kMinLogCap));
}

TEST_F(FifoLogTest, AnUnfinishedLineWaitsForItsEndOrADrain) {
  FifoLog pl(loop_.get(), "app a", pipe(), log(), kMinLogCap);
  ASSERT_TRUE(pl.open().ok());
  pl.copyLines("one\ntw");
  EXPECT_EQ(readFile(log()), "one\n");
  pl.copyLines("o\nthr");
  EXPECT_EQ(readFile(log()), "one\ntwo\n");
  pl.drain();  // the child is gone: its last words without a newline are kept too
  EXPECT_EQ(readFile(log()), "one\ntwo\nthr");
  // A line longer than what is held is copied in pieces rather than waiting forever.
  pl.copyLines(std::string(kMaxHeldLine + 1, 'l'));
  EXPECT_EQ(readFile(log()).size(), 11 + kMaxHeldLine + 1);
}

TEST_F(FifoLogTest, ACapBelowTheMinimumIsRaisedToIt) {
  FifoLog pl(loop_.get(), "pool p", pipe(), log(), 10);
  pl.append(std::string(1000, 'a'));
  EXPECT_EQ(sizeOf(log()), 1000);
  EXPECT_FALSE(std::ifstream(log() + ".1").good());
}

TEST_F(FifoLogTest, AppendsToALogLeftBeforeAndCountsItsSize) {
  std::ofstream(log()) << std::string(kMinLogCap - 10, 'o');
  FifoLog pl(loop_.get(), "pool p", pipe(), log(), kMinLogCap);
  pl.append("twenty bytes of text");
  EXPECT_EQ(readFile(log()), "twenty bytes of text");
  EXPECT_EQ(sizeOf(log() + ".1"), static_cast<off_t>(kMinLogCap - 10));
}

TEST(ReadFileTail, ReadsOnlyTheEndFromALineStart) {
  scalws::testing::TempDir dir;
  std::string path = dir.file("big.log");
  {
    std::ofstream out(path);
    for (int i = 0; i < 100000; ++i) out << "line " << i << "\n";
  }
  std::string tail = readFileTail(path, 30);
  EXPECT_LE(tail.size(), 30u);
  EXPECT_EQ(tail, "line 99998\nline 99999\n");
  EXPECT_EQ(readFileTail(dir.file("missing"), 30), "");
  std::ofstream(dir.file("small")) << "a\nb\n";
  EXPECT_EQ(readFileTail(dir.file("small"), 30), "a\nb\n");
  ::mkfifo(dir.file("fifo").c_str(), 0600);
  EXPECT_EQ(readFileTail(dir.file("fifo"), 30), "");  // never blocks on a FIFO
}

}  // namespace
}  // namespace scalws::controller
