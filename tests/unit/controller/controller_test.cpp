// Controller, the whole process in this test's thread: a temp state dir and socket, the
// stand-in worker (tests/tools/stand_in_worker.cpp) as scalwsd, and a scalwsctl-side
// endpoint on the controller's own loop. Start-up, an instance's life, shutdown that stops
// or leaves the workers, and a second controller that takes over what the first left.
#include "controller/controller.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <optional>

#include "controller/instances/worker_probe.h"
#include "ipc/unix_socket.h"
#include "tests/support/free_port.h"
#include "tests/unit/controller/fake_accounts.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller {
namespace {

using common::Result;
using common::Status;
using ipc::Json;

using ::scalws::testing::freePort;

// One controller and a client of its control socket, both on the controller's loop.
class Running {
 public:
  explicit Running(const ControllerOptions& options) {
    Result<std::unique_ptr<Controller>> c =
        Controller::create(options, std::make_unique<FakeAccounts>());
    EXPECT_TRUE(c.ok()) << c.status().message();
    if (!c.ok()) return;
    controller_ = std::move(*c);
    uv_timer_init(controller_->loop(), &tick_);
    uv_timer_start(
        &tick_, [](uv_timer_t*) {}, 5, 5);
    Status started = controller_->startUp();
    EXPECT_TRUE(started.ok()) << started.message();
    EXPECT_TRUE(runUntil([&] { return controller_->ready(); })) << "never converged";
    Result<common::UniqueFd> fd =
        ipc::connectUnix(options.socket_path, std::chrono::milliseconds(1000));
    EXPECT_TRUE(fd.ok()) << fd.status().message();
    ipc::EndpointOptions o;
    o.local = ipc::Role::kCtl;
    o.peer = ipc::Role::kController;
    auto e = ipc::Endpoint::create(controller_->loop(), std::move(*fd), o);
    EXPECT_TRUE(e.ok());
    client_ = std::move(*e);
  }
  ~Running() { shutDown(ShutdownMode::kStopInstances); }

  bool runUntil(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      uv_run(controller_->loop(), UV_RUN_ONCE);
    }
    return true;
  }

  Result<Json> call(const std::string& op, Json args = Json::object()) {
    std::optional<Result<Json>> reply;
    Status sent = client_->request(op, std::move(args), {},
                                   [&](Result<Json> r) { reply.emplace(std::move(r)); });
    if (!sent.ok()) return sent;
    EXPECT_TRUE(runUntil([&] { return reply.has_value(); })) << op;
    return reply ? std::move(*reply) : Result<Json>(Status(common::StatusCode::kTimeout, op));
  }

  // What a signal does; returns once the loop has nothing left (the controller is done).
  int shutDown(ShutdownMode mode) {
    if (!controller_) return -1;
    client_.reset();
    uv_close(reinterpret_cast<uv_handle_t*>(&tick_), nullptr);
    controller_->shutDown(mode);
    uv_run(controller_->loop(), UV_RUN_DEFAULT);
    int code = controller_->exitCode();
    controller_.reset();
    return code;
  }

 private:
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<ipc::Endpoint> client_;
  uv_timer_t tick_{};
};

class ControllerTest : public ::testing::Test {
 protected:
  ControllerTest() : port_(freePort()) {
    options_.state_dir = dir_.path() + "/state";
    options_.socket_path = dir_.path() + "/control.sock";
    options_.pool_dir = dir_.path() + "/php";
    options_.scalwsd = SCALWS_STAND_IN_WORKER;
    options_.restart.first_backoff_ms = 10;
  }
  ~ControllerTest() override { ::unsetenv("SCALWS_STAND_IN"); }

  Json addArgs() {
    std::string config = "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port_) +
                         "\"\n[[route]]\nrespond = { body = \"hi\" }\n";
    return {{"name", "web"}, {"config", config}, {"config_path", "/etc/scalws/web.toml"}};
  }

  static std::vector<int64_t> pids(const Json& show) {
    std::vector<int64_t> out;
    for (const Json& p : show["processes"]) out.push_back(p["pid"].get<int64_t>());
    return out;
  }

  scalws::testing::TempDir dir_;
  uint16_t port_;
  ControllerOptions options_;
};

TEST_F(ControllerTest, StartsAnswersAndStopsClean) {
  Running c(options_);
  Result<Json> status = c.call("status");
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ((*status)["instances"]["total"], 0);
  EXPECT_EQ((*status)["state_dir"], options_.state_dir);
  EXPECT_EQ(c.shutDown(ShutdownMode::kStopInstances), 0);
  // The socket went with it, and the state dir's lock: a second controller may start.
  EXPECT_FALSE(ipc::connectUnix(options_.socket_path, std::chrono::milliseconds(100)).ok());
  Running again(options_);
  EXPECT_TRUE(again.call("status").ok());
}

TEST_F(ControllerTest, AnInstanceRunsAndStopsWithTheController) {
  std::vector<int64_t> workers;
  {
    Running c(options_);
    ASSERT_TRUE(c.call("instance.add", addArgs()).ok());
    Result<Json> started = c.call("instance.start", {{"name", "web"}});
    ASSERT_TRUE(started.ok()) << started.status().message();
    EXPECT_EQ((*started)["status"], "running");
    EXPECT_EQ((*started)["process_count"], 1);
    Result<Json> show = c.call("instance.show", {{"name", "web"}});
    ASSERT_TRUE(show.ok());
    workers = pids(*show);
    ASSERT_EQ(workers.size(), 1u);
    EXPECT_TRUE(runsWorkerOf(static_cast<pid_t>(workers[0]), "web"));
    EXPECT_EQ(c.shutDown(ShutdownMode::kStopInstances), 0);
  }
  EXPECT_FALSE(processStartTicks(static_cast<pid_t>(workers[0])).ok()) << "left running";
}

TEST_F(ControllerTest, ANewControllerTakesOverTheWorkersTheLastOneLeft) {
  std::vector<int64_t> before;
  {
    Running first(options_);
    ASSERT_TRUE(first.call("instance.add", addArgs()).ok());
    ASSERT_TRUE(first.call("instance.start", {{"name", "web"}}).ok());
    before = pids(*first.call("instance.show", {{"name", "web"}}));
    EXPECT_EQ(first.shutDown(ShutdownMode::kLeaveInstances), 0);
  }
  ASSERT_TRUE(processStartTicks(static_cast<pid_t>(before[0])).ok()) << "the worker went too";
  Running second(options_);
  Result<Json> show = second.call("instance.show", {{"name", "web"}});
  ASSERT_TRUE(show.ok());
  EXPECT_EQ((*show)["status"], "running");
  EXPECT_EQ(pids(*show), before);
  EXPECT_EQ((*show)["processes"][0]["attached"], true);
}

}  // namespace
}  // namespace scalws::controller
