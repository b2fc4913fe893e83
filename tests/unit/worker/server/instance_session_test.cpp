// The worker's side of the controller channel (instance mode), driven by a controller-side
// Endpoint on the same loop; the serving part is a fake host.
#include "worker/server/instance_session.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "ipc/unix_socket.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::worker {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using ipc::Json;

constexpr const char* kSite =
    "[[listen]]\naddress = \"127.0.0.1:8080\"\n[[route]]\nrespond = { body = \"one\" }\n";

class FakeHost : public InstanceHost {
 public:
  Result<ipc::SandboxSummary> goLive(const InstancePlan& plan) override {
    ++go_live_calls;
    listeners = plan.listeners.size();
    loops = plan.settings.loops;
    user = plan.settings.user;
    snapshot = plan.snapshot;
    if (!go_live_error.ok()) return go_live_error;
    ipc::SandboxSummary report;
    report.user = "fake";
    report.no_new_privs = true;
    return report;
  }
  void applySnapshot(std::shared_ptr<const ConfigSnapshot> s,
                     std::function<void()> on_applied) override {
    snapshot = std::move(s);
    ++applied;
    on_applied();
  }
  void stop() override { ++stops; }
  void fail(const Status& status) override { failures.push_back(status); }
  Status admits(const ConfigSnapshot& next) override {
    ++admit_checks;
    for (const auto& pool : next.phpPools()) {
      if (pool.address_text.starts_with("tcp:")) {
        return Status(StatusCode::kFailedPrecondition, "outside the sandbox: " + pool.address_text);
      }
    }
    return Status();
  }
  int admit_checks = 0;

  int go_live_calls = 0;
  size_t listeners = 0;
  uint32_t loops = 0;
  std::string user;
  std::shared_ptr<const ConfigSnapshot> snapshot;
  Status go_live_error;
  int applied = 0;
  int stops = 0;
  std::vector<Status> failures;
};

UniqueFd tcpListener() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(::listen(fd.get(), 16), 0);
  return fd;
}

// As the controller's spawn code makes it: autobound, listening.
UniqueFd attachListener() {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(sa_family_t)), 0);
  EXPECT_EQ(::listen(fd.get(), 4), 0);
  return fd;
}

UniqueFd connectHex(const std::string& hex) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t n = hex.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    addr.sun_path[1 + i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  int rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr),
                     static_cast<socklen_t>(sizeof(sa_family_t) + 1 + n));
  EXPECT_EQ(rc, 0) << strerror(errno);
  return fd;
}

Json settings(const std::string& mode = "single", uint32_t loops = 2) {
  return {{"instance", "web"},   {"slot", 0u},
          {"mode", mode},        {"loops", loops},
          {"cpus", "0-1"},       {"user", "nobody"},
          {"config", kSite},     {"config_path", "/etc/scalws/web.toml"},
          {"controller_uid", 0u}};
}

// The controller's end of a channel: records hellos and readies, answers them ok.
class FakeController {
 public:
  FakeController(uv_loop_t* loop, UniqueFd fd) {
    ipc::EndpointOptions o;  // controller <-> worker
    auto e = ipc::Endpoint::create(loop, std::move(fd), o);
    EXPECT_TRUE(e.ok());
    endpoint = std::move(*e);
    Status s = endpoint->registerHandler(
        "hello", [this](const ipc::Message& m, std::vector<UniqueFd>, ipc::Replier r) {
          hellos.push_back(m.args);
          r.ok();
        });
    s = endpoint->registerHandler(
        "ready", [this](const ipc::Message& m, std::vector<UniqueFd>, ipc::Replier r) {
          readies.push_back(m.args);
          r.ok();
        });
    endpoint->onClose([this](const Status&) { closed = true; });
  }
  std::vector<Json> hellos;
  std::vector<Json> readies;
  bool closed = false;
  std::unique_ptr<ipc::Endpoint> endpoint;
};

class InstanceSessionTest : public ::testing::Test {
 protected:
  InstanceSessionTest() {
    auto pair = ipc::socketPair();
    EXPECT_TRUE(pair.ok());
    controller_ = std::make_unique<FakeController>(loop_.get(), std::move(pair->first));
    session_ = std::make_unique<InstanceSession>(loop_.get(), "web", std::move(pair->second),
                                                 attachListener(), host_);
  }
  ~InstanceSessionTest() override {
    session_.reset();
    controller_.reset();
    loop_.spin();
  }

  Result<Json> request(const std::string& op, Json args, std::vector<UniqueFd> fds = {},
                       FakeController* c = nullptr) {
    if (c == nullptr) c = controller_.get();
    std::optional<Result<Json>> reply;
    Status sent = c->endpoint->request(op, std::move(args), std::move(fds),
                                       [&](Result<Json> r) { reply.emplace(std::move(r)); });
    if (!sent.ok()) return sent;
    EXPECT_TRUE(loop_.runUntil([&] { return reply.has_value(); })) << op;
    return reply ? std::move(*reply) : Result<Json>(Status(StatusCode::kTimeout, op));
  }

  std::vector<UniqueFd> twoListeners() {
    std::vector<UniqueFd> fds;
    fds.push_back(tcpListener());
    fds.push_back(tcpListener());
    return fds;
  }
  Json twoListenersJson() {
    return {{"listeners",
             {{{"loop", 0}, {"address", "127.0.0.1:8080"}, {"port", 8080}, {"tls", false}},
              {{"loop", 1}, {"address", "127.0.0.1:8080"}, {"port", 8080}, {"tls", false}}}}};
  }

  // hello -> config -> listeners -> ready.
  void serve() {
    ASSERT_TRUE(session_->start().ok());
    ASSERT_TRUE(loop_.runUntil([&] { return !controller_->hellos.empty(); }));
    ASSERT_TRUE(
        loop_.runUntil([&] { return session_->state() == InstanceSession::State::kAwaitConfig; }));
    ASSERT_TRUE(request("config", settings()).ok());
    ASSERT_TRUE(request("listeners", twoListenersJson(), twoListeners()).ok());
    ASSERT_TRUE(loop_.runUntil([&] { return !controller_->readies.empty(); }));
  }

  ipc::testing::TestLoop loop_;
  FakeHost host_;
  std::unique_ptr<FakeController> controller_;
  std::unique_ptr<InstanceSession> session_;
};

TEST_F(InstanceSessionTest, HandshakeEndsServingAndReady) {
  serve();
  const Json& hello = controller_->hellos.front();
  EXPECT_EQ(hello["instance"], "web");
  EXPECT_EQ(hello["attached"], false);
  EXPECT_EQ(hello["pid"], ::getpid());
  EXPECT_EQ(hello["attach_address"], session_->attachAddress());
  EXPECT_EQ(session_->attachAddress().size(), 10u);  // autobind: 5 bytes, hex-encoded

  EXPECT_EQ(host_.go_live_calls, 1);
  EXPECT_EQ(host_.listeners, 2u);
  EXPECT_EQ(host_.loops, 2u);
  EXPECT_EQ(host_.user, "nobody");
  ASSERT_TRUE(host_.snapshot);
  EXPECT_EQ(host_.snapshot->server().user, "nobody");
  EXPECT_EQ(host_.snapshot->server().workers, 2u);
  EXPECT_EQ(session_->state(), InstanceSession::State::kServing);

  const Json& ready = controller_->readies.front();
  EXPECT_EQ(ready["ok"], true);
  EXPECT_EQ(ready["loops"], 2);
  EXPECT_EQ(ready["sandbox"]["identity"]["user"], "fake");
  EXPECT_EQ(ready["sandbox"]["no_new_privs"], true);
  ASSERT_EQ(ready["listeners"].size(), 2u);
  EXPECT_GE(ready["listeners"][0]["fd"].get<int>(), 0);
  EXPECT_TRUE(host_.failures.empty());
}

TEST_F(InstanceSessionTest, MetricsGoOutOnlyWhileServingAsANotification) {
  std::vector<Json> received;
  ASSERT_TRUE(controller_->endpoint
                  ->registerHandler("metrics", [&](const ipc::Message& m, std::vector<UniqueFd>,
                                                   ipc::Replier) { received.push_back(m.args); })
                  .ok());
  common::metrics::MetricsSnapshot s;
  s.requests_by_class[1] = 7;
  s.latency[3] = 7;
  s.rss_bytes = 4096;
  EXPECT_FALSE(session_->sendMetrics(s));  // not serving yet
  serve();
  ASSERT_TRUE(session_->sendMetrics(s));
  ASSERT_TRUE(loop_.runUntil([&] { return !received.empty(); }));
  EXPECT_EQ(received[0]["pid"], ::getpid());
  EXPECT_EQ(received[0]["slot"], 0);
  Result<common::metrics::MetricsSnapshot> back =
      common::metrics::metricsFromJson(received[0]["metrics"]);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(received[0].contains("upstreams"));  // the site proxies nothing

  common::metrics::UpstreamServerMetrics server;
  server.address = "127.0.0.1:9000";
  server.requests = 3;
  std::vector<common::metrics::UpstreamMetrics> upstreams = {{"api", {server}}};
  ASSERT_TRUE(session_->sendMetrics(s, upstreams));
  ASSERT_TRUE(loop_.runUntil([&] { return received.size() == 2; }));
  Result<std::vector<common::metrics::UpstreamMetrics>> ups =
      common::metrics::upstreamMetricsFromJson(received[1]["upstreams"]);
  ASSERT_TRUE(ups.ok()) << ups.status().message();
  EXPECT_EQ(*ups, upstreams);
  session_->close();
  EXPECT_FALSE(session_->sendMetrics(s));
}

TEST_F(InstanceSessionTest, OutOfOrderAndBadMessagesAreRefused) {
  ASSERT_TRUE(session_->start().ok());
  ASSERT_TRUE(
      loop_.runUntil([&] { return session_->state() == InstanceSession::State::kAwaitConfig; }));
  EXPECT_FALSE(request("listeners", twoListenersJson(), twoListeners()).ok());  // before config
  EXPECT_FALSE(request("reload", {{"config", kSite}, {"config_path", "/x.toml"}}).ok());

  Json bad = settings();
  bad["config"] = "[[listen]]\naddress = 12\n";
  Result<Json> r = request("config", bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("web.toml:2:"), std::string::npos) << r.status().message();
  Json server_table = settings();
  server_table["config"] = std::string("[server]\nworkers = 4\n") + kSite;
  EXPECT_FALSE(request("config", server_table).ok());
  Json other = settings();
  other["instance"] = "api";
  EXPECT_FALSE(request("config", other).ok());
  EXPECT_EQ(session_->state(), InstanceSession::State::kAwaitConfig);

  ASSERT_TRUE(request("config", settings()).ok());
  EXPECT_FALSE(request("config", settings()).ok());  // only once
  // One fd for two entries; then a socket that does not listen.
  std::vector<UniqueFd> one;
  one.push_back(tcpListener());
  EXPECT_FALSE(request("listeners", twoListenersJson(), std::move(one)).ok());
  std::vector<UniqueFd> not_listening;
  not_listening.emplace_back(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  not_listening.push_back(tcpListener());
  EXPECT_FALSE(request("listeners", twoListenersJson(), std::move(not_listening)).ok());
  Json loop_out_of_range = twoListenersJson();
  loop_out_of_range["listeners"][1]["loop"] = 2;
  EXPECT_FALSE(request("listeners", loop_out_of_range, twoListeners()).ok());
  EXPECT_EQ(host_.go_live_calls, 0);
  EXPECT_TRUE(request("listeners", twoListenersJson(), twoListeners()).ok());
}

TEST_F(InstanceSessionTest, AWorkerThatCannotGoLiveSaysWhyAndFails) {
  host_.go_live_error = Status(StatusCode::kPermissionDenied, "sandbox: no such user");
  ASSERT_TRUE(session_->start().ok());
  ASSERT_TRUE(
      loop_.runUntil([&] { return session_->state() == InstanceSession::State::kAwaitConfig; }));
  ASSERT_TRUE(request("config", settings()).ok());
  ASSERT_TRUE(request("listeners", twoListenersJson(), twoListeners()).ok());
  ASSERT_TRUE(loop_.runUntil([&] { return !host_.failures.empty(); }));
  ASSERT_EQ(controller_->readies.size(), 1u);
  EXPECT_EQ(controller_->readies[0]["ok"], false);
  EXPECT_EQ(controller_->readies[0]["error"], "sandbox: no such user");
  EXPECT_EQ(host_.failures[0].message(), "sandbox: no such user");
}

TEST_F(InstanceSessionTest, ReloadSwapsInPlaceOrKeepsTheRunningConfig) {
  serve();
  auto first = host_.snapshot;
  std::string next =
      "[[listen]]\naddress = \"127.0.0.1:8080\"\n[[route]]\nrespond = { body = \"two\" }\n";
  ASSERT_TRUE(request("reload", {{"config", next}, {"config_path", "/etc/scalws/web.toml"}}).ok());
  EXPECT_EQ(host_.applied, 1);
  EXPECT_NE(host_.snapshot, first);

  Result<Json> moved = request(
      "reload", {{"config", "[[listen]]\naddress = \"127.0.0.1:9090\"\n"}, {"config_path", "/x"}});
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.status().message().find("restart"), std::string::npos);
  EXPECT_FALSE(request("reload", {{"config", "nonsense = ["}, {"config_path", "/x"}}).ok());
  EXPECT_FALSE(request("reload", {{"config", next}}).ok());  // no config_path
  EXPECT_EQ(host_.applied, 1);
}

TEST_F(InstanceSessionTest, PhpPoolsComeWithTheConfigAndEveryReload) {
  const std::string php_site =
      "[[listen]]\naddress = \"127.0.0.1:8080\"\n"
      "[[route]]\nphp = { pool = \"main\", root = \"/tmp\" }\n";
  Json pools_a = Json::array({{{"name", "main"},
                               {"address", "unix:/run/scalws/php/a.sock"},
                               {"max_conns", 8},
                               {"share", 4}}});
  ASSERT_TRUE(session_->start().ok());
  ASSERT_TRUE(
      loop_.runUntil([&] { return session_->state() == InstanceSession::State::kAwaitConfig; }));
  Json config = settings();
  config["config"] = php_site;
  Result<Json> unbound = request("config", config);  // no pool for the route
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("as \"main\""), std::string::npos)
      << unbound.status().message();
  config["php_pools"] = pools_a;
  ASSERT_TRUE(request("config", config).ok());
  ASSERT_TRUE(request("listeners", twoListenersJson(), twoListeners()).ok());
  ASSERT_TRUE(loop_.runUntil([&] { return !controller_->readies.empty(); }));
  ASSERT_EQ(host_.snapshot->phpPools().size(), 1u);
  EXPECT_EQ(host_.snapshot->phpPools()[0].share, 4u);

  // Another pool under the same name: swapped in place.
  Json pools_b = pools_a;
  pools_b[0]["address"] = "unix:/run/scalws/php/b.sock";
  pools_b[0]["share"] = 1;
  ASSERT_TRUE(request("reload", {{"config", php_site},
                                 {"config_path", "/etc/scalws/web.toml"},
                                 {"php_pools", pools_b}})
                  .ok());
  EXPECT_EQ(host_.applied, 1);
  EXPECT_EQ(host_.snapshot->phpPools()[0].address_text, "unix:/run/scalws/php/b.sock");
  EXPECT_EQ(host_.snapshot->phpPools()[0].share, 1u);

  // One the sandbox in force cannot reach: refused, the running pools stay.
  Json pools_tcp = pools_a;
  pools_tcp[0]["address"] = "tcp:127.0.0.1:9000";
  Result<Json> refused = request(
      "reload",
      {{"config", php_site}, {"config_path", "/etc/scalws/web.toml"}, {"php_pools", pools_tcp}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("outside the sandbox"), std::string::npos);
  EXPECT_EQ(host_.applied, 1);
  EXPECT_FALSE(request("reload", {{"config", php_site}, {"config_path", "/etc/scalws/web.toml"}})
                   .ok());  // and without its pool the route cannot run
  EXPECT_EQ(host_.applied, 1);

  // A controller that attaches later learns which pools run.
  controller_.reset();
  loop_.spin(5);
  FakeController next(loop_.get(), connectHex(session_->attachAddress()));
  ASSERT_TRUE(loop_.runUntil([&] { return !next.hellos.empty(); }));
  EXPECT_EQ(next.hellos.front()["php_pools"], pools_b);
}

TEST_F(InstanceSessionTest, StopIsAcknowledgedAndHandedToTheHost) {
  serve();
  ASSERT_TRUE(request("stop", Json::object()).ok());
  EXPECT_EQ(host_.stops, 1);
  EXPECT_EQ(session_->state(), InstanceSession::State::kStopping);
  ASSERT_TRUE(request("stop", Json::object()).ok());  // again: nothing more
  EXPECT_EQ(host_.stops, 1);
}

TEST_F(InstanceSessionTest, ChannelLossBeforeServingEndsTheWorker) {
  ASSERT_TRUE(session_->start().ok());
  ASSERT_TRUE(loop_.runUntil([&] { return !controller_->hellos.empty(); }));
  controller_.reset();
  ASSERT_TRUE(loop_.runUntil([&] { return !host_.failures.empty(); }));
  EXPECT_EQ(host_.failures[0].code(), StatusCode::kUnavailable);
}

TEST_F(InstanceSessionTest, ServingSurvivesTheControllerAndANewOneAttaches) {
  serve();
  controller_.reset();  // the controller dies
  loop_.spin(5);
  EXPECT_TRUE(host_.failures.empty());
  EXPECT_FALSE(session_->channelOpen());
  EXPECT_EQ(session_->state(), InstanceSession::State::kServing);

  FakeController next(loop_.get(), connectHex(session_->attachAddress()));
  ASSERT_TRUE(loop_.runUntil([&] { return !next.hellos.empty(); }));
  const Json& hello = next.hellos.front();
  EXPECT_EQ(hello["attached"], true);
  EXPECT_EQ(hello["state"], "serving");
  EXPECT_EQ(hello["config"], kSite);
  EXPECT_EQ(hello["config_path"], "/etc/scalws/web.toml");
  EXPECT_EQ(hello["mode"], "single");
  EXPECT_EQ(hello["loops"], 2);
  EXPECT_EQ(hello["user"], "nobody");
  ASSERT_EQ(hello["listeners"].size(), 2u);
  EXPECT_GE(hello["listeners"][1]["fd"].get<int>(), 0);
  EXPECT_TRUE(session_->channelOpen());

  // A second controller while this one is attached: turned away.
  FakeController third(loop_.get(), connectHex(session_->attachAddress()));
  ASSERT_TRUE(loop_.runUntil([&] { return third.closed; }));
  EXPECT_TRUE(third.hellos.empty());

  // The new channel carries the usual ops.
  ASSERT_TRUE(
      request("reload", {{"config", kSite}, {"config_path", "/etc/scalws/web.toml"}}, {}, &next)
          .ok());
  EXPECT_EQ(host_.applied, 1);
}

TEST(InstanceSettingsTest, ParsesAndRefuses) {
  auto ok = parseInstanceSettings(settings());
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->settings.mode, common::config::WorkerMode::kSingle);
  EXPECT_EQ(ok->settings.cpus, (common::CpuSet{0, 1}));
  EXPECT_EQ(ok->controller_uid, 0u);
  EXPECT_FALSE(parseInstanceSettings(settings("multi", 2)).ok());  // multi: one loop
  EXPECT_FALSE(parseInstanceSettings(settings("single", 0)).ok());
  EXPECT_FALSE(parseInstanceSettings(settings("threads", 1)).ok());
  Json no_user = settings();
  no_user["user"] = "";
  EXPECT_FALSE(parseInstanceSettings(no_user).ok());
  Json bad_cpus = settings();
  bad_cpus["cpus"] = "3-1";
  EXPECT_FALSE(parseInstanceSettings(bad_cpus).ok());
  Json missing = settings();
  missing.erase("controller_uid");
  EXPECT_FALSE(parseInstanceSettings(missing).ok());
}

TEST(InstanceSettingsTest, TakesTheInstanceTicketSecretInHex) {
  EXPECT_TRUE(parseInstanceSettings(settings())->tls_ticket_secret.empty());
  Json with = settings();
  with["tls_ticket_secret"] = std::string(64, 'a');
  auto ok = parseInstanceSettings(with);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->tls_ticket_secret, std::string(32, '\xaa'));
  for (const char* bad : {"abc", "zz", ""}) {
    with["tls_ticket_secret"] = bad;
    EXPECT_FALSE(parseInstanceSettings(with).ok()) << bad;
  }
  with["tls_ticket_secret"] = std::string(62, 'a');  // 31 bytes: too short to seal tickets
  EXPECT_FALSE(parseInstanceSettings(with).ok());
}

}  // namespace
}  // namespace scalws::worker
