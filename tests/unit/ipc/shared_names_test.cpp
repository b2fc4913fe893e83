// The names a worker behind a front checks hosts against: with `listeners` and on their own.
#include "ipc/shared_names.h"

#include <gtest/gtest.h>

#include "ipc/worker_messages.h"

namespace scalws::ipc {
namespace {

TEST(SharedNamesTest, RoundTripWithTheListeners) {
  ListenerSpec handoff{0, "127.0.0.1:8443", 8443, true};
  handoff.handoff = true;
  ListenersArgs l;
  l.listeners = {handoff};
  l.shared = {{"127.0.0.1:8443",
               8443,
               {"a.example"},
               {"b.example", "*.c.example"},
               SharedAddressNames::Fallback::kOther}};
  Json j = Json::parse(l.encode().dump());
  EXPECT_EQ(j["listeners"][0]["handoff"], true);
  auto back = ListenersArgs::decode(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->listeners, l.listeners);
  EXPECT_EQ(back->shared, l.shared);
  // Absent when nothing is shared: what a worker of an older controller reads.
  ListenersArgs plain;
  plain.listeners = {{0, "127.0.0.1:8080", 8080, false}};
  EXPECT_FALSE(plain.encode().contains("shared"));
  EXPECT_FALSE(plain.encode()["listeners"][0].contains("handoff"));
  ASSERT_TRUE(ListenersArgs::decode(plain.encode())->shared.empty());
}

TEST(SharedNamesTest, DecoderRefusals) {
  Json args = Json::object();
  sharedNamesInto({{"127.0.0.1:80", 80, {"a"}, {}, SharedAddressNames::Fallback::kMine}}, args);
  ASSERT_TRUE(sharedNamesFrom(args).ok());
  Json bad = args;
  bad["shared"][0]["fallback"] = "everyone";
  EXPECT_FALSE(sharedNamesFrom(bad).ok());
  bad = args;
  bad["shared"][0]["port"] = 0;
  EXPECT_FALSE(sharedNamesFrom(bad).ok());
  bad = args;
  bad["shared"][0]["mine"] = Json::array({""});
  EXPECT_FALSE(sharedNamesFrom(bad).ok());
  bad = args;
  bad["shared"] = "x";
  EXPECT_FALSE(sharedNamesFrom(bad).ok());
  // A listener cannot be a UDP socket and a channel at once.
  Json both = {{"listeners", Json::array({{{"loop", 0},
                                           {"address", "127.0.0.1:1"},
                                           {"port", 1},
                                           {"tls", true},
                                           {"quic", true},
                                           {"steering", 0},
                                           {"handoff", true}}})}};
  EXPECT_FALSE(ListenersArgs::decode(both).ok());
}

}  // namespace
}  // namespace scalws::ipc
