#include "common/metrics/metrics_snapshot.h"

#include <nlohmann/json.hpp>

namespace scalws::common::metrics {
namespace {

constexpr const char* kClassNames[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};

// The scalar fields in wire order: one table serves both directions.
struct Field {
  const char* name;
  uint64_t MetricsSnapshot::*member;
};
constexpr Field kFields[] = {
    {"bytes_in", &MetricsSnapshot::bytes_in},
    {"bytes_out", &MetricsSnapshot::bytes_out},
    {"conn_accepted", &MetricsSnapshot::conn_accepted},
    {"conn_closed", &MetricsSnapshot::conn_closed},
    {"conn_active", &MetricsSnapshot::conn_active},
    {"tls_handshakes", &MetricsSnapshot::tls_handshakes},
    {"http3_requests", &MetricsSnapshot::http3_requests},
    {"quic_handshakes", &MetricsSnapshot::quic_handshakes},
    {"quic_retries", &MetricsSnapshot::quic_retries},
    {"quic_migrations", &MetricsSnapshot::quic_migrations},
    {"quic_lost_packets", &MetricsSnapshot::quic_lost_packets},
    {"file_cache_hits", &MetricsSnapshot::file_cache_hits},
    {"file_cache_misses", &MetricsSnapshot::file_cache_misses},
    {"upstream_connects", &MetricsSnapshot::upstream_connects},
    {"upstream_reuses", &MetricsSnapshot::upstream_reuses},
    {"upstream_errors", &MetricsSnapshot::upstream_errors},
    {"php_connects", &MetricsSnapshot::php_connects},
    {"php_reuses", &MetricsSnapshot::php_reuses},
    {"php_errors", &MetricsSnapshot::php_errors},
    {"php_waits", &MetricsSnapshot::php_waits},
    {"php_wait_us", &MetricsSnapshot::php_wait_us},
    {"cpu_us", &MetricsSnapshot::cpu_us},
    {"rss_bytes", &MetricsSnapshot::rss_bytes},
    {"latency_sum_us", &MetricsSnapshot::latency_sum_us},
};

// Fields a worker older than the controller does not send yet: 0 when absent.
bool optionalField(const char* name) {
  static constexpr std::string_view kAddedLater[] = {
      "http3_requests", "quic_handshakes", "quic_retries", "quic_migrations", "quic_lost_packets"};
  for (std::string_view n : kAddedLater) {
    if (n == name) return true;
  }
  return false;
}

bool readUint(const nlohmann::json& obj, const char* key, uint64_t& out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_unsigned()) return false;
  out = it->get<uint64_t>();
  return true;
}

}  // namespace

std::string_view actionName(Action a) {
  switch (a) {
    case Action::kStatic:
      return "static";
    case Action::kRespond:
      return "respond";
    case Action::kProxy:
      return "proxy";
    case Action::kPhp:
      return "php";
    case Action::kApp:
      return "app";
    case Action::kStatus:
      return "status";
    case Action::kOther:
      return "other";
  }
  return "other";
}

Action actionFromName(std::string_view name) {
  for (size_t i = 0; i < kActionCount; ++i) {
    if (actionName(static_cast<Action>(i)) == name) return static_cast<Action>(i);
  }
  return Action::kOther;
}

uint64_t MetricsSnapshot::requests() const {
  uint64_t n = 0;
  for (uint64_t c : requests_by_class) n += c;
  return n;
}

void MetricsSnapshot::add(const MetricsSnapshot& o) {
  for (size_t i = 0; i < requests_by_class.size(); ++i)
    requests_by_class[i] += o.requests_by_class[i];
  for (size_t i = 0; i < kActionCount; ++i) requests_by_action[i] += o.requests_by_action[i];
  for (const Field& f : kFields) this->*f.member += o.*f.member;
  for (size_t i = 0; i < kLatencyBuckets; ++i) latency[i] += o.latency[i];
}

nlohmann::json toJson(const MetricsSnapshot& s) {
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json classes = nlohmann::json::object();
  for (size_t i = 0; i < 5; ++i) classes[kClassNames[i]] = s.requests_by_class[i];
  j["requests_by_class"] = std::move(classes);
  nlohmann::json actions = nlohmann::json::object();
  for (size_t i = 0; i < kActionCount; ++i) {
    actions[std::string(actionName(static_cast<Action>(i)))] = s.requests_by_action[i];
  }
  j["requests_by_action"] = std::move(actions);
  for (const Field& f : kFields) j[f.name] = s.*f.member;
  j["latency_buckets"] = s.latency;
  return j;
}

Result<MetricsSnapshot> metricsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return invalidArgument("metrics: expected an object");
  MetricsSnapshot s;
  auto classes = j.find("requests_by_class");
  if (classes == j.end() || !classes->is_object()) {
    return invalidArgument("metrics: missing requests_by_class");
  }
  for (size_t i = 0; i < 5; ++i) {
    if (!readUint(*classes, kClassNames[i], s.requests_by_class[i])) {
      return invalidArgument(std::string("metrics: bad requests_by_class.") + kClassNames[i]);
    }
  }
  auto actions = j.find("requests_by_action");
  if (actions == j.end() || !actions->is_object()) {
    return invalidArgument("metrics: missing requests_by_action");
  }
  for (size_t i = 0; i < kActionCount; ++i) {
    std::string name(actionName(static_cast<Action>(i)));
    if (!readUint(*actions, name.c_str(), s.requests_by_action[i])) {
      return invalidArgument("metrics: bad requests_by_action." + name);
    }
  }
  for (const Field& f : kFields) {
    if (optionalField(f.name) && !j.contains(f.name)) continue;
    if (!readUint(j, f.name, s.*f.member)) {
      return invalidArgument(std::string("metrics: bad or missing ") + f.name);
    }
  }
  auto buckets = j.find("latency_buckets");
  if (buckets == j.end() || !buckets->is_array() || buckets->size() != kLatencyBuckets) {
    return invalidArgument("metrics: latency_buckets must be an array of " +
                           std::to_string(kLatencyBuckets) + " counts");
  }
  for (size_t i = 0; i < kLatencyBuckets; ++i) {
    const auto& v = (*buckets)[i];
    if (!v.is_number_unsigned()) return invalidArgument("metrics: bad latency bucket");
    s.latency[i] = v.get<uint64_t>();
  }
  return s;
}

}  // namespace scalws::common::metrics
