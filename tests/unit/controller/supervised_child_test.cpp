// SupervisedChild driving a real child: a small python3 service that forks a "worker" into
// its process group, writes to a log and listens on a Unix socket, with files in its
// directory saying how it should misbehave. (AppProcess and PoolProcess, which build on it,
// are driven with their real programs by the integration tests and pool_process_test.)
#include "controller/supervised_child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <optional>

#include "controller/fifo_log.h"
#include "tests/support/test_files.h"
#include "tests/unit/controller/temp_dir.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using common::Status;
using common::StatusCode;
using ::scalws::testing::readFile;

constexpr const char* kService = R"py(
import os, signal, socket, sys, time
here, sock = sys.argv[1], sys.argv[2]
log = open(os.path.join(here, "service.log"), "a")
def flag(name):
    return os.path.exists(os.path.join(here, name))
def term(*_):
    open(os.path.join(here, "got-term"), "w").close()
    if not flag("stubborn"):
        sys.exit(0)
signal.signal(signal.SIGTERM, term)
if flag("fail"):
    log.write("starting\nERROR: no config\ngiving up\n")
    log.flush()
    sys.exit(3)
# A mute service's worker was forked before python started (see make()).
if not flag("mute") and os.fork() == 0:
    with open(os.path.join(here, "worker.pid.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(here, "worker.pid.tmp"), os.path.join(here, "worker.pid"))
    while True:
        time.sleep(1)
if not flag("mute"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(sock)
    s.listen(16)
while True:
    time.sleep(1)
)py";

// In the forked child of a possibly threaded test: only async-signal-safe calls.
void forkIdleWorker(const char* tmp, const char* file) {
  pid_t worker = ::fork();
  if (worker == 0) {
    for (;;) ::pause();
  }
  if (worker < 0) ::_exit(126);
  char text[16];
  auto [end, ec] = std::to_chars(text, text + sizeof text, worker);
  int fd = ::open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ::write(fd, text, end - text) != end - text || ::close(fd) != 0 ||
      ::rename(tmp, file) != 0) {
    ::_exit(126);
  }
}

bool gone(pid_t pid) {
  std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && stat.substr(paren + 2, 1) == "Z";
}

class SupervisedChildTest : public ::testing::Test {
 protected:
  SupervisedChildTest() {
    std::ofstream(dir_.file("service.py")) << kService;
    config_.who = "service test";
    config_.event_kind = "service";
    config_.error_prefix = "service test";
    config_.stopped_message = "service test was stopped";
    config_.socket = dir_.file("service.sock");
    config_.pid_file = dir_.file("service.pid");
    config_.ready_timeout_ms = 5'000;
    config_.stop_grace_ms = 5'000;
    config_.gives_up = true;
    limits_.first_backoff_ms = 20;
    limits_.max_backoff_ms = 50;
  }
  ~SupervisedChildTest() override {
    // A test that failed half-way may have left its service running: not past the test.
    for (pid_t pid : launched_) ::kill(-pid, SIGKILL);
    std::string worker = readFile(dir_.file("worker.pid"));
    if (!worker.empty()) ::kill(std::stoi(worker), SIGKILL);
  }

  void flag(const char* name, bool on = true) {
    if (on) {
      std::ofstream(dir_.file(name)).flush();
    } else {
      ::unlink(dir_.file(name).c_str());
    }
  }

  std::unique_ptr<SupervisedChild> make() {
    SupervisedChild::Hooks hooks;
    hooks.launch = [this]() -> common::Result<pid_t> {
      ++launches_;
      if (refuse_launch_) return Status(StatusCode::kFailedPrecondition, "no binary");
      // A mute service is killed when the readiness window closes, and python's start-up
      // on a loaded machine can take longer than that: its worker is forked here, before
      // python runs, so the group kill always has one to end.
      bool early_worker = exists(dir_.file("mute"));
      std::string worker_tmp = dir_.file("worker.pid.tmp");
      std::string worker_file = dir_.file("worker.pid");
      pid_t pid = ::fork();
      if (pid < 0) return common::errnoStatus(errno, "fork");
      if (pid == 0) {
        ::setsid();
        if (early_worker) forkIdleWorker(worker_tmp.c_str(), worker_file.c_str());
        ::execl("/usr/bin/python3", "python3", dir_.file("service.py").c_str(), dir_.path().c_str(),
                config_.socket.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      launched_.push_back(pid);
      return pid;
    };
    hooks.adoptable = [this]() -> pid_t {
      std::string text = readFile(config_.pid_file);
      if (text.empty()) return 0;
      pid_t pid = std::stoi(text);
      return gone(pid) ? 0 : pid;
    };
    hooks.on_started = [this] { ++started_; };
    hooks.on_running = [this] { ++running_; };
    hooks.log_tail = [this](bool was_starting) -> std::string {
      return was_starting ? lastLogLines(dir_.file("service.log"), 600) : "";
    };
    hooks.on_event = [this](std::string_view kind, const std::string& message) {
      events_.push_back(std::string(kind) + ": " + message);
    };
    return std::make_unique<SupervisedChild>(loop_.get(), config_, limits_, std::move(hooks));
  }

  Status await(const std::function<void(SupervisedChild::Done)>& op) {
    std::optional<Status> result;
    op([&](const Status& s) { result = s; });
    EXPECT_TRUE(loop_.runUntil([&] { return result.has_value(); }, std::chrono::seconds(10)));
    return result.value_or(Status(StatusCode::kTimeout, "no answer"));
  }
  Status start(SupervisedChild& c, bool adopt = false) {
    return await([&](SupervisedChild::Done d) { c.start(adopt, std::move(d)); });
  }
  void stopAndWait(SupervisedChild& c) {
    EXPECT_TRUE(await([&](SupervisedChild::Done d) { c.stop(std::move(d)); }).ok());
  }
  // The worker's pid, or -1 (a failure) if it never wrote one.
  pid_t workerPid() {
    bool written = loop_.runUntil([&] { return !readFile(dir_.file("worker.pid")).empty(); });
    EXPECT_TRUE(written) << "no worker.pid";
    if (!written) return -1;
    pid_t pid = std::stoi(readFile(dir_.file("worker.pid")));
    ::unlink(dir_.file("worker.pid").c_str());
    return pid;
  }
  bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

  scalws::testing::TempDir dir_;
  ipc::testing::TestLoop loop_;
  SupervisedChildConfig config_;
  RestartLimits limits_;
  bool refuse_launch_ = false;
  int launches_ = 0;
  int started_ = 0;
  int running_ = 0;
  std::vector<pid_t> launched_;
  std::vector<std::string> events_;
};

TEST_F(SupervisedChildTest, RunsOnceItAcceptsAndStopsWithTheGracefulSignal) {
  auto c = make();
  EXPECT_EQ(c->stateName(), "stopped");
  ASSERT_TRUE(start(*c).ok());
  EXPECT_EQ(c->state(), SupervisedChild::State::kRunning);
  EXPECT_EQ(c->stateName(), "running");
  EXPECT_EQ(readFile(config_.pid_file), std::to_string(c->pid()) + "\n");
  ipc::Json status = c->status();
  EXPECT_EQ(status["state"], "running");
  EXPECT_EQ(status["pid"], c->pid());
  EXPECT_EQ(status["restarts"], 0);
  EXPECT_EQ(status["adopted"], false);
  EXPECT_GT(status["started_ms"].get<int64_t>(), 0);
  EXPECT_EQ(started_, 1);
  EXPECT_EQ(running_, 1);
  pid_t worker = workerPid();

  stopAndWait(*c);
  EXPECT_EQ(c->state(), SupervisedChild::State::kStopped);
  EXPECT_EQ(c->pid(), 0);
  EXPECT_TRUE(exists(dir_.file("got-term")));  // asked, not killed
  EXPECT_FALSE(exists(config_.socket));
  EXPECT_FALSE(exists(config_.pid_file));
  EXPECT_TRUE(loop_.runUntil([&] { return gone(worker); })) << "its group outlived it";
  EXPECT_TRUE(events_.empty());
}

TEST_F(SupervisedChildTest, AStopItIgnoresEndsWithSigkillAfterTheGrace) {
  flag("stubborn");
  config_.stop_grace_ms = 200;
  auto c = make();
  ASSERT_TRUE(start(*c).ok());
  pid_t worker = workerPid();
  stopAndWait(*c);
  EXPECT_TRUE(exists(dir_.file("got-term")));
  EXPECT_EQ(c->state(), SupervisedChild::State::kStopped);
  EXPECT_TRUE(loop_.runUntil([&] { return gone(worker); }));
}

TEST_F(SupervisedChildTest, AFirstStartThatFailsSaysWhyWithTheEndOfItsLog) {
  flag("fail");
  auto c = make();
  Status started = start(*c);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(started.message().rfind("service test: pid ", 0), 0u) << started.message();
  EXPECT_NE(started.message().find("exited with status 3; its log ends with: "
                                   "starting|ERROR: no config|giving up"),
            std::string::npos)
      << started.message();
  EXPECT_EQ(c->state(), SupervisedChild::State::kFailed);
  EXPECT_EQ(c->stateName(), "failed");
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].rfind("service.failed: service test did not start: pid ", 0), 0u)
      << events_[0];
  loop_.spin();
  EXPECT_EQ(launches_, 1);  // not retried
}

TEST_F(SupervisedChildTest, WithoutGivingUpAFailedFirstStartLeavesItStopped) {
  config_.gives_up = false;
  refuse_launch_ = true;
  auto c = make();
  Status started = start(*c);
  EXPECT_EQ(started.message(), "service test: no binary");
  EXPECT_EQ(c->state(), SupervisedChild::State::kStopped);
  EXPECT_EQ(c->status()["last_exit"], "no binary");
  EXPECT_TRUE(events_.empty());
}

TEST_F(SupervisedChildTest, NotAcceptingInTimeKillsItsGroup) {
  flag("mute");
  config_.ready_timeout_ms = 1'000;  // its worker runs before python starts (make())
  auto c = make();
  Status started = start(*c);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.message().find("killed by signal 9"), std::string::npos) << started.message();
  EXPECT_NE(started.message().find(": did not accept on " + config_.socket + " within 1 s"),
            std::string::npos)
      << started.message();
  pid_t worker = workerPid();
  ASSERT_GT(worker, 0);
  EXPECT_TRUE(loop_.runUntil([&] { return gone(worker); }));
}

TEST_F(SupervisedChildTest, AnExitItDidNotAskForIsRestartedAfterTheBackoff) {
  auto c = make();
  ASSERT_TRUE(start(*c).ok());
  pid_t first = c->pid();
  pid_t worker = workerPid();
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(loop_.runUntil(
      [&] { return c->state() == SupervisedChild::State::kRunning && c->pid() != first; },
      std::chrono::seconds(10)));
  EXPECT_TRUE(loop_.runUntil([&] { return gone(worker); })) << "the old worker still runs";
  ipc::Json status = c->status();
  EXPECT_EQ(status["restarts"], 1);
  EXPECT_EQ(status["last_exit"], "pid " + std::to_string(first) + " killed by signal 9 (SIGKILL)");
  EXPECT_EQ(running_, 2);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].rfind("service.exited: service test: pid " + std::to_string(first), 0), 0u)
      << events_[0];
  EXPECT_NE(events_[0].find("; restarting in 20 ms"), std::string::npos) << events_[0];
  stopAndWait(*c);
}

TEST_F(SupervisedChildTest, GivesUpAtTheCrashLimit) {
  limits_.crash_limit = 3;
  auto c = make();
  ASSERT_TRUE(start(*c).ok());
  flag("fail");
  ::kill(c->pid(), SIGKILL);
  ASSERT_TRUE(loop_.runUntil([&] { return c->state() == SupervisedChild::State::kFailed; },
                             std::chrono::seconds(10)));
  EXPECT_EQ(launches_, 3);
  std::string last = c->status()["last_exit"];
  EXPECT_EQ(last.rfind("crash loop: 3 exits in a row, the last: pid ", 0), 0u) << last;
  ASSERT_FALSE(events_.empty());
  EXPECT_EQ(events_.back().rfind("service.failed: service test failed: crash loop", 0), 0u)
      << events_.back();
  // A new start tries again.
  flag("fail", false);
  ASSERT_TRUE(start(*c).ok());
  stopAndWait(*c);
}

TEST_F(SupervisedChildTest, WithoutGivingUpItRestartsForEverAndAnswersTheWaitingStart) {
  config_.gives_up = false;
  limits_.crash_limit = 2;
  // The waiting start is answered on the loop's next turn after the exit; when a loaded
  // machine holds the loop longer than the backoff, the restart is due in that same turn
  // and the state below would read "starting". A backoff no stall reaches keeps them apart.
  limits_.first_backoff_ms = 300;
  limits_.max_backoff_ms = 300;
  flag("fail");
  auto c = make();
  c->setSupervised(true);
  Status first = start(*c);
  EXPECT_EQ(first.code(), StatusCode::kUnavailable);
  EXPECT_EQ(first.message().rfind("service test: pid ", 0), 0u) << first.message();
  EXPECT_EQ(c->state(), SupervisedChild::State::kBackoff);
  EXPECT_EQ(c->stateName(), "restarting");
  ASSERT_TRUE(loop_.runUntil([&] { return launches_ >= 5; }, std::chrono::seconds(10)));
  EXPECT_NE(c->state(), SupervisedChild::State::kFailed);
  flag("fail", false);
  ASSERT_TRUE(loop_.runUntil([&] { return c->state() == SupervisedChild::State::kRunning; },
                             std::chrono::seconds(10)));
  EXPECT_GE(c->status()["restarts"].get<int>(), 4);
  stopAndWait(*c);
}

TEST_F(SupervisedChildTest, AStopDuringTheBackoffCancelsTheRestart) {
  config_.gives_up = false;
  limits_.first_backoff_ms = 60'000;
  limits_.max_backoff_ms = 60'000;
  auto c = make();
  ASSERT_TRUE(start(*c).ok());
  ::kill(c->pid(), SIGKILL);
  ASSERT_TRUE(loop_.runUntil([&] { return c->state() == SupervisedChild::State::kBackoff; }));
  std::optional<uint64_t> in = c->restartInMs();
  ASSERT_TRUE(in.has_value());
  EXPECT_GT(*in, 50'000u);
  stopAndWait(*c);
  EXPECT_EQ(c->state(), SupervisedChild::State::kStopped);
  EXPECT_FALSE(c->restartInMs().has_value());
  EXPECT_EQ(launches_, 1);
}

TEST_F(SupervisedChildTest, AdoptsTheProcessALeftChildStillRuns) {
  auto first = make();
  ASSERT_TRUE(start(*first).ok());
  pid_t pid = first->pid();
  first->leave();
  first.reset();
  loop_.spin();
  ASSERT_FALSE(gone(pid));  // left running

  auto second = make();
  ASSERT_TRUE(start(*second, true).ok());
  EXPECT_EQ(second->pid(), pid);
  EXPECT_TRUE(second->adopted());
  EXPECT_EQ(second->status()["adopted"], true);
  EXPECT_EQ(launches_, 1);  // adopted, not started again
  EXPECT_EQ(started_, 2);
  stopAndWait(*second);
  // Not our child: its exit is seen through the pidfd all the same.
  EXPECT_TRUE(loop_.runUntil([&] { return gone(pid); }));
  EXPECT_FALSE(exists(config_.pid_file));
}

TEST_F(SupervisedChildTest, AStopBeforeItAcceptsAnswersTheWaitingStart) {
  flag("mute");
  auto c = make();
  std::optional<Status> first;
  c->start(false, [&](const Status& s) { first = s; });
  ASSERT_TRUE(loop_.runUntil([&] { return c->state() == SupervisedChild::State::kStarting; }));
  stopAndWait(*c);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->code(), StatusCode::kUnavailable);
  EXPECT_EQ(first->message(), "service test was stopped");
}

}  // namespace
}  // namespace scalws::controller
