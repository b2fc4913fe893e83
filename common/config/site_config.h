// The configuration model of one site: what `scalwsd --config site.toml` and an instance
// under the controller are described by.
//
// Plain values, built once by the loader (config_loader.h) and then shared read-only by
// every loop of a worker. Every field has the default the README documents; the loader
// fills `where` so later checks (open a docroot, bind an address) can still name the
// file:line:col an operator has to fix. Paths the loader accepts relative (tls cert/key,
// access_log, error_log) are stored absolute, resolved against the config file's directory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/config/cache_config.h"
#include "common/config/config_types.h"
#include "common/config/limit_config.h"
#include "common/config/proxy_config.h"
#include "common/config/response_config.h"
#include "common/config/uri_template.h"
#include "common/regex/regex.h"

namespace scalws::common::config {

enum class WorkerMode { kMulti, kSingle };
enum class SandboxMode { kOff, kOn, kRequired };
enum class SeccompAction { kErrno, kKill };  // refused syscalls: EPERM (logged) or kill
enum class AccessLogFormat { kCombined, kJson };

struct ServerConfig {
  uint32_t workers = 1;
  WorkerMode mode = WorkerMode::kMulti;
  std::vector<uint32_t> cpus;  // empty: no pinning
  std::string user;            // empty: keep the current user
  SandboxMode sandbox = SandboxMode::kOn;
  SeccompAction seccomp_action = SeccompAction::kErrno;

  // Timeouts.
  Milliseconds header_timeout = 10'000;     // whole request head must arrive (408)
  Milliseconds keepalive_timeout = 75'000;  // idle between requests (close quietly); 0: none
  Milliseconds body_timeout = 60'000;       // between two body reads (408)
  Milliseconds send_timeout = 60'000;       // between two successful writes (close)
  Milliseconds shutdown_timeout = 10'000;   // drain on SIGTERM; 0: no drain

  // Limits.
  Bytes max_request_line = 8 * 1024;  // 414 past it
  Bytes max_header_size = 32 * 1024;  // whole header section; 431 past it
  uint32_t max_headers = 100;         // 431 past it
  Bytes max_body = 1024 * 1024;       // default for routes without policy.max_body; 413; 0: no body
  uint32_t max_requests_per_connection = 10'000;
  uint32_t max_connections = 10'000;  // per worker loop

  std::string server_header = "scalws";  // empty: no Server header
  std::string access_log;                // path; empty: off
  // Under the controller the access log is a file the controller opens for the instance;
  // an instance config's `access_log = false` turns it off.
  bool instance_access_log = true;
  AccessLogFormat access_log_format = AccessLogFormat::kCombined;
  std::string error_log;           // path; empty: stderr
  std::string log_level = "info";  // debug, info, notice, warn, error or alert
  // Where request bodies of unknown length wait for a php route once they outgrow memory
  // (unnamed files, O_TMPFILE); the sandbox lets workers write beneath it.
  std::string temp_dir = "/var/tmp";
  SourceLocation where;
};

// One certificate of a TLS listener. Files are read when the worker builds its config
// snapshot (before the sandbox); a file that does not load refuses the config.
struct TlsCertificateConfig {
  std::string cert;  // PEM: the leaf first, then its chain
  std::string key;   // PEM private key matching the leaf
  std::string ocsp;  // DER OCSP response stapled when asked; empty: none
  // SNI names it answers ("example.com", "*.example.com"), lower-case; empty: the DNS names
  // of the certificate itself (subjectAltName, else its common name).
  std::vector<std::string> names;
  SourceLocation where;
};

struct TlsConfig {
  // The default certificate (for clients without SNI or with a name nothing else has).
  std::string cert;
  std::string key;
  std::string ocsp;
  std::vector<std::string> names;
  std::vector<TlsCertificateConfig> certificates;  // more, chosen by SNI

  bool session_tickets = true;
  // A file of at least 32 secret bytes from which ticket keys are derived, so every process
  // (and every host given the same file) can resume each other's sessions; empty: a secret
  // generated once per server start and shared by its processes.
  std::string ticket_key_file;
  Milliseconds ticket_rotation = 3'600'000;  // a new ticket key each period; the last one
                                             // is still accepted
  uint32_t session_cache = 20'480;           // sessions cached per process; 0: no cache
  Milliseconds session_timeout = 3'600'000;  // lifetime of a cached session or a ticket
  SourceLocation where;

  // The default certificate as one entry, then `certificates`.
  std::vector<TlsCertificateConfig> allCertificates() const;
};

// listen.quic: the QUIC side of a TLS listener with http3 = true (a UDP socket on the same
// address and port). Limits are per connection unless said otherwise.
struct QuicConfig {
  // Address validation (RFC 9000 §8.1): a Retry round trip before any handshake work
  // when the loop has more than `retry_above` handshakes in progress (kUnderLoad), or for
  // every new connection (kAlways).
  enum class Retry { kUnderLoad, kAlways };
  Retry retry = Retry::kUnderLoad;
  uint32_t retry_above = 64;
  uint32_t max_streams = 100;               // concurrent request streams
  Bytes stream_window = 256 * 1024;         // request body bytes in flight per stream
  Bytes connection_window = 1024 * 1024;    // request body bytes in flight in all
  Milliseconds idle_timeout = 30'000;       // silent close after this much silence
  Milliseconds handshake_timeout = 10'000;  // a handshake must be done by then
  // 0-RTT (RFC 9001 §4.6): off unless asked; when on, only GET, HEAD and OPTIONS are served
  // from early data, anything else gets 425 Too Early (RFC 8470 §5.2).
  bool early_data = false;
  SourceLocation where;
};

struct ListenConfig {
  std::string address;  // as written: "127.0.0.1:8080", "[::]:8443"
  std::string host;     // parsed: "127.0.0.1", "::"
  uint16_t port = 0;
  std::optional<TlsConfig> tls;
  // Plain listener: accept h2c with prior knowledge (default off). TLS listener: offer h2
  // in ALPN (default on; http2 = false leaves only http/1.1).
  bool http2 = false;
  // TLS listener: serve HTTP/3 over QUIC on the same address (UDP), and advertise it with
  // Alt-Svc on the TCP responses (default off; refused by a build without HTTP/3).
  bool http3 = false;
  QuicConfig quic;
  // Under the controller, when instances share this address (same host and port): the host
  // names this listener claims ("shop.example", "*.shop.example" for one label), lower-
  // case. Empty: a TLS listener claims the DNS names of its certificates, a plain one
  // none. A standalone scalwsd has nobody to share with and does not use them.
  std::vector<std::string> names;
  // On a shared address: names nobody claims go to this instance (at most one per address).
  bool is_default = false;
  // Every connection starts with a PROXY protocol header (v1 or v2) from a load balancer,
  // which names the client: read before anything else (before TLS), refused when absent.
  bool proxy_protocol = false;
  SourceLocation where;
};

struct MatchConfig {
  std::optional<std::string> exact;
  std::optional<std::string> prefix;
  std::optional<std::string> suffix;
  // Lower-cased; "*.example.com" matches any subdomain (not example.com itself).
  std::vector<std::string> hosts;
  std::vector<std::string> methods;  // upper-case tokens; empty: any
  // The connection's: plain ("http") or TLS and QUIC ("https"); kAny: either.
  enum class Scheme { kAny, kHttp, kHttps };
  Scheme scheme = Scheme::kAny;
  // Matched against the decoded path; its groups are $1..$9 of the route's rewrite or
  // redirect. Null: none.
  std::shared_ptr<const Regex> regex;
  std::string regex_text;  // as written
};

struct RespondAction {
  uint16_t status = 200;
  std::string body;
  std::vector<HeaderPair> headers;
};

enum class FollowSymlinks { kNever, kBeneath };

struct OpenFileCacheConfig {
  enum class Mode { kOff, kCheck, kValid } mode = Mode::kCheck;
  Milliseconds valid_for = 0;  // kValid: trust an entry this long without statx
};

struct StaticAction {
  std::string root;  // absolute; a relative one in the file is resolved against its directory
  std::vector<std::string> index = {"index.html"};  // file names (no "/"); empty: none
  OpenFileCacheConfig open_file_cache;
  std::vector<std::string> precompressed;    // "br", "gzip", in preference order
  std::optional<uint64_t> max_age;           // seconds; Cache-Control: max-age=N
  std::map<std::string, std::string> types;  // extension (no dot, lower-case) → MIME type
  FollowSymlinks follow_symlinks = FollowSymlinks::kBeneath;
  bool allow_dotfiles = false;
};

// route.redirect: answers with `status` and Location: `to` expanded for the request.
struct RedirectAction {
  UriTemplate to;
  uint16_t status = 302;  // 301, 302, 303, 307 or 308
};

// The worker's figures as JSON; restrict it with policy.allow.
struct StatusAction {};

// route.php: run a PHP script beneath `root` on a [php_pool.NAME] over FastCGI.
struct PhpAction {
  std::string pool;                 // a [php_pool.NAME] of this config
  std::string root;                 // absolute; the DOCUMENT_ROOT the scripts live in
  std::string index = "index.php";  // file name tried for paths ending in "/"; empty: none
  std::optional<std::string> front_controller;  // "/index.php": runs when no script matches
  SourceLocation where;
};

// [php_pool.NAME]: a PHP-FPM pool the worker talks FastCGI to.
struct PhpPoolConfig {
  enum class Kind { kUnix, kTcp };
  std::string name;
  std::string address;  // as written: "unix:/run/php/fpm.sock", "tcp:127.0.0.1:9000"
  Kind kind = Kind::kUnix;
  std::string unix_path;  // kUnix: absolute
  std::string host;       // kTcp: a literal address, canonical ("127.0.0.1", "::1")
  uint16_t port = 0;      // kTcp
  // Known PHP process count: connections are kept (FCGI_KEEP_CONN) and the instance opens
  // at most this many in total. Absent: one connection per request, none kept.
  std::optional<uint32_t> max_conns;
  Milliseconds timeout = 60'000;       // connect, and between two reads/writes (504)
  Milliseconds queue_timeout = 5'000;  // waiting for a free connection (503)
  uint32_t queue = 256;                // requests one loop may hold waiting (503 past it)
  SourceLocation where;
};

struct Cidr {
  std::string text;  // as written
  bool v6 = false;
  uint8_t addr[16] = {};
  uint8_t prefix_len = 0;
};

struct RoutePolicy {
  std::optional<Bytes> max_body;
  std::optional<Milliseconds> timeout;
  std::vector<Cidr> allow;  // empty: everyone
};

// route.auth: HTTP Basic against an htpasswd file (bcrypt or SHA-crypt entries), read
// when the config snapshot is built (before the sandbox, and again on reload).
struct AuthConfig {
  std::string realm;
  std::string users;  // absolute path
  SourceLocation where;
};

struct RouteConfig {
  MatchConfig match;
  // monostate only for a route with `rewrite`, which hands the request back to routing.
  std::variant<std::monostate, RespondAction, StaticAction, StatusAction, PhpAction, ProxyAction,
               CachePurgeAction, RedirectAction>
      action;
  RoutePolicy policy;
  // headers, errors, compress: layered over the site's (response_config.h).
  ResponseConfig response;
  // The request's path (and query) become this, and routing starts again (nginx's
  // `rewrite ... last`).
  std::optional<UriTemplate> rewrite;
  std::optional<AuthConfig> auth;
  // Requests per client: replaces the site's limit for this route (limit_config.h).
  std::optional<LimitConfig> limit;
  SourceLocation where;
};

// [real_ip]: the client's address from a header, when the peer is one of `from` (a load
// balancer or proxy in front): the rightmost address in the header that is not in `from`.
struct RealIpConfig {
  std::vector<Cidr> from;
  std::string header = "x-forwarded-for";  // lower-case
  SourceLocation where;
};

struct SiteConfig {
  std::string source;                  // the file it was read from
  std::optional<ServerConfig> server;  // standalone only
  std::vector<ListenConfig> listens;
  std::vector<RouteConfig> routes;
  std::vector<PhpPoolConfig> php_pools;   // in file order; names unique
  std::vector<UpstreamConfig> upstreams;  // in file order; names unique
  std::vector<CacheConfig> caches;        // in file order; names unique
  // [site]: the response rules every route starts from, and that answers no route made
  // (404 without a route, 400 for a path that cannot be normalised) get.
  ResponseConfig response;
  // [site] limit: what every route without its own `limit` gets; limit_table: the bytes of
  // the table every limit of the site keeps its clients in.
  std::optional<LimitConfig> limit;
  uint64_t limit_table = kDefaultLimitTable;
  std::optional<RealIpConfig> real_ip;
};

// Whether [site] or any route has a `limit` (and so the site needs a limit table).
bool hasLimits(const SiteConfig& site);

// The effective server settings: the [server] table, or defaults under the controller.
const ServerConfig& serverOrDefaults(const SiteConfig& site);

}  // namespace scalws::common::config
