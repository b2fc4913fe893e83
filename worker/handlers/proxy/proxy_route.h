// What one proxy route asks of the exchange: its upstream and how the request and response
// heads are rewritten. Built from route.proxy with the config snapshot, immutable, shared by
// every loop (the ProxyHandler owns it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/config/proxy_config.h"
#include "worker/handlers/proxy/upstream_spec.h"

namespace scalws::worker::proxy {

struct ProxyRoute {
  std::shared_ptr<const UpstreamSpec> upstream;
  std::string strip_prefix;  // "" none
  common::config::ProxyAction::HostMode host_mode = common::config::ProxyAction::HostMode::kPass;
  std::string host;                                              // kFixed
  std::vector<common::config::HeaderPair> set_request_headers;   // names lower-case
  std::vector<common::config::HeaderPair> set_response_headers;  // names lower-case
  std::vector<std::string> remove_response_headers;              // lower-case
  uint64_t read_timeout_ms = 60'000;  // route.proxy.timeout, else the upstream's
  bool via = false;
  bool websocket = true;
};

}  // namespace scalws::worker::proxy
