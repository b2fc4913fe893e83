// The pool.* control ops over a real channel, with a real StateStore, a fake InstanceRuntime
// and a fake PoolRuntime (no php-fpm here: tests/integration/test_controller_pools.py runs
// the real one). Every refused request must leave the DB files byte for byte as they were.
#include "controller/server/pool_handlers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "controller/server/control_handlers.h"
#include "controller/state/state_store.h"
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

class NoInstances : public InstanceRuntime {
 public:
  void instanceStored(const state::InstanceRecord&) override {}
  void start(const std::string&, Commit commit, Done done) override { done(commit()); }
  void stop(const std::string&, Done done) override { done(Status()); }
  void restart(const std::string&, Commit commit, Done done) override { done(commit()); }
  void reload(const std::string&, Done done) override { done(Status()); }
  void remove(const std::string&, Commit commit, Done done) override { done(commit()); }
  std::string runtimeState(const std::string&) const override { return "stopped"; }
  size_t processCount(const std::string&) const override { return 0; }
  Json processes(const std::string&) const override { return Json::array(); }
  std::optional<common::config::SiteConfig> runningSite(const std::string&) const override {
    return std::nullopt;
  }
  bool reloadPending(const std::string&) const override { return false; }
  std::optional<std::vector<ipc::PhpPoolGrant>> runningPools(
      const std::string& name) const override {
    auto it = running.find(name);
    if (it == running.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, std::vector<ipc::PhpPoolGrant>> running;
};

class FakePools : public PoolRuntime {
 public:
  std::string managedAddress(const std::string& name) const override {
    return "unix:/run/scalws/php/" + name + ".sock";
  }
  std::string defaultPhpFpm() const override { return "/bin/true"; }
  void startPool(const state::PoolRecord& pool, Done done) override {
    calls.push_back("start " + pool.name);
    started = pool;
    if (start_error.ok()) running[pool.name] = true;
    done(start_error);
  }
  void removePool(const std::string& name, Done done) override {
    calls.push_back("remove " + name);
    running.erase(name);
    done(Status());
  }
  void assignmentsChanged() override { calls.push_back("assignments"); }
  Json poolStatus(const std::string& name) const override {
    if (running.count(name) == 0) return nullptr;
    return {{"state", "running"}, {"pid", 4242}};
  }

  std::vector<std::string> calls;
  state::PoolRecord started;
  Status start_error;
  std::map<std::string, bool> running;
};

std::string phpSite(int port) {
  return "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port) +
         "\"\n[[route]]\nphp = { pool = \"main\", root = \"/srv/www\" }\n";
}

std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class PoolHandlersTest : public ::testing::Test {
 protected:
  PoolHandlersTest() {
    auto store = state::StateStore::open(state::StateStore::dbPath(dir_.path()),
                                         cpu::CpuAllocator(common::CpuSet{0, 1, 2, 3}));
    EXPECT_TRUE(store.ok()) << store.status().message();
    store_ = std::make_unique<state::StateStore>(std::move(*store));
    ControllerInfo info;
    info.state_dir = dir_.path();
    handlers_ = std::make_unique<ControlHandlers>(*store_, instances_, accounts_, info, &pools_);
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
  ~PoolHandlersTest() override {
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

  void addInstance(const std::string& name, uint32_t cpus = 1) {
    Result<Json> added = call("instance.add", {{"name", name},
                                               {"config", phpSite(8080 + ++instances_added_)},
                                               {"config_path", "/etc/" + name + ".toml"},
                                               {"cpus", cpus},
                                               {"shared_cpus", true}});
    ASSERT_TRUE(added.ok()) << added.status().message();
  }

  std::string dbBytes() {
    std::string db = state::StateStore::dbPath(dir_.path());
    return fileBytes(db) + "|" + fileBytes(db + "-wal");
  }

  scalws::testing::TempDir dir_;
  ipc::testing::TestLoop loop_;
  FakeAccounts accounts_;
  NoInstances instances_;
  FakePools pools_;
  std::unique_ptr<state::StateStore> store_;
  std::unique_ptr<ControlHandlers> handlers_;
  std::unique_ptr<ipc::Endpoint> server_;
  std::unique_ptr<ipc::Endpoint> client_;
  int instances_added_ = 0;
};

TEST_F(PoolHandlersTest, ExternalPoolIsStoredAndDescribed) {
  Result<Json> added =
      call("pool.add", {{"name", "ext"}, {"address", "tcp:localhost:9000"}, {"max_conns", 8}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ((*added)["kind"], "external");
  EXPECT_EQ((*added)["address"], "tcp:localhost:9000");
  EXPECT_EQ((*added)["max_conns"], 8);
  EXPECT_EQ((*added)["state"], "external");
  EXPECT_TRUE((*added)["instance"].is_null());
  EXPECT_TRUE(pools_.calls.empty());  // nothing to run for an external pool

  Result<Json> unknown_conns = call("pool.add", {{"name", "any"}, {"address", "unix:/run/x.sock"}});
  ASSERT_TRUE(unknown_conns.ok());
  EXPECT_EQ((*unknown_conns)["max_conns"], 0);

  Result<Json> list = call("pool.list", Json::object());
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["pools"].size(), 2u);
  EXPECT_EQ((*list)["pools"][0]["name"], "any");
  Result<Json> shown = call("pool.show", {{"name", "ext"}});
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ((*shown)["address"], "tcp:localhost:9000");
  EXPECT_EQ(call("pool.show", {{"name", "nope"}}).status().code(), StatusCode::kNotFound);
}

TEST_F(PoolHandlersTest, ManagedPoolIsStoredOnlyOnceItRuns) {
  Result<Json> added =
      call("pool.add", {{"name", "shop"}, {"managed", true}, {"user", "nobody"}, {"processes", 4}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(pools_.calls, std::vector<std::string>{"start shop"});
  EXPECT_EQ(pools_.started.address, "unix:/run/scalws/php/shop.sock");
  EXPECT_EQ(pools_.started.max_conns, 4u);  // max_conns = processes
  EXPECT_EQ((*added)["kind"], "managed");
  EXPECT_EQ((*added)["state"], "running");
  EXPECT_EQ((*added)["process"]["pid"], 4242);
  EXPECT_EQ((*added)["user"], "nobody");
  EXPECT_EQ((*added)["php_fpm"], "/bin/true");

  std::string before = dbBytes();
  pools_.start_error = Status(StatusCode::kFailedPrecondition, "php-fpm exited with status 78");
  Result<Json> failed = call(
      "pool.add", {{"name", "broken"}, {"managed", true}, {"user", "nobody"}, {"processes", 2}});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("status 78"), std::string::npos);
  EXPECT_EQ(dbBytes(), before);
  EXPECT_EQ(store_->getPool("broken").status().code(), StatusCode::kNotFound);
}

TEST_F(PoolHandlersTest, RefusedAddsChangeNothing) {
  ASSERT_TRUE(call("pool.add", {{"name", "taken"}, {"address", "unix:/run/a.sock"}}).ok());
  std::string before = dbBytes();
  struct Case {
    const char* what;
    Json args;
    StatusCode code;
  };
  std::vector<Case> cases = {
      {"taken", {{"name", "taken"}, {"address", "unix:/run/b.sock"}}, StatusCode::kAlreadyExists},
      {"bad name",
       {{"name", "../x"}, {"address", "unix:/run/b.sock"}},
       StatusCode::kInvalidArgument},
      {"relative socket",
       {{"name", "a"}, {"address", "unix:run/b.sock"}},
       StatusCode::kInvalidArgument},
      {"host name",
       {{"name", "a"}, {"address", "tcp:php.example:9000"}},
       StatusCode::kInvalidArgument},
      {"no address", {{"name", "a"}}, StatusCode::kInvalidArgument},
      {"zero conns",
       {{"name", "a"}, {"address", "unix:/r.sock"}, {"max_conns", 0}},
       StatusCode::kInvalidArgument},
      {"user on external",
       {{"name", "a"}, {"address", "unix:/r.sock"}, {"user", "nobody"}},
       StatusCode::kInvalidArgument},
      {"root",
       {{"name", "a"}, {"managed", true}, {"user", "root"}, {"processes", 2}},
       StatusCode::kInvalidArgument},
      {"unknown user",
       {{"name", "a"}, {"managed", true}, {"user", "no-such-user-here"}, {"processes", 2}},
       StatusCode::kInvalidArgument},
      {"zero processes",
       {{"name", "a"}, {"managed", true}, {"user", "nobody"}, {"processes", 0}},
       StatusCode::kInvalidArgument},
      {"address on managed",
       {{"name", "a"},
        {"managed", true},
        {"user", "nobody"},
        {"processes", 2},
        {"address", "unix:/x.sock"}},
       StatusCode::kInvalidArgument},
      {"php-fpm not allowed",
       {{"name", "a"},
        {"managed", true},
        {"user", "nobody"},
        {"processes", 2},
        {"php_fpm", "/bin/sh"}},
       StatusCode::kPermissionDenied},
      {"named global",
       {{"name", "global"}, {"managed", true}, {"user", "nobody"}, {"processes", 2}},
       StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    Result<Json> r = call("pool.add", c.args);
    EXPECT_FALSE(r.ok()) << c.what;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), c.code) << c.what << ": " << r.status().message();
    }
    EXPECT_EQ(dbBytes(), before) << c.what;
  }
  EXPECT_TRUE(pools_.calls.empty());
}

TEST_F(PoolHandlersTest, AssignBindsTheRouteNameAndReplacesTheHolder) {
  addInstance("site", 4);
  ASSERT_TRUE(
      call("pool.add", {{"name", "a"}, {"address", "unix:/run/a.sock"}, {"max_conns", 8}}).ok());
  ASSERT_TRUE(
      call("pool.add", {{"name", "b"}, {"address", "unix:/run/b.sock"}, {"max_conns", 3}}).ok());
  Result<Json> first = call("pool.assign", {{"name", "a"}, {"instance", "site"}, {"as", "main"}});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ((*first)["instance"], "site");
  EXPECT_EQ((*first)["as"], "main");
  EXPECT_EQ((*first)["share"], 2);  // 8 connections over the instance's 4 loops
  EXPECT_TRUE((*first)["replaced"].is_null());
  EXPECT_EQ(pools_.calls, std::vector<std::string>{"assignments"});

  Result<Json> shown = call("instance.show", {{"name", "site"}});
  ASSERT_TRUE(shown.ok());
  ASSERT_EQ((*shown)["php_pools"].size(), 1u);
  EXPECT_EQ((*shown)["php_pools"][0]["pool"], "a");
  EXPECT_EQ((*shown)["php_pools"][0]["share"], 2);
  EXPECT_TRUE((*shown)["unbound_pools"].empty());
  // The workers run with "a": nothing to reload yet.
  instances_.running["site"] = {ipc::PhpPoolGrant{"main", "unix:/run/a.sock", 8, 2}};
  EXPECT_EQ((*call("instance.show", {{"name", "site"}}))["reload_pending"], false);

  Result<Json> second = call("pool.assign", {{"name", "b"}, {"instance", "site"}, {"as", "main"}});
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ((*second)["replaced"], "a");
  EXPECT_EQ((*second)["share"], 1);  // 3 / 4 loops, at least 1
  EXPECT_EQ(store_->getPool("a")->instance, std::nullopt);
  EXPECT_EQ((*call("instance.show", {{"name", "site"}}))["reload_pending"], true);

  // Taken elsewhere: refused, nothing changes.
  addInstance("other");
  std::string before = dbBytes();
  Result<Json> steal = call("pool.assign", {{"name", "b"}, {"instance", "other"}});
  EXPECT_EQ(steal.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(call("pool.assign", {{"name", "b"}, {"instance", "ghost"}}).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(
      call("pool.assign", {{"name", "a"}, {"instance", "other"}, {"as", "-x"}}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(dbBytes(), before);
}

TEST_F(PoolHandlersTest, RemoveIsRefusedWhileAssignedAndStopsAManagedPool) {
  addInstance("site");
  ASSERT_TRUE(
      call("pool.add", {{"name", "m"}, {"managed", true}, {"user", "nobody"}, {"processes", 2}})
          .ok());
  ASSERT_TRUE(call("pool.assign", {{"name", "m"}, {"instance", "site"}, {"as", "main"}}).ok());
  std::string before = dbBytes();
  Result<Json> refused = call("pool.remove", {{"name", "m"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("assigned to instance 'site'"), std::string::npos);
  EXPECT_EQ(dbBytes(), before);
  EXPECT_EQ(pools_.running.count("m"), 1u);

  Result<Json> released = call("pool.release", {{"name", "m"}});
  ASSERT_TRUE(released.ok());
  EXPECT_TRUE((*released)["instance"].is_null());
  Result<Json> unbound = call("instance.show", {{"name", "site"}});
  EXPECT_EQ((*unbound)["unbound_pools"], Json::array({"main"}));

  // Released, but the running workers still use it until they are reloaded.
  instances_.running["site"] = {ipc::PhpPoolGrant{"main", "unix:/run/scalws/php/m.sock", 2, 2}};
  before = dbBytes();
  Result<Json> in_use = call("pool.remove", {{"name", "m"}});
  ASSERT_FALSE(in_use.ok());
  EXPECT_NE(in_use.status().message().find("still used by the running workers of instance "
                                           "'site' (as main)"),
            std::string::npos)
      << in_use.status().message();
  EXPECT_EQ(dbBytes(), before);
  instances_.running["site"] = {};
  ASSERT_TRUE(call("pool.remove", {{"name", "m"}}).ok());
  EXPECT_EQ(pools_.calls.back(), "remove m");
  EXPECT_EQ(store_->getPool("m").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(call("pool.remove", {{"name", "m"}}).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace scalws::controller
