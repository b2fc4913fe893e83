// What binding pools and apps to an instance share: the names routes use, those no grant
// has, and the refusal that names the command binding each.
#include "controller/route_bindings.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

using common::config::RouteConfig;
using common::config::SiteConfig;

SiteConfig siteRoutingTo(const std::vector<std::string>& pools) {
  SiteConfig site;
  for (const std::string& pool : pools) {
    RouteConfig route;
    common::config::PhpAction php;
    php.pool = pool;
    route.action = php;
    site.routes.push_back(route);
  }
  site.routes.push_back(RouteConfig());  // one that uses none
  return site;
}

const std::string* routePool(const RouteConfig& route) {
  const auto* php = std::get_if<common::config::PhpAction>(&route.action);
  return php == nullptr ? nullptr : &php->pool;
}

const BindingWords kPoolWords{"pool", "bind POOL", "its routes use unbound pools"};

struct NamedGrant {
  std::string name;
  int n = 0;
};

TEST(RouteBindingsTest, RouteNamesAreEachOnceInRouteOrder) {
  EXPECT_EQ(routeNames(siteRoutingTo({"main", "admin", "main"}), routePool),
            (std::vector<std::string>{"main", "admin"}));
  EXPECT_TRUE(routeNames(siteRoutingTo({}), routePool).empty());
}

TEST(RouteBindingsTest, UnboundNamesKeepTheirOrder) {
  EXPECT_EQ(unboundNames({"c", "a", "b"}, {"a"}), (std::vector<std::string>{"c", "b"}));
  EXPECT_TRUE(unboundNames({"a"}, {"b", "a"}).empty());
}

TEST(RouteBindingsTest, CheckRefusesNamingEachMissingNameAndItsCommand) {
  SiteConfig site = siteRoutingTo({"main", "admin", "api"});
  EXPECT_TRUE(checkRouteNames("shop", site, routePool, {"api", "admin", "main"}, kPoolWords).ok());
  common::Status missing = checkRouteNames("shop", site, routePool, {"admin"}, kPoolWords);
  EXPECT_EQ(missing.code(), common::StatusCode::kFailedPrecondition);
  EXPECT_EQ(missing.message(),
            "instance shop: its routes use unbound pools: pool 'main' (bind POOL shop --as "
            "main); pool 'api' (bind POOL shop --as api)");
}

TEST(RouteBindingsTest, GrantsSortByNameAndGiveTheirNames) {
  std::vector<NamedGrant> grants{{"b", 1}, {"c", 2}, {"a", 3}};
  sortByName(grants);
  EXPECT_EQ(grantNames(grants), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(grants[0].n, 3);
}

}  // namespace
}  // namespace scalws::controller
