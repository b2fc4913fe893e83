// The `proxy` action: hands the request to a ProxyExchange on this loop's side of the
// route's upstream (UpstreamPools, a LoopLocal), for HTTP/1.1, HTTP/2 and TLS clients alike.
//
// Built with the config snapshot (which owns the UpstreamSpec it shares) and shared by
// every loop of the process; per-loop state lives in the loop's UpstreamPools.
#pragma once

#include <memory>

#include "common/config/site_config.h"
#include "worker/handlers/proxy/proxy_route.h"
#include "worker/http/handler.h"

namespace scalws::worker::proxy {

class ProxyHandler final : public Handler {
 public:
  ProxyHandler(const common::config::ProxyAction& action,
               std::shared_ptr<const UpstreamSpec> upstream);

  void handle(Request& request, ResponseWriter& writer) noexcept override;
  std::string_view actionName() const noexcept override { return "proxy"; }
  bool consumesBody() const noexcept override { return true; }

  const ProxyRoute& route() const { return route_; }

 private:
  ProxyRoute route_;
};

}  // namespace scalws::worker::proxy
