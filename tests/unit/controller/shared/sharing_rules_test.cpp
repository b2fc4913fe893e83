// The rules two instances' listeners must keep to share an address, with the names each
// claims given by the test (claimed_names.h reads certificates; here they are made up).
#include "controller/shared/sharing_rules.h"

#include <gtest/gtest.h>

#include <map>

#include "common/config/config_loader.h"

namespace scalws::controller {
namespace {

using common::Result;
using common::config::ListenConfig;
using common::config::SiteConfig;

SiteConfig load(const std::string& listens) {
  Result<SiteConfig> site = common::config::loadSiteConfigString(
      listens + "[[route]]\nrespond = { body = \"x\" }\n", "/etc/scalws/t.toml");
  EXPECT_TRUE(site.ok()) << site.status().message();
  return site.ok() ? std::move(site).value() : SiteConfig();
}

std::string plain(const std::string& address, const std::string& extra) {
  return "[[listen]]\naddress = \"" + address + "\"\n" + extra + "\n";
}

std::string tls(const std::string& address, const std::string& extra) {
  return "[[listen]]\naddress = \"" + address +
         "\"\ntls = { cert = \"/c.pem\", key = \"/k.pem\" }\n" + extra + "\n";
}

// A listener's own names, else (TLS) what its "certificate" holds here.
Result<std::vector<std::string>> namesOf(const ListenConfig& l) {
  if (!l.names.empty() || !l.tls) return l.names;
  return std::vector<std::string>{"cert.example", "*.cert.example"};
}

std::string conflict(const std::string& mine, const std::string& theirs) {
  Result<std::optional<std::string>> r =
      sharingConflict(load(mine), "other", load(theirs), namesOf);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() && *r ? **r : "";
}

TEST(SharingRules, DisjointNamesShareAnAddress) {
  EXPECT_EQ(conflict(plain("127.0.0.1:80", "names = [\"a.example\"]"),
                     plain("127.0.0.1:80", "names = [\"b.example\", \"*.a.example\"]")),
            "");
  EXPECT_EQ(conflict(plain("127.0.0.1:80", "names = [\"a.example\"]"),
                     plain("127.0.0.1:80", "default = true")),
            "");
  // TLS listeners claim their certificates' names by default.
  EXPECT_EQ(conflict(tls("127.0.0.1:443", "names = [\"a.example\"]"), tls("127.0.0.1:443", "")),
            "");
  // Other ports, or other hosts on one port, never meet.
  EXPECT_EQ(conflict(plain("127.0.0.1:80", ""), plain("127.0.0.1:81", "")), "");
  EXPECT_EQ(conflict(plain("127.0.0.1:80", ""), plain("127.0.0.2:80", "")), "");
}

TEST(SharingRules, ANameClaimedTwiceIsRefusedNamingTheOther) {
  EXPECT_EQ(conflict(plain("127.0.0.1:80", "names = [\"x.example\", \"a.example\"]"),
                     plain("127.0.0.1:80", "names = [\"a.example\"]")),
            "address 127.0.0.1:80: name a.example is already claimed by instance other");
  EXPECT_EQ(
      conflict(tls("127.0.0.1:443", "names = [\"*.cert.example\"]"), tls("127.0.0.1:443", "")),
      "address 127.0.0.1:443: name *.cert.example is already claimed by instance other");
}

TEST(SharingRules, OneDefaultPerAddress) {
  EXPECT_EQ(conflict(plain("127.0.0.1:80", "default = true"),
                     plain("127.0.0.1:80", "names = [\"b.example\"]\ndefault = true")),
            "address 127.0.0.1:80: instance other is already the default there");
}

TEST(SharingRules, AListenerThatClaimsNothingWouldNeverBeReached) {
  EXPECT_EQ(conflict(plain("127.0.0.1:80", ""), plain("127.0.0.1:80", "names = [\"b.example\"]")),
            "address 127.0.0.1:80 is shared with instance other: this listener claims no name "
            "(give it `names`, or `default = true`)");
  EXPECT_EQ(conflict(plain("127.0.0.1:80", "names = [\"a.example\"]"), plain("127.0.0.1:80", "")),
            "address 127.0.0.1:80 is shared with instance other, whose listener there claims no "
            "name and is not the default (give it `names` or `default = true` first)");
}

TEST(SharingRules, WhatOneFrontCannotServe) {
  EXPECT_EQ(conflict(tls("127.0.0.1:80", "names = [\"a.example\"]"),
                     plain("127.0.0.1:80", "names = [\"b.example\"]")),
            "address 127.0.0.1:80: instance other listens there without TLS and this listener "
            "with (an address is all TLS or all plain)");
#if SCALWS_HTTP3
  EXPECT_EQ(conflict(tls("127.0.0.1:443", "http3 = true\nnames = [\"a.example\"]"),
                     tls("127.0.0.1:443", "names = [\"b.example\"]")),
            "address 127.0.0.1:443: instance other listens there without HTTP/3 and this "
            "listener with (an address serves HTTP/3 to all its instances or to none)");
  EXPECT_EQ(conflict(tls("127.0.0.1:443", "names = [\"a.example\"]"),
                     tls("127.0.0.1:443", "http3 = true\nnames = [\"b.example\"]")),
            "address 127.0.0.1:443: instance other listens there with HTTP/3 and this listener "
            "without (an address serves HTTP/3 to all its instances or to none)");
  EXPECT_EQ(conflict(tls("127.0.0.1:443", "http3 = true\nnames = [\"a.example\"]"),
                     tls("127.0.0.1:443", "http3 = true\nnames = [\"b.example\"]")),
            "");
#endif
  EXPECT_EQ(conflict(plain("127.0.0.1:80", "names = [\"a.example\"]"),
                     plain("127.0.0.1:80", "names = [\"b.example\"]\nproxy_protocol = true")),
            "address 127.0.0.1:80: a PROXY protocol listener needs an address of its own, and "
            "instance other listens there too");
  // A wildcard host and a literal one on the same port: two sockets, not one address.
  EXPECT_EQ(conflict(plain("0.0.0.0:80", "names = [\"a.example\"]"),
                     plain("127.0.0.1:80", "names = [\"b.example\"]")),
            "address 0.0.0.0:80 is already used by instance other");
}

TEST(SharingRules, NamesThatCannotBeLearntAreAnError) {
  auto broken = [](const ListenConfig&) -> Result<std::vector<std::string>> {
    return common::invalidArgument("cannot read certificate /c.pem");
  };
  Result<std::optional<std::string>> r = sharingConflict(load(tls("127.0.0.1:443", "")), "other",
                                                         load(tls("127.0.0.1:443", "")), broken);
  EXPECT_FALSE(r.ok());
}

TEST(SharingRules, TheAddressKey) {
  SiteConfig site = load(plain("127.0.0.1:80", "") + plain("[::1]:80", ""));
  EXPECT_EQ(sharedAddressKey(site.listens[0]), "127.0.0.1:80");
  EXPECT_EQ(sharedAddressKey(site.listens[1]), "[::1]:80");
}

}  // namespace
}  // namespace scalws::controller
