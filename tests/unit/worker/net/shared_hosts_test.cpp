// SharedHosts: the names a worker behind a front answers, as the controller sent them.
#include "worker/net/shared_hosts.h"

#include <gtest/gtest.h>

namespace scalws::worker {
namespace {

using Fallback = ipc::SharedAddressNames::Fallback;

ipc::SharedAddressNames names(Fallback fallback) {
  return {"127.0.0.1:443",
          443,
          {"shop.example", "*.shop.example"},
          {"api.shop.example", "blog.example"},
          fallback};
}

TEST(SharedHosts, ItsNamesAndNotAnothersEvenUnderItsWildcard) {
  auto hosts = SharedHosts::build(names(Fallback::kNone));
  EXPECT_TRUE(hosts->serves("shop.example"));
  EXPECT_TRUE(hosts->serves("www.shop.example"));
  EXPECT_TRUE(hosts->serves("shop.example."));
  EXPECT_FALSE(hosts->serves("api.shop.example"));  // exact beats wildcard, as in the front
  EXPECT_FALSE(hosts->serves("blog.example"));
  EXPECT_FALSE(hosts->serves("nobody.example"));
  EXPECT_FALSE(hosts->serves(""));
}

TEST(SharedHosts, NamesNobodyClaimsFollowTheDefault) {
  auto mine = SharedHosts::build(names(Fallback::kMine));
  EXPECT_TRUE(mine->serves("nobody.example"));
  EXPECT_TRUE(mine->serves(""));  // HTTP/1.0 without Host, h2c to the default
  EXPECT_TRUE(mine->serves("127.0.0.1"));
  EXPECT_FALSE(mine->serves("blog.example"));
  auto other = SharedHosts::build(names(Fallback::kOther));
  EXPECT_FALSE(other->serves("nobody.example"));
  EXPECT_TRUE(other->serves("shop.example"));
}

TEST(SharedHosts, NothingSentServesNothing) {
  auto empty = SharedHosts::build({"127.0.0.1:443", 443, {}, {}, Fallback::kNone});
  EXPECT_FALSE(empty->serves("shop.example"));
  EXPECT_FALSE(empty->serves(""));
}

}  // namespace
}  // namespace scalws::worker
