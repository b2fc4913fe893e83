// WorkerProcess, the controller's side of one worker. The conversation is driven over a
// socketpair by a test-side endpoint playing the worker, with a child that only sleeps as
// the process (its pidfd tells the exit); the attach path uses the stand-in worker
// (tests/tools/stand_in_worker.cpp), which /proc takes for a scalwsd.
#include "controller/instances/worker_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "controller/instances/worker_probe.h"
#include "ipc/unix_socket.h"
#include "tests/unit/controller/worker_stand_in.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using common::Result;
using common::Status;
using common::UniqueFd;
using ipc::Json;

ipc::WorkerSettings settings() {
  ipc::WorkerSettings s;
  s.instance = "web";
  s.slot = 0;
  s.loops = 1;
  s.cpus = common::CpuSet{0};
  s.user = "nobody";
  s.config = "[[listen]]\naddress = \"127.0.0.1:8080\"\n";
  s.config_path = "/etc/scalws/web.toml";
  return s;
}

// What the owner of a WorkerProcess hears.
struct Heard {
  std::optional<Status> ready;
  std::optional<std::string> exit;
  std::vector<common::metrics::MetricsSnapshot> metrics;
  int hellos = 0;

  WorkerProcess::Callbacks callbacks() {
    WorkerProcess::Callbacks cb;
    cb.on_ready = [this](WorkerProcess&, const Status& s) { ready = s; };
    cb.on_exit = [this](WorkerProcess&, const std::string& how) { exit = how; };
    cb.on_hello = [this](WorkerProcess&) { ++hellos; };
    cb.on_metrics = [this](WorkerProcess&, ipc::MetricsArgs&& m) { metrics.push_back(m.metrics); };
    return cb;
  }
};

// A test playing the worker: a sleeping child as its process, the test's end of the
// socketpair as its channel.
class WorkerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ = testing::forkSleeper();
    auto pair = testing::workerChannel(loop_.get());
    ASSERT_TRUE(pair.ok());
    worker_ = std::move(pair->worker_end);
    auto on = [this](const char* op) {
      return worker_->registerHandler(
          op, [this, op](const ipc::Message& m, std::vector<UniqueFd> fds, ipc::Replier r) {
            received_.push_back({op, m.args});
            fds_ += fds.size();
            if (refuse_ == op) return r.fail(ipc::errc::kInvalidArgument, "not this");
            r.ok();
          });
    };
    for (const char* op : {"config", "listeners", "reload", "stop"}) ASSERT_TRUE(on(op).ok());
    Result<UniqueFd> pidfd = openPidfd(child_);
    ASSERT_TRUE(pidfd.ok());
    channel_ = std::move(pair->controller_end);
    pidfd_ = std::move(*pidfd);
  }
  void TearDown() override {
    process_.reset();
    worker_.reset();
    if (child_ > 0 && ::kill(child_, SIGKILL) == 0) ::waitpid(child_, nullptr, 0);
    loop_.spin(5);
  }

  void start(uint64_t ready_timeout_ms = kReadyTimeoutMs) {
    WorkerLaunch launch;
    launch.settings = settings();
    launch.tls_ticket_secret = std::string(32, 'k');
    launch.ready_timeout_ms = ready_timeout_ms;
    SlotListeners listeners;
    listeners.specs.push_back({0, "127.0.0.1:8080", 8080, false});
    listeners.fds.emplace_back(::dup(0));
    auto w = WorkerProcess::converse(
        loop_.get(), SpawnedWorker{child_, std::move(pidfd_), std::move(channel_), UniqueFd()},
        std::move(launch), std::move(listeners), heard_.callbacks());
    ASSERT_TRUE(w.ok()) << w.status().message();
    process_ = std::move(*w);
  }

  void request(const char* op, Json args) {
    ASSERT_TRUE(worker_->request(op, std::move(args), {}, [](Result<Json>) {}).ok());
  }

  // hello -> config -> listeners -> ready.
  void handshake(bool started = false) {
    if (!started) start();
    request("hello", ipc::HelloArgs{child_, "web", "00ab", std::nullopt}.encode());
    ASSERT_TRUE(loop_.runUntil([&] { return received_.size() == 2; }));
    ipc::ReadyArgs ready;
    ready.ok = true;
    ready.pid = child_;
    ready.loops = 1;
    ready.sandbox.no_new_privs = true;
    request("ready", ready.encode());
    ASSERT_TRUE(loop_.runUntil([&] { return heard_.ready.has_value(); }));
  }

  ipc::testing::TestLoop loop_;
  pid_t child_ = -1;
  UniqueFd channel_;
  UniqueFd pidfd_;
  std::unique_ptr<ipc::Endpoint> worker_;
  std::unique_ptr<WorkerProcess> process_;
  std::vector<std::pair<std::string, Json>> received_;
  size_t fds_ = 0;
  std::string refuse_;
  Heard heard_;
};

TEST_F(WorkerProcessTest, HandshakeSendsWhatTheLaunchSaysAndReportsReady) {
  handshake();
  ASSERT_TRUE(heard_.ready->ok()) << heard_.ready->message();
  EXPECT_EQ(heard_.hellos, 1);
  EXPECT_EQ(process_->attachAddress(), "00ab");
  EXPECT_EQ(process_->state(), WorkerProcess::State::kReady);
  ASSERT_EQ(received_[0].first, "config");
  Result<ipc::ConfigArgs> config = ipc::ConfigArgs::decode(received_[0].second);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->settings, settings());
  EXPECT_EQ(config->tls_ticket_secret, std::string(32, 'k'));
  EXPECT_EQ(config->controller_uid, ::geteuid());
  EXPECT_EQ(received_[1].first, "listeners");
  EXPECT_EQ(fds_, 1u);
  ASSERT_TRUE(process_->sandbox().has_value());
  EXPECT_TRUE(process_->sandbox()->no_new_privs);
}

TEST_F(WorkerProcessTest, MetricsAfterReadyOnlyAndWellFormedOnly) {
  start();
  ipc::MetricsArgs m;
  m.pid = child_;
  m.metrics.bytes_in = 5;
  ASSERT_TRUE(worker_->notify("metrics", m.encode()).ok());  // before ready: dropped
  loop_.spin(10);
  EXPECT_TRUE(heard_.metrics.empty());
  handshake(true);
  ASSERT_TRUE(worker_->notify("metrics", m.encode()).ok());
  Json broken = m.encode();
  broken["metrics"].erase("bytes_in");
  ASSERT_TRUE(worker_->notify("metrics", broken).ok());
  ASSERT_TRUE(worker_->notify("metrics", m.encode()).ok());
  ASSERT_TRUE(loop_.runUntil([&] { return heard_.metrics.size() == 2; }));
  EXPECT_EQ(heard_.metrics[0].bytes_in, 5u);
}

TEST_F(WorkerProcessTest, MetricsFloodsAndOversizedMetricsAreDropped) {
  handshake();
  ipc::MetricsArgs m;
  m.pid = child_;
  m.metrics.bytes_in = 7;
  Json big = m.encode();
  big["padding"] = std::string(kMaxMetricsBytes, 'x');
  ASSERT_TRUE(worker_->notify("metrics", big).ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(worker_->notify("metrics", m.encode()).ok());
  // Frames are handled in order: the answer to this (a refused second hello) comes after
  // every notification above was.
  bool fenced = false;
  ASSERT_TRUE(worker_
                  ->request("hello", ipc::HelloArgs{child_, "web", "00ab", std::nullopt}.encode(),
                            {}, [&](Result<Json>) { fenced = true; })
                  .ok());
  ASSERT_TRUE(loop_.runUntil([&] { return fenced; }));
  // The burst, and what the rate allows over the few ms this took; never the flood.
  EXPECT_GE(heard_.metrics.size(), static_cast<size_t>(kMetricsBurst));
  EXPECT_LT(heard_.metrics.size(), 50u);
  for (const auto& s : heard_.metrics) EXPECT_EQ(s.bytes_in, 7u);
}

TEST_F(WorkerProcessTest, AHelloAsAnotherInstanceFailsTheStartAndKillsIt) {
  start();
  request("hello", ipc::HelloArgs{child_, "api", "", std::nullopt}.encode());
  ASSERT_TRUE(loop_.runUntil([&] { return heard_.exit.has_value(); }));
  ASSERT_TRUE(heard_.ready.has_value());
  EXPECT_FALSE(heard_.ready->ok());
  EXPECT_NE(heard_.ready->message().find("another instance"), std::string::npos);
  EXPECT_NE(heard_.exit->find("SIGKILL"), std::string::npos) << *heard_.exit;
  child_ = -1;  // reaped by the WorkerProcess
  EXPECT_TRUE(received_.empty());
}

TEST_F(WorkerProcessTest, ARefusedConfigOrAMalformedReadyFailsTheStart) {
  refuse_ = "config";
  start();
  request("hello", ipc::HelloArgs{child_, "web", "", std::nullopt}.encode());
  ASSERT_TRUE(loop_.runUntil([&] { return heard_.ready.has_value(); }));
  EXPECT_NE(heard_.ready->message().find("refused its config: not this"), std::string::npos);
  EXPECT_EQ(received_.size(), 1u);  // no listeners after a refused config
}

TEST_F(WorkerProcessTest, AMalformedReadyFailsTheStart) {
  start();
  request("hello", ipc::HelloArgs{child_, "web", "", std::nullopt}.encode());
  ASSERT_TRUE(loop_.runUntil([&] { return received_.size() == 2; }));
  request("ready", {{"ok", true}, {"pid", child_}, {"loops", "one"}});
  ASSERT_TRUE(loop_.runUntil([&] { return heard_.ready.has_value(); }));
  EXPECT_NE(heard_.ready->message().find("malformed ready"), std::string::npos)
      << heard_.ready->message();
}

TEST_F(WorkerProcessTest, NotReadyInTimeIsKilled) {
  start(100);
  ASSERT_TRUE(loop_.runUntil([&] { return heard_.exit.has_value(); }));
  child_ = -1;
  EXPECT_NE(heard_.ready->message().find("not ready within"), std::string::npos);
}

TEST_F(WorkerProcessTest, ReloadUpdatesWhatItRunsOnlyWhenTaken) {
  handshake();
  std::optional<Status> done;
  process_->reload(ipc::ReloadArgs{"x = 1", "/etc/scalws/web.toml", {}, {}},
                   [&](const Status& s) { done = s; });
  ASSERT_TRUE(loop_.runUntil([&] { return done.has_value(); }));
  EXPECT_TRUE(done->ok());
  EXPECT_EQ(process_->launched().config, "x = 1");
  refuse_ = "reload";
  done.reset();
  process_->reload(ipc::ReloadArgs{"y = 2", "/etc/scalws/web.toml", {}, {}},
                   [&](const Status& s) { done = s; });
  ASSERT_TRUE(loop_.runUntil([&] { return done.has_value(); }));
  EXPECT_FALSE(done->ok());
  EXPECT_EQ(process_->launched().config, "x = 1");
}

TEST_F(WorkerProcessTest, StopAsksThenKillsWhenItDoesNotGo) {
  handshake();
  process_->stop(100);
  ASSERT_TRUE(loop_.runUntil([&] { return heard_.exit.has_value(); }));
  child_ = -1;
  EXPECT_EQ(received_.back().first, "stop");
  EXPECT_NE(heard_.exit->find("SIGKILL"), std::string::npos) << *heard_.exit;
  EXPECT_EQ(process_->state(), WorkerProcess::State::kExited);
}

// --- spawned and re-attached: the stand-in worker ----------------------------------------

TEST(WorkerProcessAttachTest, ADetachedWorkerIsFoundAgainAndSaysWhatItRuns) {
  ipc::testing::TestLoop loop;
  Heard first;
  WorkerLaunch launch;
  launch.scalwsd = SCALWS_STAND_IN_WORKER;
  launch.settings = settings();
  auto spawned =
      WorkerProcess::spawn(loop.get(), std::move(launch), SlotListeners(), first.callbacks());
  ASSERT_TRUE(spawned.ok()) << spawned.status().message();
  ASSERT_TRUE(loop.runUntil([&] { return first.ready.has_value(); }));
  ASSERT_TRUE(first.ready->ok()) << first.ready->message();
  state::WorkerRecord row;
  row.pid = (*spawned)->pid();
  row.instance = "web";
  row.start_ticks = (*spawned)->startTicks();
  row.attach_address = (*spawned)->attachAddress();
  (*spawned)->detach();  // the controller goes; the worker stays
  spawned->reset();
  loop.spin(5);

  Heard second;
  auto attached = WorkerProcess::attach(loop.get(), row, second.callbacks());
  ASSERT_TRUE(attached.ok()) << attached.status().message();
  ASSERT_TRUE(loop.runUntil([&] { return second.ready.has_value(); }));
  ASSERT_TRUE(second.ready->ok()) << second.ready->message();
  EXPECT_EQ((*attached)->attachedState().settings, settings());
  EXPECT_EQ((*attached)->state(), WorkerProcess::State::kReady);
  ASSERT_TRUE(loop.runUntil([&] { return !second.metrics.empty(); }));

  // A record that names the wrong start time is not this worker.
  state::WorkerRecord stale = row;
  stale.start_ticks += 1;
  EXPECT_FALSE(WorkerProcess::attach(loop.get(), stale, Heard().callbacks()).ok());

  (*attached)->stop(2000);
  ASSERT_TRUE(loop.runUntil([&] { return second.exit.has_value(); }));
}

}  // namespace
}  // namespace scalws::controller
