// RouteTable: the front's view of its address — which instance claims which name, which is
// the default, and the channels to each instance's worker loops.
//
// A table is built whole and then only read: an update (front.route / front.unroute) makes
// a new table from the old one with one instance's entry replaced, and the front swaps it
// in between two connections, so a connection is always routed by one consistent table and
// no other instance's connections notice. Entries are shared between successive tables
// (shared_ptr), so an update copies pointers, not descriptors; an entry's channels close
// when the last table holding it goes.
//
// Within an instance, connections are spread round-robin over its channels; a channel
// whose queue is full (the worker is behind) is skipped for that connection.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/net/host_name_table.h"
#include "common/unique_fd.h"
#include "ipc/front_messages.h"

namespace scalws::front {

struct InstanceRoute {
  std::string instance;
  std::vector<std::string> names;
  bool is_default = false;
  std::vector<ipc::FrontChannel> channel_ids;
  std::vector<common::UniqueFd> channels;
  size_t next = 0;  // round-robin cursor (the front is single-threaded)
};

class RouteTable {
 public:
  RouteTable() = default;

  // A copy of `base` with `route` in place of the entry of the same instance (or added).
  // A name already claimed by another instance in `base` stays with it (the controller
  // refuses such configs; a table must still be unambiguous); so does the default.
  static std::shared_ptr<const RouteTable> with(const RouteTable& base,
                                                std::shared_ptr<InstanceRoute> route);
  // A copy of `base` without `instance`.
  static std::shared_ptr<const RouteTable> without(const RouteTable& base,
                                                   std::string_view instance);

  // The instance `host` goes to ("" for no name: the default), or null when none.
  InstanceRoute* find(std::string_view host) const;
  // The default instance, or null.
  InstanceRoute* fallback() const;

  const std::vector<std::shared_ptr<InstanceRoute>>& routes() const { return routes_; }
  // Every channel descriptor the table holds (for the attach hello).
  std::vector<int> channelFds() const;

 private:
  void index();

  std::vector<std::shared_ptr<InstanceRoute>> routes_;
  common::net::HostNameTable names_;
};

}  // namespace scalws::front
