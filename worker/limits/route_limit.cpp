#include "worker/limits/route_limit.h"

#include <netinet/in.h>

#include <atomic>

#include "common/log.h"

namespace scalws::worker::limits {
namespace {

using Outcome = common::limits::LimitDecision::Outcome;

// The id of a limit: its scope and values, hashed under a fixed key (the table's key
// scatters clients; this only has to tell limits apart).
uint64_t limitId(const common::config::LimitConfig& c, const common::config::RouteConfig* route) {
  std::string scope = route == nullptr ? "site" : "route";
  if (route != nullptr) {
    const common::config::MatchConfig& m = route->match;
    scope += "|" + m.exact.value_or("-") + "|" + m.prefix.value_or("-") + "|" +
             m.suffix.value_or("-") + "|" + m.regex_text + "|" +
             std::to_string(static_cast<int>(m.scheme));
    for (const std::string& h : m.hosts) scope += "|h:" + h;
    for (const std::string& x : m.methods) scope += "|m:" + x;
  }
  scope += "|" + std::to_string(c.rate) + "/" + std::to_string(c.per_seconds) + "|" +
           std::to_string(c.burst) + "|" + std::to_string(c.connections) + "|" + c.key;
  static constexpr uint64_t kIdKey[2] = {0x6c696d6974732d69ull, 0x642d6b65792d3031ull};
  return common::limits::limitHash(kIdKey, 0, scope);
}

// The client's address bytes (4 or 16), or "" for a peer without one (a unix socket).
std::string_view addressKey(const Request& r) {
  if (r.peer == nullptr) return {};
  const sockaddr_storage& a = r.peer->address;
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    return {reinterpret_cast<const char*>(&in.sin_addr), sizeof(in.sin_addr)};
  }
  if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    return {reinterpret_cast<const char*>(&in6.sin6_addr), sizeof(in6.sin6_addr)};
  }
  return {};
}

// Counted by every loop of the process; one line a second at most says how many.
std::atomic<uint64_t> refused_rate{0};
std::atomic<uint64_t> refused_in_flight{0};
std::atomic<uint64_t> failed_open{0};
std::atomic<uint64_t> last_log_ns{0};

void noteOutcome(const RouteLimit& limit, Outcome outcome, uint64_t now_ns) {
  if (outcome == Outcome::kRateExceeded) refused_rate.fetch_add(1, std::memory_order_relaxed);
  if (outcome == Outcome::kTooManyInFlight) {
    refused_in_flight.fetch_add(1, std::memory_order_relaxed);
  }
  if (outcome == Outcome::kFailOpen) failed_open.fetch_add(1, std::memory_order_relaxed);
  uint64_t last = last_log_ns.load(std::memory_order_relaxed);
  if (last != 0 && now_ns - last < 1000000000ull) return;
  if (!last_log_ns.compare_exchange_strong(last, now_ns, std::memory_order_relaxed)) return;
  uint64_t rate = refused_rate.exchange(0, std::memory_order_relaxed);
  uint64_t in_flight = refused_in_flight.exchange(0, std::memory_order_relaxed);
  uint64_t open = failed_open.exchange(0, std::memory_order_relaxed);
  if (rate + in_flight != 0) {
    LOG_NOTICE(
        "limit at %s: refused %llu request(s) over the rate and %llu over connections "
        "(429) since the last such line",
        limit.where.toString().c_str(), static_cast<unsigned long long>(rate),
        static_cast<unsigned long long>(in_flight));
  }
  if (open != 0) {
    LOG_WARN(
        "limit table full: %llu request(s) let through uncounted (every slot of their "
        "bucket busy); a larger [site] limit_table would hold them",
        static_cast<unsigned long long>(open));
  }
}

}  // namespace

RouteLimit makeRouteLimit(const common::config::LimitConfig& config,
                          const common::config::RouteConfig* route) {
  RouteLimit out;
  out.rule.id = limitId(config, route);
  if (config.rate != 0) {
    out.rule.interval_ns = uint64_t{config.per_seconds} * 1000000000ull / config.rate;
    out.rule.tolerance_ns = out.rule.interval_ns * config.burst;
  }
  out.rule.connections = config.connections;
  out.header = config.key;
  out.where = config.where;
  return out;
}

LimitVerdict checkLimit(const RouteLimit& limit, SharedLimits& table, const Request& r,
                        uint64_t now_ns) noexcept {
  std::string_view client;
  uint64_t id = limit.rule.id;
  if (!limit.header.empty()) client = r.header(limit.header);
  if (client.empty()) {
    client = addressKey(r);
  } else {
    id ^= 1;  // a header's value never stands for the address of the same bytes
  }
  common::limits::LimitRule rule = limit.rule;
  rule.id = id;
  common::limits::LimitDecision d = table.table().admit(rule, client, now_ns);
  LimitVerdict v;
  if (d.outcome == Outcome::kRateExceeded || d.outcome == Outcome::kTooManyInFlight) {
    v.status = 429;
    v.retry_after_s = d.retry_after_s;
    noteOutcome(limit, d.outcome, now_ns);
    return v;
  }
  if (d.outcome == Outcome::kFailOpen) noteOutcome(limit, d.outcome, now_ns);
  v.slot = d.slot;
  v.key = d.key;
  return v;
}

}  // namespace scalws::worker::limits
