// The worker channel's messages: each struct survives its own encoder and decoder (through
// text, as on the wire), and each decoder refuses what it must.
#include "ipc/worker_messages.h"

#include <gtest/gtest.h>

namespace scalws::ipc {
namespace {

using common::config::WorkerMode;

Json wire(const Json& j) {
  return Json::parse(j.dump());
}

WorkerSettings settings() {
  WorkerSettings s;
  s.instance = "web";
  s.slot = 1;
  s.mode = WorkerMode::kSingle;
  s.loops = 2;
  s.cpus = common::CpuSet{0, 1};
  s.user = "scalws-web";
  s.config = "[[listen]]\naddress = \"127.0.0.1:8080\"\n";
  s.config_path = "/etc/scalws/web.toml";
  s.php_pools = {{"main", "unix:/run/scalws/php/web.sock", 8, 4}};
  return s;
}

TEST(WorkerMessagesTest, ConfigRoundTrips) {
  ConfigArgs c{settings(), 0, std::string(32, '\x07')};
  auto back = ConfigArgs::decode(wire(c.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->settings, c.settings);
  EXPECT_EQ(back->tls_ticket_secret, c.tls_ticket_secret);
  // Also straight from the encoder, without text in between.
  ASSERT_TRUE(ConfigArgs::decode(c.encode()).ok());
  EXPECT_FALSE(c.encode().contains("secret"));
  c.tls_ticket_secret.clear();
  EXPECT_FALSE(c.encode().contains("tls_ticket_secret"));
}

TEST(WorkerMessagesTest, ConfigRefusesBadSettings) {
  Json good = ConfigArgs{settings(), 0, ""}.encode();
  ASSERT_TRUE(ConfigArgs::decode(good).ok());
  auto refuse = [&](const char* key, Json value) {
    Json j = good;
    if (value.is_discarded()) {
      j.erase(key);
    } else {
      j[key] = value;
    }
    EXPECT_FALSE(ConfigArgs::decode(j).ok()) << key << " = " << value.dump();
  };
  refuse("mode", "threads");
  refuse("loops", 0u);
  refuse("loops", kMaxWorkerLoops + 1);
  refuse("cpus", "3-1");
  refuse("user", "");
  refuse("instance", "");
  refuse("slot", -1);
  refuse("config", 12);
  refuse("controller_uid", Json(Json::value_t::discarded));
  refuse("tls_ticket_secret", "zz");
  refuse("php_pools", Json::array({{{"name", "main"}}}));
  Json multi = good;
  multi["mode"] = "multi";
  EXPECT_FALSE(ConfigArgs::decode(multi).ok());  // multi: exactly one loop
  multi["loops"] = 1u;
  EXPECT_TRUE(ConfigArgs::decode(multi).ok());
}

TEST(WorkerMessagesTest, HelloSpawnedAndAttached) {
  HelloArgs spawned{1234, "web", "00aabb", std::nullopt};
  auto back = HelloArgs::decode(wire(spawned.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->pid, 1234);
  EXPECT_EQ(back->attach_address, "00aabb");
  EXPECT_FALSE(back->attached);

  HelloArgs attached = spawned;
  attached.attached = HelloArgs::Attached{
      true,
      settings(),
      {{{0, "127.0.0.1:8080", 8080, false}, 7}, {{1, "[::]:443", 443, true}, 9}},
      {{"pages", 11}}};
  Json j = wire(attached.encode());
  EXPECT_EQ(j["state"], "stopping");
  back = HelloArgs::decode(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->attached);
  EXPECT_TRUE(back->attached->stopping);
  EXPECT_EQ(back->attached->settings, settings());
  ASSERT_EQ(back->attached->listeners.size(), 2u);
  EXPECT_EQ(back->attached->listeners[1].spec, (ListenerSpec{1, "[::]:443", 443, true}));
  EXPECT_EQ(back->attached->listeners[1].fd, 9);
  EXPECT_EQ(back->attached->caches, (std::vector<CacheAreaReport>{{"pages", 11}}));

  for (const char* key : {"state", "config", "listeners", "mode"}) {
    Json broken = j;
    broken.erase(key);
    EXPECT_FALSE(HelloArgs::decode(broken).ok()) << key;
  }
  Json bad_fd = j;
  bad_fd["listeners"][0]["fd"] = "seven";
  EXPECT_FALSE(HelloArgs::decode(bad_fd).ok());
  Json no_pid = j;
  no_pid["pid"] = 0;
  EXPECT_FALSE(HelloArgs::decode(no_pid).ok());
}

// The cache areas ride after the listener fds; absent on the wire when there are none,
// so a worker of a site without caches reads what it always did.
TEST(WorkerMessagesTest, CacheAreasTravelWithTheListenersAndInReadyAndHello) {
  ListenersArgs l{{{0, "127.0.0.1:8080", 8080, false}}, {"pages", "api.v2"}};
  Json j = wire(l.encode());
  auto back = ListenersArgs::decode(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->caches, l.caches);
  EXPECT_FALSE(wire(ListenersArgs{l.listeners, {}}.encode()).contains("caches"));
  ListenersArgs with_limits{l.listeners, {"pages", "@limits"}};
  auto limits_back = ListenersArgs::decode(wire(with_limits.encode()));
  ASSERT_TRUE(limits_back.ok()) << limits_back.status().message();
  EXPECT_EQ(limits_back->caches, with_limits.caches);
  for (Json bad : {Json("pages"), Json::array({"../x"}), Json::array({""}), Json::array({7}),
                   Json::array({"@other"})}) {
    Json broken = j;
    broken["caches"] = bad;
    EXPECT_FALSE(ListenersArgs::decode(broken).ok()) << bad.dump();
  }
  ReadyArgs ready;
  ready.ok = true;
  ready.pid = 9;
  ready.loops = 1;
  ready.caches = {{"pages", 12}};
  auto ready_back = ReadyArgs::decode(wire(ready.encode()));
  ASSERT_TRUE(ready_back.ok()) << ready_back.status().message();
  EXPECT_EQ(ready_back->caches, ready.caches);
  Json bad_fd = wire(ready.encode());
  bad_fd["caches"][0]["fd"] = -1;
  EXPECT_FALSE(ReadyArgs::decode(bad_fd).ok());
}

TEST(WorkerMessagesTest, MetricsCarryTheCachesSizes) {
  MetricsArgs m;
  m.pid = 5;
  m.caches = {{"pages", 3, 12'000, 40'000}};
  auto back = MetricsArgs::decode(wire(m.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->caches, m.caches);
  Json bad = wire(m.encode());
  bad["caches"][0]["entries"] = "three";
  EXPECT_FALSE(MetricsArgs::decode(bad).ok());
}

TEST(WorkerMessagesTest, ListenersRefuseAPortOfZeroAndALoopTooFar) {
  ListenersArgs l{{{0, "127.0.0.1:8080", 8080, false}, {1, "127.0.0.1:8080", 8080, false}}, {}};
  auto back = ListenersArgs::decode(wire(l.encode()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->listeners, l.listeners);
  Json j = l.encode();
  j["listeners"][0]["port"] = 0;
  EXPECT_FALSE(ListenersArgs::decode(j).ok());
  j = l.encode();
  j["listeners"][0]["loop"] = kMaxWorkerLoops;
  EXPECT_FALSE(ListenersArgs::decode(j).ok());
  EXPECT_FALSE(ListenersArgs::decode(Json::object()).ok());
}

TEST(WorkerMessagesTest, AUdpListenerCarriesItsSteeringIdAndATcpOneNeither) {
  ListenerSpec udp{0, "127.0.0.1:8443", 8443, true};
  udp.quic = true;
  udp.steering = 3;
  ListenersArgs l{{{0, "127.0.0.1:8443", 8443, true}, udp}, {}};
  Json j = wire(l.encode());
  EXPECT_FALSE(j["listeners"][0].contains("quic"));  // what a worker without HTTP/3 sends
  EXPECT_EQ(j["listeners"][1]["quic"], true);
  EXPECT_EQ(j["listeners"][1]["steering"], 3);
  auto back = ListenersArgs::decode(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->listeners, l.listeners);
  Json bad = j;
  bad["listeners"][1].erase("steering");
  EXPECT_FALSE(ListenersArgs::decode(bad).ok());
  bad = j;
  bad["listeners"][1]["steering"] = 0xffff;  // past what a connection ID holds
  EXPECT_FALSE(ListenersArgs::decode(bad).ok());
  bad = j;
  bad["listeners"][1]["quic"] = "yes";
  EXPECT_FALSE(ListenersArgs::decode(bad).ok());
}

TEST(WorkerMessagesTest, ReadyOkOrNot) {
  ReadyArgs ok;
  ok.ok = true;
  ok.pid = 42;
  ok.loops = 2;
  ok.listeners = {{{0, "127.0.0.1:8080", 8080, false}, 5}};
  ok.sandbox.no_new_privs = true;
  ok.sandbox.landlock_paths = {{"/srv/www", "read_only"}};
  auto back = ReadyArgs::decode(wire(ok.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->ok);
  EXPECT_EQ(back->sandbox, ok.sandbox);
  Json no_sandbox = ok.encode();
  no_sandbox["sandbox"] = "trust me";
  EXPECT_FALSE(ReadyArgs::decode(no_sandbox).ok());

  ReadyArgs refused;
  refused.error = "sandbox: no such user";
  back = ReadyArgs::decode(wire(refused.encode()));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->ok);
  EXPECT_EQ(back->error, "sandbox: no such user");
}

TEST(WorkerMessagesTest, ReloadAndMetrics) {
  ReloadArgs r{"x = 1", "/etc/scalws/web.toml", {{"main", "tcp:127.0.0.1:9000", 0, 0}}, {}};
  auto back = ReloadArgs::decode(wire(r.encode()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->php_pools, r.php_pools);
  EXPECT_FALSE(ReloadArgs::decode({{"config", "x"}}).ok());

  MetricsArgs m;
  m.pid = 7;
  m.slot = 3;
  m.metrics.requests_by_class[1] = 11;
  m.metrics.latency[2] = 11;
  auto mb = MetricsArgs::decode(wire(m.encode()));
  ASSERT_TRUE(mb.ok()) << mb.status().message();
  EXPECT_EQ(mb->metrics, m.metrics);
  EXPECT_EQ(mb->slot, 3u);
  EXPECT_TRUE(mb->upstreams.empty());
  EXPECT_FALSE(m.encode().contains("upstreams"));  // a site without a proxy sends none
  Json broken = m.encode();
  broken["metrics"]["bytes_in"] = -1;
  EXPECT_FALSE(MetricsArgs::decode(broken).ok());
}

TEST(WorkerMessagesTest, MetricsCarryTheProxysUpstreams) {
  MetricsArgs m;
  m.pid = 7;
  common::metrics::UpstreamServerMetrics server;
  server.address = "127.0.0.1:9000";
  server.loops = 2;
  server.requests = 40;
  server.responses_5xx = 1;
  m.upstreams.push_back({"api", {server}});
  auto back = MetricsArgs::decode(wire(m.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->upstreams, m.upstreams);
  Json broken = m.encode();
  broken["upstreams"] = "api";
  EXPECT_FALSE(MetricsArgs::decode(broken).ok());
}

}  // namespace
}  // namespace scalws::ipc
