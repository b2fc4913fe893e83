// PeerProcess, driven by a small owner (as WorkerProcess and FrontProcess own one) over a
// socketpair whose other end a test-side endpoint holds, playing the peer; a forked child
// that only sleeps is the process (its pidfd tells the exit).
#include "controller/peer_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "controller/child_process.h"
#include "controller/instances/worker_probe.h"
#include "ipc/unix_socket.h"
#include "ipc/worker_messages.h"
#include "tests/unit/controller/worker_stand_in.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using ipc::Json;

// What WorkerProcess and FrontProcess do with their PeerProcess, reduced to counting.
struct Owner {
  Owner(uv_loop_t* loop, pid_t pid, UniqueFd pidfd, bool attaching)
      : peer(loop, pid, std::move(pidfd), attaching,
             PeerProcess::Config{.who = "test peer",
                                 .noun = "worker",
                                 .stop = ipc::op::kStop,
                                 .stderr_op = ipc::op::kStderr,
                                 .log_prefix = "test peer: "},
             hooks()) {}

  PeerProcess::Hooks hooks() {
    PeerProcess::Hooks h;
    h.on_ready = [this](const Status& s) {
      EXPECT_FALSE(ready.has_value()) << "on_ready twice";
      ready = s;
    };
    h.on_exit = [this](const std::string& how) {
      EXPECT_FALSE(exit.has_value()) << "on_exit twice";
      exit = how;
    };
    h.on_hello = [this] { ++hellos; };
    return h;
  }

  void onHello(ipc::Incoming&, ipc::Replier replier) {
    if (!peer.firstHello(replier)) return;
    peer.helloTaken("00ab", std::move(replier));
    peer.startStep(ipc::op::kConfig, Json::object(), {}, "config", [this] { ++configured; });
  }
  void onReady(ipc::Incoming& request, ipc::Replier replier) {
    peer.onReady<ipc::ReadyArgs>(request, std::move(replier));
  }
  void onAttachHello(ipc::Incoming&, ipc::Replier replier) {
    if (!peer.attachHello(replier)) return;
    peer.attached(stopping, std::move(replier));
  }
  void onMetrics(ipc::Incoming& request, ipc::Replier) {
    std::optional<ipc::MetricsArgs> m = peer.takeMetrics<ipc::MetricsArgs>(request);
    if (m) metrics.push_back(m->metrics.bytes_in);
  }

  static const ipc::OpHandler<Owner> kSpawnHandlers[];
  static const ipc::OpHandler<Owner> kAttachHandlers[];

  std::optional<Status> ready;
  std::optional<std::string> exit;
  int hellos = 0;
  int configured = 0;
  bool stopping = false;
  std::vector<uint64_t> metrics;
  PeerProcess peer;
};

const ipc::OpHandler<Owner> Owner::kSpawnHandlers[] = {
    {ipc::op::kHello, &Owner::onHello},
    {ipc::op::kReady, &Owner::onReady},
    {ipc::op::kMetrics, &Owner::onMetrics},
};
const ipc::OpHandler<Owner> Owner::kAttachHandlers[] = {
    {ipc::op::kHello, &Owner::onAttachHello},
    {ipc::op::kMetrics, &Owner::onMetrics},
};

class PeerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ = testing::forkSleeper();
    auto pair = testing::workerChannel(loop_.get());
    ASSERT_TRUE(pair.ok());
    remote_ = std::move(pair->worker_end);
    for (const char* op : {"config", "stop", "stderr"}) {
      ASSERT_TRUE(remote_
                      ->registerHandler(op,
                                        [this, op](const ipc::Message&, std::vector<UniqueFd> fds,
                                                   ipc::Replier r) {
                                          received_.push_back(op);
                                          fds_ += fds.size();
                                          if (refuse_ == op) {
                                            return r.fail(ipc::errc::kInvalidArgument, "not this");
                                          }
                                          r.ok();
                                        })
                      .ok());
    }
    channel_ = std::move(pair->controller_end);
  }
  void TearDown() override {
    owner_.reset();
    remote_.reset();
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
    }
    loop_.spin(5);
  }

  UniqueFd pidfd() {
    Result<UniqueFd> pidfd = openPidfd(child_);
    EXPECT_TRUE(pidfd.ok());
    return pidfd.ok() ? std::move(*pidfd) : UniqueFd();
  }

  void spawned(uint64_t ready_timeout_ms = 10'000) {
    owner_ = std::make_unique<Owner>(loop_.get(), child_, pidfd(), false);
    EXPECT_EQ(owner_->peer.state(), PeerProcess::State::kStarting);
    EXPECT_TRUE(owner_->peer.isChild());
    Status conversing = owner_->peer.converse(
        std::move(channel_), ipc::EndpointOptions(),
        PeerProcess::handlersOf<Owner>(*owner_, Owner::kSpawnHandlers), ready_timeout_ms);
    ASSERT_TRUE(conversing.ok()) << conversing.message();
  }

  void request(const char* op, Json args, std::optional<Status>* answer = nullptr) {
    ASSERT_TRUE(remote_
                    ->request(op, std::move(args), {},
                              [answer](Result<Json> r) {
                                if (answer != nullptr) *answer = r.status();
                              })
                    .ok());
  }

  // hello, answered with the config.
  void configure(const char* attach_address = "00ab") {
    request("hello", ipc::HelloArgs{child_, "web", attach_address, std::nullopt}.encode());
    ASSERT_TRUE(loop_.runUntil([&] { return owner_->configured == 1; }));
  }

  // ready, serving; the peer is ready once it returns.
  void sendReady() {
    ipc::ReadyArgs ready;
    ready.ok = true;
    ready.pid = child_;
    ready.loops = 1;
    ready.sandbox.no_new_privs = true;
    request("ready", ready.encode());
    ASSERT_TRUE(loop_.runUntil([&] { return owner_->ready.has_value(); }));
  }

  // hello -> config -> ready.
  void handshake() {
    spawned();
    configure();
    sendReady();
  }

  // The child is gone and reaped, by the PeerProcess (a spawned one) or here.
  void exited() {
    ASSERT_TRUE(loop_.runUntil([&] { return owner_->exit.has_value(); }));
    if (!owner_->peer.isChild()) ::waitpid(child_, nullptr, 0);
    child_ = -1;
  }

  void metric(uint64_t bytes_in, size_t padding = 0) {
    ipc::MetricsArgs m;
    m.pid = child_;
    m.metrics.bytes_in = bytes_in;
    Json args = m.encode();
    if (padding > 0) args["padding"] = std::string(padding, 'x');
    ASSERT_TRUE(remote_->notify("metrics", args).ok());
  }
  // Frames are handled in order: once a request sent now is answered, every notification
  // sent before it was handled.
  void fence() {
    std::optional<Status> answer;
    request("hello", ipc::HelloArgs{child_, "web", "00ab", std::nullopt}.encode(), &answer);
    ASSERT_TRUE(loop_.runUntil([&] { return answer.has_value(); }));
  }

  ipc::testing::TestLoop loop_;
  pid_t child_ = -1;
  UniqueFd channel_;
  std::unique_ptr<ipc::Endpoint> remote_;
  std::unique_ptr<Owner> owner_;
  std::vector<std::string> received_;
  size_t fds_ = 0;
  std::string refuse_;
};

TEST_F(PeerProcessTest, HelloStepsAndReadyMakeItReady) {
  handshake();
  ASSERT_TRUE(owner_->ready->ok()) << owner_->ready->message();
  PeerProcess& p = owner_->peer;
  EXPECT_EQ(p.state(), PeerProcess::State::kReady);
  EXPECT_EQ(p.stateName(), "ready");
  EXPECT_EQ(p.attachAddress(), "00ab");
  EXPECT_EQ(owner_->hellos, 1);
  EXPECT_EQ(received_, std::vector<std::string>{"config"});
  ASSERT_TRUE(p.sandbox().has_value());
  EXPECT_TRUE(p.sandbox()->no_new_privs);
  EXPECT_NE(p.readyEndpoint(), nullptr);
  EXPECT_GT(p.startedMs(), 0);

  std::optional<Status> again;
  request("hello", ipc::HelloArgs{child_, "web", "00ab", std::nullopt}.encode(), &again);
  ASSERT_TRUE(loop_.runUntil([&] { return again.has_value(); }));
  EXPECT_NE(again->message().find("hello was already said"), std::string::npos);
  EXPECT_EQ(owner_->hellos, 1);
}

TEST_F(PeerProcessTest, ARefusedStepFailsTheStartAndKillsIt) {
  refuse_ = "config";
  spawned();
  request("hello", ipc::HelloArgs{child_, "web", "", std::nullopt}.encode());
  exited();
  ASSERT_TRUE(owner_->ready.has_value());
  EXPECT_EQ(owner_->ready->code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(owner_->ready->message(), "refused its config: not this");
  EXPECT_EQ(owner_->configured, 0);
  EXPECT_NE(owner_->exit->find("SIGKILL"), std::string::npos) << *owner_->exit;
  EXPECT_EQ(owner_->peer.state(), PeerProcess::State::kExited);
  EXPECT_EQ(owner_->peer.stateName(), "exited");
}

TEST_F(PeerProcessTest, AReadyThatSaysItFailedFailsTheStartInPrintableWords) {
  spawned();
  configure("");
  ipc::ReadyArgs ready;
  ready.ok = false;
  ready.pid = child_;
  ready.error = "cannot bind\n";
  request("ready", ready.encode());
  exited();
  ASSERT_TRUE(owner_->ready.has_value());
  EXPECT_FALSE(owner_->ready->ok());
  EXPECT_EQ(owner_->ready->message(), common::printable("cannot bind\n"));
}

TEST_F(PeerProcessTest, NotReadyInTimeIsKilled) {
  spawned(100);
  exited();
  EXPECT_EQ(owner_->ready->message(), "not ready within 0 s");
  EXPECT_NE(owner_->exit->find("SIGKILL"), std::string::npos) << *owner_->exit;
}

TEST_F(PeerProcessTest, StopAsksOverTheChannelThenKills) {
  handshake();
  owner_->peer.stop(100);
  EXPECT_EQ(owner_->peer.state(), PeerProcess::State::kStopping);
  EXPECT_EQ(owner_->peer.readyEndpoint(), nullptr);
  exited();
  EXPECT_EQ(received_.back(), "stop");
  EXPECT_NE(owner_->exit->find("SIGKILL"), std::string::npos) << *owner_->exit;
}

TEST_F(PeerProcessTest, StopWithoutAChannelSendsSigterm) {
  handshake();
  remote_.reset();  // the peer closed its end
  ASSERT_TRUE(loop_.runUntil([&] { return owner_->peer.readyEndpoint() == nullptr; }));
  owner_->peer.stop(10'000);
  exited();
  EXPECT_NE(owner_->exit->find("SIGTERM"), std::string::npos) << *owner_->exit;
}

TEST_F(PeerProcessTest, MetricsOnlyOnceReadyAndNeverAFloodOrAnOversizedOne) {
  spawned();
  metric(1);  // before ready: not yet known to be this process
  loop_.spin(10);
  EXPECT_TRUE(owner_->metrics.empty());
  configure();
  sendReady();
  metric(2, kMaxMetricsBytes);
  for (int i = 0; i < 100; ++i) metric(3);
  fence();
  EXPECT_GE(owner_->metrics.size(), static_cast<size_t>(kMetricsBurst));
  EXPECT_LT(owner_->metrics.size(), 50u);
  for (uint64_t m : owner_->metrics) EXPECT_EQ(m, 3u);
}

TEST_F(PeerProcessTest, PinChecksTheStartTimeAndTheOwnersWord) {
  Result<uint64_t> ticks = processStartTicks(child_);
  ASSERT_TRUE(ticks.ok());
  auto yes = [] { return true; };
  EXPECT_TRUE(PeerProcess::pin(child_, *ticks, yes, "ours").ok());
  Result<UniqueFd> stale = PeerProcess::pin(child_, *ticks + 1, yes, "the test peer");
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().message(),
            "pid " + std::to_string(child_) + " is no longer the test peer");
  EXPECT_FALSE(PeerProcess::pin(
                   child_, *ticks, [] { return false; }, "ours")
                   .ok());
}

TEST_F(PeerProcessTest, AnAttachHelloMakesItReadyAndHandsOverItsStderr) {
  owner_ = std::make_unique<Owner>(loop_.get(), child_, pidfd(), true);
  EXPECT_EQ(owner_->peer.state(), PeerProcess::State::kAttaching);
  EXPECT_EQ(owner_->peer.stateName(), "attaching");
  EXPECT_FALSE(owner_->peer.isChild());
  int64_t started = wallMs() - 5'000;
  ASSERT_TRUE(owner_->peer
                  .attach(std::move(channel_), ipc::EndpointOptions(),
                          PeerProcess::handlersOf<Owner>(*owner_, Owner::kAttachHandlers), started)
                  .ok());
  EXPECT_EQ(owner_->peer.startedMs(), started);
  request("hello", Json::object());
  ASSERT_TRUE(loop_.runUntil([&] { return owner_->ready.has_value(); }));
  EXPECT_TRUE(owner_->ready->ok()) << owner_->ready->message();
  EXPECT_EQ(owner_->peer.state(), PeerProcess::State::kReady);
  ASSERT_TRUE(loop_.runUntil([&] { return !received_.empty(); }));
  EXPECT_EQ(received_, std::vector<std::string>{"stderr"});
  EXPECT_EQ(fds_, 1u);
  // Not our child: its exit is seen through the pidfd all the same.
  ::kill(child_, SIGKILL);
  exited();
  EXPECT_EQ(owner_->peer.state(), PeerProcess::State::kExited);
}

TEST_F(PeerProcessTest, OneFoundDrainingIsStopping) {
  owner_ = std::make_unique<Owner>(loop_.get(), child_, pidfd(), true);
  owner_->stopping = true;
  ASSERT_TRUE(owner_->peer
                  .attach(std::move(channel_), ipc::EndpointOptions(),
                          PeerProcess::handlersOf<Owner>(*owner_, Owner::kAttachHandlers), 0)
                  .ok());
  request("hello", Json::object());
  ASSERT_TRUE(loop_.runUntil([&] { return owner_->ready.has_value(); }));
  EXPECT_TRUE(owner_->ready->ok());
  EXPECT_EQ(owner_->peer.state(), PeerProcess::State::kStopping);
}

TEST_F(PeerProcessTest, AnUnreachableAttachIsToldOnTheNextTurn) {
  owner_ = std::make_unique<Owner>(loop_.get(), child_, pidfd(), true);
  ASSERT_TRUE(owner_->peer
                  .attach(Status(StatusCode::kUnavailable, "no attach socket"),
                          ipc::EndpointOptions(),
                          PeerProcess::handlersOf<Owner>(*owner_, Owner::kAttachHandlers), 0)
                  .ok());
  EXPECT_FALSE(owner_->ready.has_value());  // never from inside the call
  ASSERT_TRUE(loop_.runUntil([&] { return owner_->ready.has_value(); }));
  EXPECT_EQ(owner_->ready->code(), StatusCode::kUnavailable);
  EXPECT_EQ(owner_->ready->message(), "no attach socket");
}

TEST_F(PeerProcessTest, AnAttachChannelClosedBeforeTheHelloIsTold) {
  owner_ = std::make_unique<Owner>(loop_.get(), child_, pidfd(), true);
  ASSERT_TRUE(owner_->peer
                  .attach(std::move(channel_), ipc::EndpointOptions(),
                          PeerProcess::handlersOf<Owner>(*owner_, Owner::kAttachHandlers), 0)
                  .ok());
  remote_.reset();
  ASSERT_TRUE(loop_.runUntil([&] { return owner_->ready.has_value(); }));
  EXPECT_EQ(owner_->ready->message().rfind("the worker closed the attach channel", 0), 0u)
      << owner_->ready->message();
}

TEST_F(PeerProcessTest, DetachLetsGoOfTheProcess) {
  handshake();
  owner_->peer.detach();
  ::kill(child_, SIGKILL);
  ::waitpid(child_, nullptr, 0);
  child_ = -1;
  loop_.spin(10);
  EXPECT_FALSE(owner_->exit.has_value());
}

}  // namespace
}  // namespace scalws::controller
