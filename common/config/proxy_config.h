// The reverse proxy's part of the config model: the `proxy` route action and the
// [upstream.NAME] tables it names.
//
// Plain values like the rest of site_config.h. Host names in `servers` are resolved when
// the config loads (host_resolver.h), so every server carries the literal addresses it
// stands for; nothing is resolved on the request path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config_types.h"

namespace scalws::common::config {

// route.proxy: the request goes to an [upstream.NAME] over HTTP/1.1. route.app is the same
// action aimed at an app the controller runs: `app` names it, and `upstream` stays empty
// until the worker makes the app's upstream from the controller's grant
// (worker/server/instance_apps.h).
struct ProxyAction {
  // Host sent upstream: the client's ("pass"), the chosen server's address ("upstream"),
  // or a fixed name.
  enum class HostMode { kPass, kUpstream, kFixed };

  std::string upstream;      // an [upstream.NAME] of this config
  std::string app;           // route.app's name; "" for route.proxy
  std::string strip_prefix;  // removed from the path when it starts with it; "" none
  HostMode host_mode = HostMode::kPass;
  std::string host;                                  // kFixed
  std::vector<HeaderPair> set_request_headers;       // replace the client's fields of that name
  std::vector<HeaderPair> set_response_headers;      // replace the upstream's fields of that name
  std::vector<std::string> remove_response_headers;  // lower-case names
  std::optional<Milliseconds> timeout;  // this route's read_timeout (else the upstream's)
  bool via = false;                     // append "Via: 1.1 scalws" both ways
  bool websocket = true;                // tunnel WebSocket upgrades
  std::string cache;                    // a [cache.NAME] answers and stores; "" none
  SourceLocation cache_where;
  SourceLocation where;
};

// One entry of upstream.servers.
struct UpstreamServerConfig {
  enum class Kind { kTcp, kUnix };
  std::string address;  // as written: "10.0.0.7:9000", "[::1]:80", "unix:/run/api.sock"
  Kind kind = Kind::kTcp;
  std::string host;       // kTcp: a name or a literal address, without brackets
  uint16_t port = 0;      // kTcp
  std::string unix_path;  // kUnix: absolute
  uint32_t weight = 1;
  bool backup = false;  // used only while every other server is down
  // kTcp: the literal addresses (canonical, "10.0.0.7", "::1") the host stands for. A
  // name that resolves to several becomes one server per address, as in nginx.
  std::vector<std::string> addresses;
  SourceLocation where;
};

enum class BalanceMode { kRoundRobin, kLeastConn, kHash, kRandomTwo };

struct HashKeyConfig {
  enum class Kind { kClientIp, kHeader, kCookie };
  Kind kind = Kind::kClientIp;
  std::string name;  // kHeader: lower-case field name; kCookie: the cookie's name
};

// upstream.health: active checks, each server probed every `interval`.
struct HealthCheckConfig {
  struct StatusRange {
    uint16_t first = 200;
    uint16_t last = 299;
  };
  std::string path = "/";
  std::string host;  // Host of the probe; "" → the server's address
  Milliseconds interval = 5'000;
  Milliseconds timeout = 2'000;
  std::vector<StatusRange> expect = {StatusRange{}};  // "2xx"
  std::string expect_text = "2xx";                    // as written, for reports
  uint32_t fails = 3;   // consecutive failed probes that mark a server down
  uint32_t passes = 2;  // consecutive passed probes that bring it back
};

// upstream.tls: HTTPS to the servers.
struct UpstreamTlsConfig {
  bool verify = true;
  std::string ca;   // PEM bundle; "" → the system's default paths
  std::string sni;  // server name sent and verified; "" → each server's host when a name
};

struct UpstreamConfig {
  static constexpr size_t kMaxServers = 64;  // addresses, after resolution
  // The name of the upstream made for route.app's app NAME: no [upstream] table can take
  // it (a ':' is not allowed in those names).
  static std::string appUpstreamName(const std::string& app) { return "app:" + app; }

  std::string name;
  std::vector<UpstreamServerConfig> servers;  // as written; at most kMaxServers addresses
  BalanceMode balance = BalanceMode::kRoundRobin;
  HashKeyConfig hash_key;
  uint32_t keepalive = 32;  // idle kept connections per event loop; 0: none kept
  Milliseconds keepalive_timeout = 60'000;
  uint32_t keepalive_requests = 10'000;  // requests per kept connection
  Milliseconds connect_timeout = 5'000;
  Milliseconds read_timeout = 60'000;  // between two reads (504 before the head)
  Milliseconds send_timeout = 60'000;  // between two writes
  uint32_t max_fails = 3;              // failures within fail_timeout that mark it down; 0: off
  Milliseconds fail_timeout = 10'000;  // that window, and how long a server stays down
  uint32_t retries = 1;                // further servers tried after a failure
  std::optional<HealthCheckConfig> health;
  std::optional<UpstreamTlsConfig> tls;
  SourceLocation where;
};

}  // namespace scalws::common::config
