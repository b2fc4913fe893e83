// The front channel's messages: each struct survives its encoder and decoder (through text,
// as on the wire), and each decoder refuses what it must.
#include "ipc/front_messages.h"

#include <gtest/gtest.h>

namespace scalws::ipc {
namespace {

Json frontWire(const Json& j) {
  return Json::parse(j.dump());
}

FrontSettings frontSettings() {
  FrontSettings s;
  s.address = "127.0.0.1:8443";
  s.port = 8443;
  s.tls = true;
  s.slot = 1;
  s.header_timeout_ms = 5000;
  s.max_waiting = 77;
  s.user = "scalws-front";
  return s;
}

TEST(FrontMessagesTest, HelloSpawnedAndAttached) {
  FrontHelloArgs h;
  h.pid = 42;
  h.address = "127.0.0.1:8443";
  h.attach_address = "00ab";
  auto back = FrontHelloArgs::decode(frontWire(h.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_FALSE(back->attached.has_value());
  h.attached = FrontHelloArgs::Attached{true, frontSettings(), 5, {7, 8, 9}};
  back = FrontHelloArgs::decode(frontWire(h.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->attached.has_value());
  EXPECT_TRUE(back->attached->stopping);
  EXPECT_EQ(back->attached->settings, frontSettings());
  EXPECT_EQ(back->attached->listener_fd, 5);
  EXPECT_EQ(back->attached->channel_fds, (std::vector<int>{7, 8, 9}));
  Json bad = frontWire(h.encode());
  bad["channel_fds"][1] = -3;
  EXPECT_FALSE(FrontHelloArgs::decode(bad).ok());
  bad = frontWire(h.encode());
  bad["state"] = "dancing";
  EXPECT_FALSE(FrontHelloArgs::decode(bad).ok());
  bad = frontWire(h.encode());
  bad["pid"] = 0;
  EXPECT_FALSE(FrontHelloArgs::decode(bad).ok());
  EXPECT_EQ(back->attached->udp_fd, -1);  // absent: no QUIC
  h.attached->settings.quic = true;
  h.attached->udp_fd = 6;
  back = FrontHelloArgs::decode(frontWire(h.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->attached->settings.quic);
  EXPECT_EQ(back->attached->udp_fd, 6);
}

TEST(FrontMessagesTest, ConfigRefusesWhatCannotWork) {
  FrontConfigArgs c{frontSettings(), 0};
  auto back = FrontConfigArgs::decode(frontWire(c.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->settings, c.settings);
  for (const char* key : {"header_timeout_ms", "max_waiting", "port"}) {
    Json bad = frontWire(c.encode());
    bad["settings"][key] = 0;
    EXPECT_FALSE(FrontConfigArgs::decode(bad).ok()) << key;
  }
  Json bad = frontWire(c.encode());
  bad["settings"]["user"] = "";
  EXPECT_FALSE(FrontConfigArgs::decode(bad).ok());
  bad = frontWire(c.encode());
  bad["settings"].erase("tls");
  EXPECT_FALSE(FrontConfigArgs::decode(bad).ok());
  // A front from before HTTP/3 on shared addresses sends no "quic": false, not refused.
  Json older = frontWire(c.encode());
  older["settings"].erase("quic");
  back = FrontConfigArgs::decode(older);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_FALSE(back->settings.quic);
  bad = frontWire(c.encode());
  bad["settings"]["quic"] = "yes";
  EXPECT_FALSE(FrontConfigArgs::decode(bad).ok());
}

TEST(FrontMessagesTest, ReadyCarriesTheSandboxOrWhyNot) {
  FrontReadyArgs r;
  r.ok = true;
  r.pid = 7;
  r.sandbox.mode = "on";
  r.sandbox.seccomp_profile = "front";
  auto back = FrontReadyArgs::decode(frontWire(r.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->sandbox.seccomp_profile, "front");
  FrontReadyArgs no;
  no.error = "sandbox: no";
  back = FrontReadyArgs::decode(frontWire(no.encode()));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->ok);
  EXPECT_EQ(back->error, "sandbox: no");
  Json bad = frontWire(r.encode());
  bad["sandbox"]["seccomp"]["profile"] = "root";
  EXPECT_FALSE(FrontReadyArgs::decode(bad).ok());
}

TEST(FrontMessagesTest, RouteRoundTripsAndIsBounded) {
  FrontRouteArgs r;
  r.instance = "shop";
  r.names = {"shop.example", "*.shop.example"};
  r.is_default = true;
  r.channels = {{0, 0}, {1, 0}};
  r.more = true;
  auto back = FrontRouteArgs::decode(frontWire(r.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->names, r.names);
  EXPECT_EQ(back->channels, r.channels);
  EXPECT_TRUE(back->is_default);
  EXPECT_TRUE(back->more);
  r.more = false;
  EXPECT_FALSE(r.encode().contains("more"));
  Json bad = frontWire(r.encode());
  bad["channels"] = Json::array();
  for (size_t i = 0; i <= kMaxFdsPerFrame; ++i)
    bad["channels"].push_back({{"slot", 0}, {"loop", 0}});
  EXPECT_FALSE(FrontRouteArgs::decode(bad).ok());  // more than one frame's descriptors
  bad = frontWire(r.encode());
  bad["names"][0] = "";
  EXPECT_FALSE(FrontRouteArgs::decode(bad).ok());
  bad = frontWire(r.encode());
  bad["instance"] = "";
  EXPECT_FALSE(FrontRouteArgs::decode(bad).ok());
}

TEST(FrontMessagesTest, MetricsAndCounters) {
  FrontMetricsArgs m;
  m.pid = 3;
  m.slot = 0;
  m.counters.accepted = 10;
  m.counters.handed_off = 8;
  m.counters.peek_timeouts = 1;
  m.counters.waiting = 1;
  m.handoffs = {{"blog", 5}, {"shop", 3}};
  auto back = FrontMetricsArgs::decode(frontWire(m.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->counters, m.counters);
  EXPECT_EQ(back->handoffs, m.handoffs);
  FrontCounters sum = m.counters;
  sum += m.counters;
  EXPECT_EQ(sum.handed_off, 16u);
  EXPECT_EQ(sum.waiting, 2u);
  Json bad = frontWire(m.encode());
  bad["counters"].erase("invalid");
  EXPECT_FALSE(FrontMetricsArgs::decode(bad).ok());
  bad = frontWire(m.encode());
  bad["handoffs"]["shop"] = -1;
  EXPECT_FALSE(FrontMetricsArgs::decode(bad).ok());
  // QUIC figures round-trip, and a front too old to send them counts none.
  m.counters.quic_routed = 4;
  m.counters.quic_forwarded = 40;
  m.counters.quic_dropped = 1;
  back = FrontMetricsArgs::decode(frontWire(m.encode()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->counters, m.counters);
  Json older = frontWire(m.encode());
  for (const char* key : {"quic_routed", "quic_forwarded", "quic_dropped"}) {
    older["counters"].erase(key);
  }
  back = FrontMetricsArgs::decode(older);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->counters.quic_forwarded, 0u);
  EXPECT_EQ(back->counters.accepted, 10u);
}

}  // namespace
}  // namespace scalws::ipc
