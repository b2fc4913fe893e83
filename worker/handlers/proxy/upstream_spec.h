// An [upstream] as the worker uses it: every server a socket address (host names were
// resolved when the config loaded; a name with several addresses is one server per
// address), the timeouts in milliseconds, the hash ring and the TLS client context.
//
// Built once with the config snapshot, which owns it through a shared_ptr; a loop's
// UpstreamPool holds the same pointer, so a reload that keeps an upstream's servers keeps
// its pool (kept connections, health) and only moves it to the new spec.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config/proxy_config.h"
#include "common/status.h"
#include "worker/handlers/proxy/hash_ring.h"
#include "worker/handlers/proxy/upstream_tls.h"

namespace scalws::worker::proxy {

struct ServerSpec {
  sockaddr_storage address{};
  socklen_t address_len = 0;
  bool unix_socket = false;
  // "10.0.0.7:9000", "[::1]:9000", "unix:/run/api.sock": logs, metrics, reports.
  std::string text;
  // Host sent with host = "upstream" and by health probes: the server as configured
  // ("backend.internal:8080"), "localhost" for a unix socket.
  std::string host_header;
  // Verified (and sent as SNI when a name) over TLS: tls.sni, else the configured host.
  std::string tls_name;
  uint32_t weight = 1;
  bool backup = false;
};

struct UpstreamSpec {
  std::string name;
  std::vector<ServerSpec> servers;
  common::config::BalanceMode balance = common::config::BalanceMode::kRoundRobin;
  common::config::HashKeyConfig hash_key;
  HashRing ring;  // primaries only; empty unless balance is hash
  uint32_t keepalive = 32;
  uint64_t keepalive_timeout_ms = 60'000;
  uint32_t keepalive_requests = 10'000;
  uint64_t connect_timeout_ms = 5'000;
  uint64_t read_timeout_ms = 60'000;
  uint64_t send_timeout_ms = 60'000;
  uint32_t max_fails = 3;
  uint64_t fail_timeout_ms = 10'000;
  uint32_t retries = 1;
  std::optional<common::config::HealthCheckConfig> health;
  std::shared_ptr<const UpstreamTlsContext> tls;  // null: plain HTTP

  // Same servers in the same order, and the same TLS settings: a loop's kept connections
  // and health state stay valid when a reload moves to `other`.
  bool sameServers(const UpstreamSpec& other) const;
};

common::Result<std::shared_ptr<const UpstreamSpec>> resolveUpstreamSpec(
    const common::config::UpstreamConfig& config);

}  // namespace scalws::worker::proxy
