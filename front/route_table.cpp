#include "front/route_table.h"

#include "common/log.h"

namespace scalws::front {

std::shared_ptr<const RouteTable> RouteTable::with(const RouteTable& base,
                                                   std::shared_ptr<InstanceRoute> route) {
  auto table = std::make_shared<RouteTable>();
  bool replaced = false;
  for (const std::shared_ptr<InstanceRoute>& r : base.routes_) {
    if (r->instance == route->instance) {
      table->routes_.push_back(route);
      replaced = true;
    } else {
      table->routes_.push_back(r);
    }
  }
  if (!replaced) table->routes_.push_back(std::move(route));
  table->index();
  return table;
}

std::shared_ptr<const RouteTable> RouteTable::without(const RouteTable& base,
                                                      std::string_view instance) {
  auto table = std::make_shared<RouteTable>();
  for (const std::shared_ptr<InstanceRoute>& r : base.routes_) {
    if (r->instance != instance) table->routes_.push_back(r);
  }
  table->index();
  return table;
}

void RouteTable::index() {
  names_ = common::net::HostNameTable();
  for (size_t i = 0; i < routes_.size(); ++i) {
    const InstanceRoute& r = *routes_[i];
    for (const std::string& name : r.names) {
      if (!names_.add(name, static_cast<uint32_t>(i))) {
        LOG_WARN("%s: %s is claimed by two instances; the first keeps it", r.instance.c_str(),
                 name.c_str());
      }
    }
    if (r.is_default) {
      if (names_.defaultOwner() == common::net::HostNameTable::kNone) {
        names_.setDefault(static_cast<uint32_t>(i));
      } else {
        LOG_WARN("%s: a second default instance; the first stays the default", r.instance.c_str());
      }
    }
  }
}

InstanceRoute* RouteTable::find(std::string_view host) const {
  uint32_t owner = names_.find(host);
  return owner == common::net::HostNameTable::kNone ? nullptr : routes_[owner].get();
}

InstanceRoute* RouteTable::fallback() const {
  uint32_t owner = names_.defaultOwner();
  return owner == common::net::HostNameTable::kNone ? nullptr : routes_[owner].get();
}

std::vector<int> RouteTable::channelFds() const {
  std::vector<int> out;
  for (const std::shared_ptr<InstanceRoute>& r : routes_) {
    for (const common::UniqueFd& fd : r->channels) out.push_back(fd.get());
  }
  return out;
}

}  // namespace scalws::front
