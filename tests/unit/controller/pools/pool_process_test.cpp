// PoolProcess against a stand-in for php-fpm: a small script that, like php-fpm, reads
// `listen` and `pid` from the config given with -y, listens there, writes its pid, forks a
// "child" into its process group and stops on SIGQUIT. It runs under php-fpm's master
// title so adoption can be tested too. (The real php-fpm is driven by
// tests/integration/test_controller_pools.py.)
#include "controller/pools/pool_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/support/test_files.h"
#include "tests/unit/controller/temp_dir.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using common::Status;

constexpr const char* kFakeScript = R"py(
import os, re, signal, socket, sys, time
child = 0
def quit(*_):
    if child:
        os.kill(child, signal.SIGKILL)
    sys.exit(0)
signal.signal(signal.SIGQUIT, quit)
conf = sys.argv[sys.argv.index("-y") + 1]
text = open(conf).read()
def value(key):
    return re.search(r'^' + re.escape(key) + r' = "(.*)"$', text, re.M).group(1)
def write(path, data):
    open(path + ".tmp", "w").write(data)
    os.rename(path + ".tmp", path)
here = os.path.dirname(conf)
if os.path.exists(os.path.join(here, "spam")):
    for i in range(3000):  # 300 KB, like PHP writing warnings without end
        sys.stderr.write("%098d\n" % i)
    sys.stderr.flush()
if os.path.exists(os.path.join(here, "fail")):
    sys.stderr.write("ERROR: [pool test] cannot get uid for user 'nosuch'\n")
    sys.stderr.write("ERROR: FPM initialization failed\n")
    sys.exit(78)
write(value("pid"), str(os.getpid()))
child = os.fork()
if child == 0:
    write(os.path.join(here, "child.pid"), str(os.getpid()))
    while True:
        time.sleep(1)
# Up once it accepts: everything above is done by then.
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(value("listen"))
s.listen(16)
while True:
    time.sleep(1)
)py";

using ::scalws::testing::readFile;

void writeFile(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}

bool gone(pid_t pid) {
  std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && stat.substr(paren + 2, 1) == "Z";
}

class PoolProcessTest : public ::testing::Test {
 protected:
  PoolProcessTest() {
    writeFile(dir_.file("fake.py"), kFakeScript);
    paths_ = PoolPaths{dir_.file("php-fpm.conf"), dir_.file("php-fpm.pid"),
                       dir_.file("php-fpm.log"), dir_.file("php-fpm.pipe"), dir_.file("pool.sock")};
    // The master's title, as php-fpm sets it: what adoption recognises.
    writeFile(dir_.file("php-fpm"),
              "#!/bin/bash\nexec -a \"php-fpm: master process (" + paths_.config +
                  ")\" /usr/bin/python3 " + dir_.file("fake.py") + " \"$@\"\n",
              0755);
    limits_.first_backoff_ms = 20;
    limits_.max_backoff_ms = 50;
  }
  ~PoolProcessTest() override {
    // A test that failed half-way may have left its stand-in running: not past the test.
    pid_t left = PoolProcess::findOurMaster(paths_);
    if (left > 0) ::kill(-left, SIGKILL);
  }

  std::unique_ptr<PoolProcess> make() {
    PoolProcess::Hooks hooks;
    hooks.prepare = [this] {
      ++prepared_;
      writeFile(paths_.config,
                "listen = \"" + paths_.socket + "\"\npid = \"" + paths_.pid + "\"\n");
      return Status();
    };
    hooks.on_running = [this] { ++running_; };
    hooks.on_event = [this](std::string_view kind, const std::string& message) {
      events_.push_back(std::string(kind) + ": " + message);
    };
    return std::make_unique<PoolProcess>(loop_.get(), "test", paths_, dir_.file("php-fpm"), limits_,
                                         std::move(hooks), log_cap_);
  }

  // Runs `op` with a Done and waits for it.
  Status await(const std::function<void(PoolProcess::Done)>& op) {
    std::optional<Status> result;
    op([&](const Status& s) { result = s; });
    EXPECT_TRUE(loop_.runUntil([&] { return result.has_value(); }, std::chrono::seconds(10)));
    return result.value_or(Status(common::StatusCode::kTimeout, "no answer"));
  }

  void stopAndWait(PoolProcess& p) {
    EXPECT_TRUE(await([&](PoolProcess::Done d) { p.stop(std::move(d)); }).ok());
  }

  pid_t childPid() { return static_cast<pid_t>(std::stol(readFile(dir_.file("child.pid")))); }

  scalws::testing::TempDir dir_;
  ipc::testing::TestLoop loop_;
  PoolPaths paths_;
  RestartLimits limits_;
  uint64_t log_cap_ = kDefaultPoolLogCap;
  int prepared_ = 0;
  int running_ = 0;
  std::vector<std::string> events_;
};

TEST_F(PoolProcessTest, StartsAndIsReadyOnceItAccepts) {
  auto p = make();
  ASSERT_TRUE(await([&](PoolProcess::Done d) { p->startOnce(std::move(d)); }).ok());
  EXPECT_EQ(p->state(), PoolProcess::State::kRunning);
  EXPECT_GT(p->pid(), 0);
  EXPECT_EQ(prepared_, 1);
  EXPECT_EQ(running_, 1);
  EXPECT_EQ(PoolProcess::findOurMaster(paths_), p->pid());
  EXPECT_EQ(p->status()["state"], "running");
  stopAndWait(*p);
  EXPECT_EQ(p->state(), PoolProcess::State::kStopped);
  EXPECT_NE(::access(paths_.socket.c_str(), F_OK), 0);  // its socket goes with it
  EXPECT_TRUE(events_.empty());
}

TEST_F(PoolProcessTest, AFirstStartThatFailsSaysWhyAndLeavesNothing) {
  writeFile(dir_.file("fail"), "");
  auto p = make();
  Status started = await([&](PoolProcess::Done d) { p->startOnce(std::move(d)); });
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.message().find("exited with status 78"), std::string::npos)
      << started.message();
  EXPECT_NE(started.message().find("FPM initialization failed"), std::string::npos)
      << started.message();
  EXPECT_EQ(p->state(), PoolProcess::State::kStopped);
  EXPECT_EQ(p->pid(), 0);
  loop_.spin();
  EXPECT_EQ(prepared_, 1);  // not retried
}

TEST_F(PoolProcessTest, WhatTheMasterWritesGoesToACappedRotatedLog) {
  writeFile(dir_.file("spam"), "");
  log_cap_ = kMinLogCap;
  auto p = make();
  ASSERT_TRUE(await([&](PoolProcess::Done d) { p->startOnce(std::move(d)); }).ok());
  struct stat st;
  ASSERT_TRUE(loop_.runUntil(
      [&] {
        return ::stat(paths_.log.c_str(), &st) == 0 &&
               readFile(paths_.log).find("00000000002999\n") != std::string::npos;
      },
      std::chrono::seconds(10)));
  EXPECT_LE(st.st_size, static_cast<off_t>(kMinLogCap));
  ASSERT_EQ(::stat((paths_.log + ".1").c_str(), &st), 0);
  EXPECT_LE(st.st_size, static_cast<off_t>(kMinLogCap));
  EXPECT_EQ(::stat((paths_.log + ".2").c_str(), &st), -1);
  ASSERT_EQ(::lstat(paths_.pipe.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  stopAndWait(*p);
}

TEST_F(PoolProcessTest, AKilledMasterIsRestartedAndItsChildrenGoWithIt) {
  auto p = make();
  ASSERT_TRUE(await([&](PoolProcess::Done d) { p->startOnce(std::move(d)); }).ok());
  ASSERT_TRUE(loop_.runUntil([&] { return ::access(dir_.file("child.pid").c_str(), F_OK) == 0; }));
  pid_t first = p->pid();
  pid_t orphan = childPid();
  ::unlink(dir_.file("child.pid").c_str());
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(loop_.runUntil(
      [&] { return p->state() == PoolProcess::State::kRunning && p->pid() != first; },
      std::chrono::seconds(10)));
  EXPECT_EQ(p->status()["restarts"], 1);
  EXPECT_NE(p->status()["last_exit"].get<std::string>().find("SIGKILL"), std::string::npos);
  EXPECT_EQ(running_, 2);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].rfind("pool.exited: pool test: php-fpm (pid ", 0), 0u) << events_[0];
  EXPECT_TRUE(loop_.runUntil([&] { return gone(orphan); })) << "the old child still runs";
  stopAndWait(*p);
}

TEST_F(PoolProcessTest, ASupervisedPoolKeepsTryingUntilItStarts) {
  writeFile(dir_.file("fail"), "");
  auto p = make();
  Status first = await([&](PoolProcess::Done d) { p->supervise(std::move(d)); });
  EXPECT_FALSE(first.ok());
  ASSERT_TRUE(loop_.runUntil([&] { return prepared_ >= 2; }));  // retried
  ::unlink(dir_.file("fail").c_str());
  ASSERT_TRUE(loop_.runUntil([&] { return p->state() == PoolProcess::State::kRunning; },
                             std::chrono::seconds(10)));
  EXPECT_GE(p->status()["restarts"].get<int>(), 1);
  stopAndWait(*p);
}

TEST_F(PoolProcessTest, ANewControllerAdoptsTheMasterLeftRunning) {
  auto first = make();
  ASSERT_TRUE(await([&](PoolProcess::Done d) { first->startOnce(std::move(d)); }).ok());
  pid_t pid = first->pid();
  first->leave();
  first.reset();
  loop_.spin();
  ASSERT_FALSE(gone(pid));  // left serving

  auto second = make();
  ASSERT_TRUE(await([&](PoolProcess::Done d) { second->supervise(std::move(d)); }).ok());
  EXPECT_EQ(second->pid(), pid);
  EXPECT_EQ(second->status()["adopted"], true);
  EXPECT_EQ(prepared_, 1);  // adopted, not started again
  stopAndWait(*second);
  EXPECT_TRUE(loop_.runUntil([&] { return gone(pid); }));
}

TEST_F(PoolProcessTest, AStaleMasterTitleIsNotAdopted) {
  writeFile(paths_.pid, std::to_string(::getpid()));  // alive, but not php-fpm
  EXPECT_EQ(PoolProcess::findOurMaster(paths_), 0);
  auto p = make();
  ASSERT_TRUE(await([&](PoolProcess::Done d) { p->supervise(std::move(d)); }).ok());
  EXPECT_NE(p->pid(), ::getpid());
  EXPECT_EQ(p->status()["adopted"], false);
  stopAndWait(*p);
}

}  // namespace
}  // namespace scalws::controller
