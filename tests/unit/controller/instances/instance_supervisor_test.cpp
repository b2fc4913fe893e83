// InstanceSupervisor with the stand-in worker (tests/tools/stand_in_worker.cpp) as
// scalwsd, a real state store and real listeners on a free port: start, crash restarts and
// the crash limit, stop, reload, and taking over the workers another supervisor left.
#include "controller/instances/instance_supervisor.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>

#include "controller/instances/worker_probe.h"
#include "tests/support/free_port.h"
#include "tests/unit/controller/temp_dir.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using common::Result;
using common::Status;

using ::scalws::testing::freePort;

std::string siteToml(uint16_t port, const char* body = "one") {
  return "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port) +
         "\"\n[[route]]\nrespond = { body = \"" + body + "\" }\n";
}

// Gone, or a zombie: the stand-ins are this test's children, and a controller that took
// them over (as a later controller does) never reaps them.
bool exited(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  return close == std::string::npos || text.compare(close, 4, ") Z ") == 0;
}

// Sets SCALWS_STAND_IN for the workers spawned while it lives.
class StandInFlags {
 public:
  explicit StandInFlags(const char* flags) { ::setenv("SCALWS_STAND_IN", flags, 1); }
  ~StandInFlags() { ::unsetenv("SCALWS_STAND_IN"); }
};

class InstanceSupervisorTest : public ::testing::Test {
 protected:
  InstanceSupervisorTest() : port_(freePort()) {
    auto store = state::StateStore::open(state::StateStore::dbPath(dir_.path()),
                                         cpu::CpuAllocator(common::CpuSet{0, 1}));
    EXPECT_TRUE(store.ok()) << store.status().message();
    store_ = std::make_unique<state::StateStore>(std::move(*store));
    state::NewInstance spec;
    spec.name = "web";
    spec.cpus = 2;
    spec.user = "nobody";
    spec.config = siteToml(port_);
    spec.config_path = "/etc/scalws/web.toml";
    auto record = store_->addInstance(spec);
    EXPECT_TRUE(record.ok()) << record.status().message();
    record_ = *record;
  }
  ~InstanceSupervisorTest() override {
    for (auto* s : {&supervisor_, &other_}) {
      if (*s && (*s)->liveProcesses() > 0) {
        std::optional<Status> stopped;
        (*s)->stop([&](const Status& st) { stopped = st; });
        loop_.runUntil([&] { return stopped.has_value(); });
      }
      s->reset();
    }
    loop_.spin(5);
  }

  std::unique_ptr<InstanceSupervisor> make() {
    InstanceSupervisor::Env env;
    env.loop = loop_.get();
    env.store = store_.get();
    env.scalwsd = SCALWS_STAND_IN_WORKER;
    env.limits.first_backoff_ms = 10;
    env.limits.max_backoff_ms = 20;
    env.limits.crash_limit = 3;
    return std::make_unique<InstanceSupervisor>(std::move(env), record_);
  }

  Status run(const std::function<void(InstanceSupervisor::Done)>& op) {
    std::optional<Status> done;
    op([&](const Status& s) { done = s; });
    EXPECT_TRUE(loop_.runUntil([&] { return done.has_value(); }, std::chrono::seconds(10)));
    return done.value_or(Status(common::StatusCode::kTimeout, "no answer"));
  }

  std::vector<state::WorkerRecord> rows() {
    auto r = store_->listWorkers(std::string("web"));
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<state::WorkerRecord>();
  }

  scalws::testing::TempDir dir_;
  ipc::testing::TestLoop loop_;
  uint16_t port_;
  std::unique_ptr<state::StateStore> store_;
  state::InstanceRecord record_;
  std::unique_ptr<InstanceSupervisor> supervisor_;
  std::unique_ptr<InstanceSupervisor> other_;
};

TEST_F(InstanceSupervisorTest, StartRunsAWorkerPerCpuAndRecordsEach) {
  supervisor_ = make();
  int commits = 0;
  Status started = run([&](auto done) {
    supervisor_->start(
        [&] {
          ++commits;
          return Status();
        },
        done);
  });
  ASSERT_TRUE(started.ok()) << started.message();
  EXPECT_EQ(commits, 1);
  EXPECT_EQ(supervisor_->state(), InstanceSupervisor::State::kRunning);
  EXPECT_EQ(supervisor_->liveProcesses(), 2u);
  ipc::Json processes = supervisor_->processes();
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0]["state"], "ready");
  EXPECT_EQ(processes[1]["cpus"], "1");
  EXPECT_EQ(rows().size(), 2u);
  EXPECT_EQ(store_->getInstance("web")->status, "running");
  // The address is the instance's now: a second start of another supervisor is refused.
  other_ = make();
  Status again = run([&](auto done) { other_->start(nullptr, done); });
  EXPECT_FALSE(again.ok());
}

TEST_F(InstanceSupervisorTest, ARefusingWorkerFailsTheStartAndLeavesNothing) {
  StandInFlags flags("refuse");
  supervisor_ = make();
  Status started = run([&](auto done) { supervisor_->start(nullptr, done); });
  EXPECT_FALSE(started.ok());
  EXPECT_NE(started.message().find("the stand-in refuses"), std::string::npos) << started.message();
  EXPECT_EQ(supervisor_->state(), InstanceSupervisor::State::kFailed);
  EXPECT_TRUE(loop_.runUntil([&] { return supervisor_->liveProcesses() == 0; }));
}

TEST_F(InstanceSupervisorTest, CrashesAreRestartedUntilTheCrashLimit) {
  StandInFlags flags("exit-after-ready");
  supervisor_ = make();
  Status started = run([&](auto done) { supervisor_->start(nullptr, done); });
  // Ready came first, so the start itself went through; then every worker keeps dying.
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(
      loop_.runUntil([&] { return supervisor_->state() == InstanceSupervisor::State::kFailed; },
                     std::chrono::seconds(10)));
  Result<state::InstanceRecord> stored = store_->getInstance("web");
  EXPECT_EQ(stored->status, "failed");
  EXPECT_NE(stored->status_reason.find("crashes within"), std::string::npos)
      << stored->status_reason;
  auto events = store_->recentEvents(std::string("web"), 50);
  size_t exits = 0;
  for (const auto& e : *events) exits += e.kind == state::kEventWorkerExited;
  EXPECT_GE(exits, 3u);
}

TEST_F(InstanceSupervisorTest, StopEndsEveryWorkerAndForgetsTheirRows) {
  supervisor_ = make();
  ASSERT_TRUE(run([&](auto done) { supervisor_->start(nullptr, done); }).ok());
  std::vector<pid_t> pids;
  for (const auto& r : rows()) pids.push_back(static_cast<pid_t>(r.pid));
  ASSERT_TRUE(run([&](auto done) { supervisor_->stop(done); }).ok());
  EXPECT_EQ(supervisor_->state(), InstanceSupervisor::State::kStopped);
  EXPECT_EQ(supervisor_->liveProcesses(), 0u);
  EXPECT_TRUE(rows().empty());
  for (pid_t pid : pids) EXPECT_FALSE(processStartTicks(pid).ok()) << pid;
  EXPECT_EQ(store_->getInstance("web")->status, "stopped");
}

TEST_F(InstanceSupervisorTest, ReloadSendsTheStoredConfigAndRefusesNewAddresses) {
  supervisor_ = make();
  ASSERT_TRUE(run([&](auto done) { supervisor_->start(nullptr, done); }).ok());
  record_.config = siteToml(port_, "two");
  supervisor_->setRecord(record_);
  EXPECT_TRUE(supervisor_->runningConfigDiffers());
  ASSERT_TRUE(run([&](auto done) { supervisor_->reload(done); }).ok());
  EXPECT_FALSE(supervisor_->runningConfigDiffers());
  record_.config = siteToml(freePort());
  supervisor_->setRecord(record_);
  Status moved = run([&](auto done) { supervisor_->reload(done); });
  EXPECT_FALSE(moved.ok());
  EXPECT_NE(moved.message().find("restart"), std::string::npos);
}

TEST_F(InstanceSupervisorTest, ASecondSupervisorTakesOverTheWorkersTheFirstLeft) {
  supervisor_ = make();
  ASSERT_TRUE(run([&](auto done) { supervisor_->start(nullptr, done); }).ok());
  std::vector<state::WorkerRecord> left = rows();
  ASSERT_EQ(left.size(), 2u);
  supervisor_->leave();  // the controller exits, the workers serve on
  supervisor_.reset();
  loop_.spin(5);

  other_ = make();
  ASSERT_TRUE(run([&](auto done) { other_->reattach(left, done); }).ok());
  EXPECT_EQ(other_->state(), InstanceSupervisor::State::kRunning);
  ipc::Json processes = other_->processes();
  ASSERT_EQ(processes.size(), 2u);
  for (const ipc::Json& p : processes) {
    EXPECT_EQ(p["attached"], true);
    EXPECT_EQ(p["state"], "ready");
  }
  ASSERT_TRUE(other_->runningSite().has_value());
  EXPECT_EQ(other_->runningSite()->listens[0].port, port_);
}

// A worker that reports, to the controller that takes it over, a config it was never given
// (a static root of /, a pool of its choosing) is killed and replaced by a worker started
// from what the state DB says its instance runs.
TEST_F(InstanceSupervisorTest, AWorkerThatLiesOnReattachIsReplacedFromTheDb) {
  StandInFlags flags("lie-on-attach");
  supervisor_ = make();
  ASSERT_TRUE(run([&](auto done) { supervisor_->start(nullptr, done); }).ok());
  std::vector<state::WorkerRecord> left = rows();
  ASSERT_EQ(left.size(), 2u);
  supervisor_->leave();
  supervisor_.reset();
  loop_.spin(5);

  other_ = make();
  ASSERT_TRUE(run([&](auto done) { other_->reattach(left, done); }).ok());
  // Both lied: both are gone before the take-over ends, and replacements come up.
  for (const auto& row : left) EXPECT_TRUE(exited(row.pid)) << row.pid;
  EXPECT_EQ(other_->state(), InstanceSupervisor::State::kStopped);
  ASSERT_TRUE(other_->runningPools().empty());
  auto events = store_->recentEvents(std::string("web"), 20);
  size_t refused = 0;
  for (const auto& e : *events) refused += e.kind == state::kEventWorkerRefused;
  EXPECT_EQ(refused, 2u);
  // Started again (as the controller's converge does), it runs what the DB holds.
  ASSERT_TRUE(run([&](auto done) { other_->start(nullptr, done); }).ok());
  ASSERT_TRUE(other_->runningSite().has_value());
  EXPECT_EQ(other_->runningSite()->listens[0].port, port_);
}

TEST_F(InstanceSupervisorTest, OneHonestWorkerIsKeptAndTheLiarsSlotIsRespawned) {
  supervisor_ = make();
  ASSERT_TRUE(run([&](auto done) { supervisor_->start(nullptr, done); }).ok());
  std::vector<state::WorkerRecord> left = rows();
  ASSERT_EQ(left.size(), 2u);
  // The digest of worker 1 says it was told something else: as good as a lie.
  ASSERT_TRUE(store_->setWorkerDigest(left[1].pid, std::string(64, '0')).ok());
  left = rows();
  supervisor_->leave();
  supervisor_.reset();
  loop_.spin(5);

  other_ = make();
  ASSERT_TRUE(run([&](auto done) { other_->reattach(left, done); }).ok());
  EXPECT_EQ(other_->state(), InstanceSupervisor::State::kRunning);
  EXPECT_FALSE(exited(left[0].pid));
  EXPECT_TRUE(exited(left[1].pid));
  ASSERT_TRUE(loop_.runUntil([&] {
    ipc::Json p = other_->processes();
    return p.size() == 2 && p[1]["state"] == "ready";
  }));
  ipc::Json processes = other_->processes();
  EXPECT_EQ(processes[0]["attached"], true);
  EXPECT_EQ(processes[1]["attached"], false);
  EXPECT_NE(processes[1]["pid"], left[1].pid);
}

}  // namespace
}  // namespace scalws::controller
