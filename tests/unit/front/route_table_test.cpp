// RouteTable: names, the default, replacing and removing an instance's entry.
#include "front/route_table.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace scalws::front {
namespace {

std::shared_ptr<InstanceRoute> route(const std::string& instance, std::vector<std::string> names,
                                     bool is_default = false, size_t channels = 1) {
  auto r = std::make_shared<InstanceRoute>();
  r->instance = instance;
  r->names = std::move(names);
  r->is_default = is_default;
  for (size_t i = 0; i < channels; ++i) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
    ::close(fds[1]);
    r->channels.emplace_back(fds[0]);
    r->channel_ids.push_back({0, static_cast<uint32_t>(i)});
  }
  return r;
}

TEST(RouteTable, NamesAndTheDefault) {
  RouteTable empty;
  auto t = RouteTable::with(empty, route("shop", {"shop.example", "*.shop.example"}));
  t = RouteTable::with(*t, route("blog", {"blog.example"}));
  ASSERT_NE(t->find("www.shop.example"), nullptr);
  EXPECT_EQ(t->find("www.shop.example")->instance, "shop");
  EXPECT_EQ(t->find("blog.example")->instance, "blog");
  EXPECT_EQ(t->find("other.example"), nullptr);
  EXPECT_EQ(t->fallback(), nullptr);
  t = RouteTable::with(*t, route("catchall", {}, true));
  EXPECT_EQ(t->find("other.example")->instance, "catchall");
  EXPECT_EQ(t->find("")->instance, "catchall");
  EXPECT_EQ(t->fallback()->instance, "catchall");
}

TEST(RouteTable, AnUpdateReplacesOneEntryAndLeavesTheOldTableWhole) {
  RouteTable empty;
  auto first = RouteTable::with(empty, route("shop", {"shop.example"}));
  first = RouteTable::with(*first, route("blog", {"blog.example"}));
  std::shared_ptr<InstanceRoute> blog = first->routes()[1];
  auto second = RouteTable::with(*first, route("shop", {"new.example"}));
  EXPECT_EQ(second->find("shop.example"), nullptr);
  EXPECT_EQ(second->find("new.example")->instance, "shop");
  EXPECT_EQ(second->routes()[1], blog);  // the other instance's entry is shared, not rebuilt
  // The table a connection was routed by is unchanged.
  EXPECT_EQ(first->find("shop.example")->instance, "shop");
  auto third = RouteTable::without(*second, "shop");
  EXPECT_EQ(third->find("new.example"), nullptr);
  EXPECT_EQ(third->routes().size(), 1u);
}

TEST(RouteTable, AClaimedNameStaysWithItsFirstClaimant) {
  RouteTable empty;
  auto t = RouteTable::with(empty, route("a", {"x.example"}, true));
  t = RouteTable::with(*t, route("b", {"x.example", "y.example"}, true));
  EXPECT_EQ(t->find("x.example")->instance, "a");
  EXPECT_EQ(t->find("y.example")->instance, "b");
  EXPECT_EQ(t->fallback()->instance, "a");
}

TEST(RouteTable, ChannelFdsListsEveryChannel) {
  RouteTable empty;
  auto t = RouteTable::with(empty, route("a", {"a.example"}, false, 2));
  t = RouteTable::with(*t, route("b", {"b.example"}, false, 3));
  EXPECT_EQ(t->channelFds().size(), 5u);
  // An instance without channels is known and routes nowhere.
  t = RouteTable::with(*t, route("c", {"c.example"}, false, 0));
  ASSERT_NE(t->find("c.example"), nullptr);
  EXPECT_TRUE(t->find("c.example")->channels.empty());
}

}  // namespace
}  // namespace scalws::front
