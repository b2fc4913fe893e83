// The control protocol handlers over a real channel (a scalwsctl-side Endpoint talking to
// the controller-side one), with a real StateStore and a fake InstanceRuntime. Every
// refused request must leave the DB exactly as it was.
#include "controller/server/control_handlers.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

#include "controller/state/state_store.h"
#include "ipc/blocking_client.h"
#include "ipc/unix_socket.h"
#include "tests/unit/controller/fake_accounts.h"
#include "tests/unit/controller/temp_dir.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::controller {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;
using ipc::Json;

class FakeRuntime : public InstanceRuntime {
 public:
  void instanceStored(const state::InstanceRecord& record) override {
    stored.push_back(record.name);
  }
  void start(const std::string& name, Commit commit, Done done) override {
    calls.push_back("start " + name);
    Status s = commit();
    if (s.ok() && !fail_next.ok()) s = std::exchange(fail_next, Status());
    if (s.ok()) states[name] = "running";
    done(s);
  }
  void stop(const std::string& name, Done done) override {
    calls.push_back("stop " + name);
    states[name] = "stopped";
    done(Status());
  }
  void restart(const std::string& name, Commit commit, Done done) override {
    calls.push_back("restart " + name);
    done(commit());
  }
  void reload(const std::string& name, Done done) override {
    calls.push_back("reload " + name);
    done(std::exchange(fail_next, Status()));
  }
  void remove(const std::string& name, Commit commit, Done done) override {
    calls.push_back("remove " + name);
    done(commit());
  }
  std::string runtimeState(const std::string& name) const override {
    auto it = states.find(name);
    return it == states.end() ? "stopped" : it->second;
  }
  size_t processCount(const std::string& name) const override {
    return runtimeState(name) == "running" ? 2 : 0;
  }
  Json processes(const std::string& name) const override {
    if (runtimeState(name) != "running") return Json::array();
    return Json::array({{{"slot", 0}, {"pid", 111}, {"state", "ready"}},
                        {{"slot", 1}, {"pid", 222}, {"state", "ready"}}});
  }
  std::optional<common::config::SiteConfig> runningSite(const std::string&) const override {
    return std::nullopt;
  }
  bool reloadPending(const std::string&) const override { return false; }

  std::vector<std::string> stored;
  std::vector<std::string> calls;
  std::map<std::string, std::string> states;
  Status fail_next;
};

constexpr const char* kConfig =
    "[[listen]]\naddress = \"127.0.0.1:8080\"\n[[route]]\nrespond = { body = \"hi\" }\n";

class ControlHandlersTest : public ::testing::Test {
 protected:
  ControlHandlersTest() {
    auto store = state::StateStore::open(state::StateStore::dbPath(dir_.path()),
                                         cpu::CpuAllocator(common::CpuSet{0, 1}));
    EXPECT_TRUE(store.ok()) << store.status().message();
    store_ = std::make_unique<state::StateStore>(std::move(*store));
    ControllerInfo info;
    info.version = "test";
    info.pid = ::getpid();
    info.state_dir = dir_.path();
    info.socket_path = dir_.file("control.sock");
    info.started_ms = 1;
    handlers_ = std::make_unique<ControlHandlers>(*store_, runtime_, accounts_, info);

    auto pair = ipc::socketPair();
    EXPECT_TRUE(pair.ok());
    ipc::EndpointOptions server;
    server.local = ipc::Role::kController;
    server.peer = ipc::Role::kCtl;
    auto s = ipc::Endpoint::create(loop_.get(), std::move(pair->first), server);
    EXPECT_TRUE(s.ok());
    server_ = std::move(*s);
    EXPECT_TRUE(handlers_->registerOn(*server_).ok());
    ipc::EndpointOptions client;
    client.local = ipc::Role::kCtl;
    client.peer = ipc::Role::kController;
    auto c = ipc::Endpoint::create(loop_.get(), std::move(pair->second), client);
    EXPECT_TRUE(c.ok());
    client_ = std::move(*c);
  }
  ~ControlHandlersTest() override {
    client_.reset();
    server_.reset();
    loop_.spin();
  }

  Result<Json> call(const std::string& op, Json args) {
    std::optional<Result<Json>> reply;
    Status sent = client_->request(op, std::move(args), {},
                                   [&](Result<Json> r) { reply.emplace(std::move(r)); });
    if (!sent.ok()) return sent;
    EXPECT_TRUE(loop_.runUntil([&] { return reply.has_value(); })) << op;
    if (!reply) return Status(StatusCode::kTimeout, "no reply");
    return std::move(*reply);
  }

  Json addArgs(const std::string& name, const std::string& config = kConfig) {
    return {{"name", name}, {"config", config}, {"config_path", "/etc/scalws/" + name + ".toml"}};
  }

  // Everything the DB holds, as one string: a refused request must not change it.
  std::string dbDump() {
    std::string out;
    auto instances = store_->listInstances();
    for (const auto& r : *instances) {
      out += r.name + "|" + std::string(state::workerModeName(r.mode)) + "|" +
             std::to_string(r.cpus) + "|" + r.user + "|" + r.config + "|" + r.config_path + "|" +
             std::string(state::desiredStateName(r.desired)) + "|" + r.status + "|" +
             r.assigned_cpus.toString() + "\n";
    }
    auto events = store_->recentEvents(std::nullopt, 1000);
    out += "events " + std::to_string(events->size());
    return out;
  }

  scalws::testing::TempDir dir_;
  ipc::testing::TestLoop loop_;
  FakeAccounts accounts_;
  FakeRuntime runtime_;
  std::unique_ptr<state::StateStore> store_;
  std::unique_ptr<ControlHandlers> handlers_;
  std::unique_ptr<ipc::Endpoint> server_;
  std::unique_ptr<ipc::Endpoint> client_;
};

TEST_F(ControlHandlersTest, EveryControlOpHasAHandler) {
  // Handlers come from tables; an op of the op table that nobody registered would answer
  // unknown_op ("unknown op ..."). Bad args are refused by the handler itself.
  size_t ops = 0;
  for (const ipc::OpSpec& op : ipc::allOps()) {
    if (op.from != ipc::Role::kCtl) continue;
    ++ops;
    Result<Json> r = call(std::string(op.name), {{"name", "nosuch"}});
    if (!r.ok()) {
      EXPECT_EQ(r.status().message().find("unknown op"), std::string::npos)
          << op.name << ": " << r.status().message();
    }
  }
  EXPECT_GE(ops, 19u);
}

TEST_F(ControlHandlersTest, AddStoresWithDefaultsAndAnswersTheSummary) {
  Result<Json> added = call("instance.add", addArgs("web"));
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ((*added)["name"], "web");
  EXPECT_EQ((*added)["mode"], "multi");
  EXPECT_EQ((*added)["cpus"], 1);
  EXPECT_EQ((*added)["assigned_cpus"], "0");
  EXPECT_EQ((*added)["user"], "scalws-web");  // a user of its own, made for it
  EXPECT_EQ(accounts_.created, std::vector<std::string>{"scalws-web"});
  EXPECT_EQ((*added)["desired"], "stopped");
  EXPECT_EQ((*added)["status"], "stopped");
  EXPECT_EQ(runtime_.stored, std::vector<std::string>{"web"});
  auto record = store_->getInstance("web");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->config, kConfig);
  EXPECT_EQ(record->config_path, "/etc/scalws/web.toml");

  EXPECT_TRUE(record->user_created);

  Json single = addArgs("api", "[[listen]]\naddress = \"127.0.0.1:8081\"\n");
  single["mode"] = "single";
  single["user"] = "nobody";
  single["shared_cpus"] = true;
  Result<Json> api = call("instance.add", single);
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_EQ((*api)["mode"], "single");
  EXPECT_EQ((*api)["user"], "nobody");  // named: not made, not removed with it
  EXPECT_EQ((*api)["shared_cpus"], true);
  EXPECT_FALSE(store_->getInstance("api")->user_created);
  EXPECT_EQ(accounts_.created.size(), 1u);
}

TEST_F(ControlHandlersTest, RootOnlyUnderAControllerThatAllowsIt) {
  Json as_root = addArgs("web");
  as_root["user"] = "root";
  std::string before = dbDump();
  Result<Json> refused = call("instance.add", as_root);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("--allow-root-instances"), std::string::npos);
  EXPECT_EQ(dbDump(), before);

  ControllerInfo info;
  info.allow_root_instances = true;
  handlers_ = std::make_unique<ControlHandlers>(*store_, runtime_, accounts_, info);
  EXPECT_TRUE(handlers_->registerOn(*server_).ok());
  Result<Json> allowed = call("instance.add", as_root);
  ASSERT_TRUE(allowed.ok()) << allowed.status().message();
  EXPECT_EQ((*allowed)["user"], "root");
}

TEST_F(ControlHandlersTest, AUserOfAnotherInstanceOnlyWhenSharingIsAskedFor) {
  Json first = addArgs("web");
  first["user"] = "nobody";
  ASSERT_TRUE(call("instance.add", first).ok());
  Json second = addArgs("api", "[[listen]]\naddress = \"127.0.0.1:8081\"\n");
  second["user"] = "nobody";
  std::string before = dbDump();
  Result<Json> refused = call("instance.add", second);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(refused.status().message().find("--share-user"), std::string::npos);
  EXPECT_EQ(dbDump(), before);
  second["share_user"] = true;
  EXPECT_TRUE(call("instance.add", second).ok());
}

TEST_F(ControlHandlersTest, RemovingAnInstanceRemovesTheUserMadeForIt) {
  ASSERT_TRUE(call("instance.add", addArgs("web")).ok());
  Json named = addArgs("api", "[[listen]]\naddress = \"127.0.0.1:8081\"\n");
  named["user"] = "nobody";
  ASSERT_TRUE(call("instance.add", named).ok());
  ASSERT_TRUE(call("instance.remove", {{"name", "web"}}).ok());
  ASSERT_TRUE(call("instance.remove", {{"name", "api"}}).ok());
  EXPECT_EQ(accounts_.removed, std::vector<std::string>{"scalws-web"});
  EXPECT_TRUE(accounts_.made.empty());
}

TEST_F(ControlHandlersTest, RefusedAddsChangeNothing) {
  ASSERT_TRUE(call("instance.add", addArgs("web")).ok());
  Json cpus2 = addArgs("big", "[[listen]]\naddress = \"127.0.0.1:9000\"\n");
  cpus2["cpus"] = 1;
  ASSERT_TRUE(call("instance.add", cpus2).ok());  // both CPUs taken now
  std::string before = dbDump();

  struct Case {
    const char* what;
    Json args;
    StatusCode code;
  };
  Json bad_name = addArgs("web");
  bad_name["name"] = "../etc";
  Json bad_user = addArgs("u");
  bad_user["user"] = "no-such-user-here";
  Json bad_mode = addArgs("m");
  bad_mode["mode"] = "threads";
  Json zero_cpus = addArgs("z");
  zero_cpus["cpus"] = 0;
  Json relative = addArgs("r");
  relative["config_path"] = "site.toml";
  Json no_config = {{"name", "n"}, {"config_path", "/x.toml"}};
  Json wrong_type = addArgs("t");
  wrong_type["cpus"] = "two";
  Json exhausted = addArgs("more", "[[listen]]\naddress = \"127.0.0.1:9100\"\n");
  std::vector<Case> cases = {
      {"duplicate name", addArgs("web", "[[listen]]\naddress = \"127.0.0.1:9999\"\n"),
       StatusCode::kAlreadyExists},
      {"bad name", bad_name, StatusCode::kInvalidArgument},
      {"unknown user", bad_user, StatusCode::kInvalidArgument},
      {"bad mode", bad_mode, StatusCode::kInvalidArgument},
      {"zero cpus", zero_cpus, StatusCode::kInvalidArgument},
      {"relative path", relative, StatusCode::kInvalidArgument},
      {"no config", no_config, StatusCode::kInvalidArgument},
      {"wrong type", wrong_type, StatusCode::kInvalidArgument},
      {"invalid config", addArgs("c", "[[listen]]\naddress = 5\n"), StatusCode::kInvalidArgument},
      {"[server] table", addArgs("s", std::string("[server]\nworkers = 2\n") + kConfig),
       StatusCode::kInvalidArgument},
      {"address of another instance", addArgs("dup", "[[listen]]\naddress = \"0.0.0.0:8080\"\n"),
       StatusCode::kAlreadyExists},
      {"no CPU left", exhausted, StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    Result<Json> r = call("instance.add", c.args);
    ASSERT_FALSE(r.ok()) << c.what;
    // Over the wire: conflict <-> kAlreadyExists, invalid_argument, failed.
    EXPECT_EQ(r.status().code(), c.code) << c.what << ": " << r.status().message();
    EXPECT_EQ(dbDump(), before) << c.what;
    EXPECT_EQ(accounts_.made.size(), 2u) << c.what;  // no user left behind either
  }
  Result<Json> r = call("instance.add", addArgs("c", "[[listen]]\naddress = 5\n"));
  EXPECT_NE(r.status().message().find("c.toml:2:"), std::string::npos) << r.status().message();
  r = call("instance.add", exhausted);
  EXPECT_NE(r.status().message().find("CPU"), std::string::npos) << r.status().message();
}

TEST_F(ControlHandlersTest, SharedCpusLetManyInstancesFit) {
  for (int i = 0; i < 6; ++i) {
    Json args = addArgs("s" + std::to_string(i),
                        "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(9200 + i) + "\"\n");
    args["shared_cpus"] = true;
    ASSERT_TRUE(call("instance.add", args).ok()) << i;
  }
  Result<Json> cpus = call("cpu.list", Json::object());
  ASSERT_TRUE(cpus.ok());
  ASSERT_EQ((*cpus)["cpus"].size(), 2u);
  EXPECT_EQ((*cpus)["cpus"][0]["shared"].size(), 3u);  // least-loaded: spread evenly
  EXPECT_EQ((*cpus)["cpus"][1]["shared"].size(), 3u);
}

TEST_F(ControlHandlersTest, SetReplacesTheConfigOrChangesNothing) {
  ASSERT_TRUE(call("instance.add", addArgs("web")).ok());
  ASSERT_TRUE(
      call("instance.add", addArgs("api", "[[listen]]\naddress = \"127.0.0.1:81\"\n")).ok());
  std::string before = dbDump();
  EXPECT_FALSE(call("instance.set", addArgs("web", "[[route]]\n")).ok());  // no listen
  EXPECT_EQ(call("instance.set", addArgs("web", "[[listen]]\naddress = \"127.0.0.1:81\"\n"))
                .status()
                .code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(call("instance.set", addArgs("ghost")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(dbDump(), before);

  std::string next = "[[listen]]\naddress = \"127.0.0.1:8080\"\n[[route]]\nrespond = {}\n";
  ASSERT_TRUE(call("instance.set", addArgs("web", next)).ok());
  EXPECT_EQ(store_->getInstance("web")->config, next);
  // Keeping its own address is no clash with itself.
  EXPECT_EQ(runtime_.stored.back(), "web");
}

TEST_F(ControlHandlersTest, ActionsGoToTheRuntimeAndPersistTheIntent) {
  ASSERT_TRUE(call("instance.add", addArgs("web")).ok());
  Result<Json> started = call("instance.start", {{"name", "web"}});
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ((*started)["desired"], "running");
  EXPECT_EQ((*started)["process_count"], 2);
  EXPECT_EQ(store_->getInstance("web")->desired, state::DesiredState::kRunning);

  runtime_.fail_next = Status(StatusCode::kFailedPrecondition, "port taken");
  Result<Json> failed = call("instance.reload", {{"name", "web"}});
  EXPECT_EQ(failed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(failed.status().message(), "port taken");

  ASSERT_TRUE(call("instance.restart", {{"name", "web"}}).ok());
  Result<Json> stopped = call("instance.stop", {{"name", "web"}});
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ((*stopped)["desired"], "stopped");
  EXPECT_EQ(runtime_.calls,
            (std::vector<std::string>{"start web", "reload web", "restart web", "stop web"}));
  ASSERT_TRUE(call("instance.remove", {{"name", "web"}}).ok());
  EXPECT_EQ(store_->getInstance("web").status().code(), StatusCode::kNotFound);
}

TEST_F(ControlHandlersTest, UnknownInstancesAreNotFoundAndChangeNothing) {
  std::string before = dbDump();
  for (const char* op : {"instance.show", "instance.logs", "instance.start", "instance.stop",
                         "instance.restart", "instance.reload", "instance.remove"}) {
    Result<Json> r = call(op, {{"name", "ghost"}});
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << op;
    r = call(op, Json::object());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << op << " without a name";
  }
  EXPECT_TRUE(runtime_.calls.empty());
  EXPECT_EQ(dbDump(), before);
}

TEST_F(ControlHandlersTest, ShowListAndStatusDescribeWhatRuns) {
  ASSERT_TRUE(call("instance.add", addArgs("web")).ok());
  ASSERT_TRUE(
      call("instance.add", addArgs("api", "[[listen]]\naddress = \"127.0.0.1:81\"\n")).ok());
  ASSERT_TRUE(call("instance.start", {{"name", "web"}}).ok());

  Result<Json> show = call("instance.show", {{"name", "web"}, {"events", 2}});
  ASSERT_TRUE(show.ok()) << show.status().message();
  EXPECT_EQ((*show)["processes"].size(), 2u);
  EXPECT_EQ((*show)["processes"][1]["pid"], 222);
  EXPECT_EQ((*show)["config"]["listen"], Json({"127.0.0.1:8080"}));
  EXPECT_EQ((*show)["config"]["routes"], 1);
  EXPECT_EQ((*show)["events"].size(), 2u);
  EXPECT_EQ((*show)["events"][0]["kind"], "instance.desired");  // newest first

  Result<Json> logs = call("instance.logs", {{"name", "web"}});
  ASSERT_TRUE(logs.ok());
  EXPECT_EQ((*logs)["events"].size(), 2u);  // added, desired
  EXPECT_EQ(call("instance.logs", {{"name", "web"}, {"limit", 5000}}).status().code(),
            StatusCode::kInvalidArgument);

  Result<Json> list = call("instance.list", Json::object());
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["instances"].size(), 2u);
  EXPECT_EQ((*list)["instances"][0]["name"], "api");  // by name
  EXPECT_EQ((*list)["instances"][1]["process_count"], 2);

  Result<Json> status = call("status", Json::object());
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["instances"]["total"], 2);
  EXPECT_EQ((*status)["instances"]["running"], 1);
  EXPECT_EQ((*status)["instances"]["stopped"], 1);
  EXPECT_EQ((*status)["processes"], 2);
  EXPECT_EQ((*status)["host_cpus"], "0-1");
  EXPECT_EQ((*status)["pid"], ::getpid());
}

// A peer neither root nor in group scalws may read but not write: a forked child drops to
// nobody and calls over a real control socket.
TEST_F(ControlHandlersTest, UnprivilegedPeersMayReadButNotWrite) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  std::string path = dir_.file("ctl.sock");
  auto listener = ipc::listenUnix(path);
  ASSERT_TRUE(listener.ok());
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  std::string before = dbDump();
  pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(10);
    auto client = ipc::BlockingClient::connect(path, std::chrono::seconds(5));
    if (!client.ok()) _exit(11);
    auto read = client->call("status", Json::object(), std::chrono::seconds(5));
    if (!read.ok()) _exit(12);
    auto write = client->call("instance.add", addArgs("evil"), std::chrono::seconds(5));
    if (write.ok()) _exit(13);
    _exit(write.status().code() == StatusCode::kPermissionDenied ? 0 : 14);
  }
  std::unique_ptr<ipc::Endpoint> peer;
  int status = -1;
  bool done = loop_.runUntil([&] {
    if (!peer) {
      int fd = ::accept4(listener->get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        ipc::EndpointOptions o;
        o.local = ipc::Role::kController;
        o.peer = ipc::Role::kCtl;
        o.admin_gid = std::nullopt;
        auto e = ipc::Endpoint::create(loop_.get(), common::UniqueFd(fd), o);
        if (e.ok()) {
          peer = std::move(*e);
          EXPECT_TRUE(handlers_->registerOn(*peer).ok());
        }
      }
    }
    return ::waitpid(child, &status, WNOHANG) == child;
  });
  ASSERT_TRUE(done);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(dbDump(), before);
  peer.reset();
  loop_.spin();
}

}  // namespace
}  // namespace scalws::controller
