// A test's InstanceRoute with `loops` worker loops of slot 0, each channel a socketpair:
// the front holds one end (in the route), the test the other (the worker's end).
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <memory>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "front/route_table.h"

namespace scalws::front::test {

struct RouteWithChannels {
  std::shared_ptr<InstanceRoute> route;
  std::vector<common::UniqueFd> workers;  // loop i's end, in loop order
};

inline RouteWithChannels routeWithChannels(const std::string& instance,
                                           std::vector<std::string> names, bool is_default,
                                           uint32_t loops) {
  RouteWithChannels out;
  out.route = std::make_shared<InstanceRoute>();
  out.route->instance = instance;
  out.route->names = std::move(names);
  out.route->is_default = is_default;
  for (uint32_t i = 0; i < loops; ++i) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
    out.route->channels.emplace_back(fds[0]);
    out.route->channel_ids.push_back({0, i});
    out.workers.emplace_back(fds[1]);
  }
  return out;
}

}  // namespace scalws::front::test
