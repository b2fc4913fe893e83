#include "common/metrics/upstream_metrics.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace scalws::common::metrics {
namespace {

// The summed fields, in wire order: one table serves both directions.
struct Field {
  const char* name;
  uint64_t UpstreamServerMetrics::*member;
};
constexpr Field kSummed[] = {
    {"active", &UpstreamServerMetrics::active},
    {"idle", &UpstreamServerMetrics::idle},
    {"requests", &UpstreamServerMetrics::requests},
    {"responses_5xx", &UpstreamServerMetrics::responses_5xx},
    {"connect_failures", &UpstreamServerMetrics::connect_failures},
    {"latency_sum_us", &UpstreamServerMetrics::latency_sum_us},
};

template <typename T>
bool readUnsigned(const nlohmann::json& obj, const char* key, T& out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_unsigned()) return false;
  out = static_cast<T>(it->get<uint64_t>());
  return true;
}

void addServer(UpstreamServerMetrics& a, const UpstreamServerMetrics& b) {
  a.backup = a.backup || b.backup;
  a.loops += b.loops;
  a.loops_down += b.loops_down;
  if (b.down_since_unix_ms != 0 &&
      (a.down_since_unix_ms == 0 || b.down_since_unix_ms < a.down_since_unix_ms)) {
    a.down_since_unix_ms = b.down_since_unix_ms;
  }
  a.failures = std::max(a.failures, b.failures);
  for (const Field& f : kSummed) a.*f.member += b.*f.member;
  for (size_t i = 0; i < kLatencyBuckets; ++i) a.latency[i] += b.latency[i];
}

}  // namespace

void addUpstreamMetrics(std::vector<UpstreamMetrics>& into,
                        const std::vector<UpstreamMetrics>& more) {
  for (const UpstreamMetrics& u : more) {
    auto it = std::find_if(into.begin(), into.end(),
                           [&](const UpstreamMetrics& x) { return x.name == u.name; });
    if (it == into.end()) {
      into.push_back(u);
      continue;
    }
    for (const UpstreamServerMetrics& s : u.servers) {
      auto server =
          std::find_if(it->servers.begin(), it->servers.end(),
                       [&](const UpstreamServerMetrics& x) { return x.address == s.address; });
      if (server == it->servers.end()) {
        it->servers.push_back(s);
      } else {
        addServer(*server, s);
      }
    }
  }
}

nlohmann::json toJson(const std::vector<UpstreamMetrics>& upstreams) {
  nlohmann::json out = nlohmann::json::array();
  for (const UpstreamMetrics& u : upstreams) {
    nlohmann::json servers = nlohmann::json::array();
    for (const UpstreamServerMetrics& s : u.servers) {
      nlohmann::json j = {{"address", s.address},
                          {"backup", s.backup},
                          {"loops", s.loops},
                          {"loops_down", s.loops_down},
                          {"down_since_ms", s.down_since_unix_ms},
                          {"failures", s.failures}};
      for (const Field& f : kSummed) j[f.name] = s.*f.member;
      j["latency_buckets"] = s.latency;
      servers.push_back(std::move(j));
    }
    out.push_back({{"name", u.name}, {"servers", std::move(servers)}});
  }
  return out;
}

Result<std::vector<UpstreamMetrics>> upstreamMetricsFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return invalidArgument("upstreams: expected an array");
  std::vector<UpstreamMetrics> out;
  for (const nlohmann::json& u : j) {
    auto name = u.is_object() ? u.find("name") : u.end();
    auto servers = u.is_object() ? u.find("servers") : u.end();
    if (!u.is_object() || name == u.end() || !name->is_string() || servers == u.end() ||
        !servers->is_array()) {
      return invalidArgument("upstreams: each must be { name, servers }");
    }
    UpstreamMetrics m;
    m.name = name->get<std::string>();
    for (const nlohmann::json& s : *servers) {
      UpstreamServerMetrics sm;
      auto address = s.is_object() ? s.find("address") : s.end();
      auto backup = s.is_object() ? s.find("backup") : s.end();
      auto since = s.is_object() ? s.find("down_since_ms") : s.end();
      auto buckets = s.is_object() ? s.find("latency_buckets") : s.end();
      if (!s.is_object() || address == s.end() || !address->is_string() || backup == s.end() ||
          !backup->is_boolean() || since == s.end() || !since->is_number_integer() ||
          !readUnsigned(s, "loops", sm.loops) || !readUnsigned(s, "loops_down", sm.loops_down) ||
          !readUnsigned(s, "failures", sm.failures) || buckets == s.end() || !buckets->is_array() ||
          buckets->size() != kLatencyBuckets) {
        return invalidArgument("upstreams." + m.name + ": a server's figures are malformed");
      }
      sm.address = address->get<std::string>();
      sm.backup = backup->get<bool>();
      sm.down_since_unix_ms = since->get<int64_t>();
      for (const Field& f : kSummed) {
        if (!readUnsigned(s, f.name, sm.*f.member)) {
          return invalidArgument("upstreams." + m.name + ": bad or missing " + f.name);
        }
      }
      for (size_t i = 0; i < kLatencyBuckets; ++i) {
        if (!(*buckets)[i].is_number_unsigned()) {
          return invalidArgument("upstreams." + m.name + ": bad latency bucket");
        }
        sm.latency[i] = (*buckets)[i].get<uint64_t>();
      }
      m.servers.push_back(std::move(sm));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace scalws::common::metrics
