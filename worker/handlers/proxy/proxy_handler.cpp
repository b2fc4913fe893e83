#include "worker/handlers/proxy/proxy_handler.h"

#include "worker/handlers/proxy/proxy_exchange.h"
#include "worker/handlers/proxy/upstream_pools.h"
#include "worker/http/error_response.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::proxy {

ProxyHandler::ProxyHandler(const common::config::ProxyAction& action,
                           std::shared_ptr<const UpstreamSpec> upstream) {
  route_.read_timeout_ms = action.timeout.value_or(upstream->read_timeout_ms);
  route_.upstream = std::move(upstream);
  route_.strip_prefix = action.strip_prefix;
  route_.host_mode = action.host_mode;
  route_.host = action.host;
  route_.set_request_headers = action.set_request_headers;
  route_.set_response_headers = action.set_response_headers;
  route_.remove_response_headers = action.remove_response_headers;
  route_.via = action.via;
  route_.websocket = action.websocket;
}

void ProxyHandler::handle(Request& request, ResponseWriter& writer) noexcept {
  if (request.method == Method::kConnect &&
      !(route_.websocket && equalsIgnoreCase(request.upgrade, "websocket"))) {
    // A CONNECT that does not open a WebSocket would ask for a raw TCP tunnel to wherever
    // it names: not something a reverse proxy offers.
    const HeaderField allow[] = {{"Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH"}};
    sendError(request, writer, 405, allow);
    return;
  }
  UpstreamPools& pools = request.loop->local<UpstreamPools>();
  UpstreamPool& pool = pools.poolFor(route_.upstream);
  pools.takeExchange().start(request, writer, pool, route_);
}

}  // namespace scalws::worker::proxy
