#include "controller/metrics/metrics_prometheus.h"

#include <array>
#include <cinttypes>
#include <cstdio>

#include "common/metrics/latency_buckets.h"

namespace scalws::controller {

using common::metrics::FieldKind;
using common::metrics::FieldUnit;
using common::metrics::kLabelledFields;
using common::metrics::kLatencyBuckets;
using common::metrics::kScalarFields;
using common::metrics::LabelledField;
using common::metrics::latencyBucketUpperUs;
using common::metrics::MetricsSnapshot;
using common::metrics::ScalarField;
using common::metrics::UpstreamMetrics;
using common::metrics::UpstreamServerMetrics;

namespace {

// Microseconds as seconds, exactly: "0.000001", "67.108864".
std::string micros(uint64_t us) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, us / 1'000'000, us % 1'000'000);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// A latency histogram the Prometheus way: `emit(le, count)` with the cumulative count at
// each octave bound (the even buckets of the half-octave layout), then at "+Inf" (the last,
// unbounded bucket); returns the total.
template <typename Emit>
uint64_t cumulativeBuckets(const std::array<uint64_t, kLatencyBuckets>& latency, Emit emit) {
  uint64_t cumulative = 0;
  for (size_t b = 0; b + 1 < kLatencyBuckets; ++b) {
    cumulative += latency[b];
    if (b % 2 == 0) emit(micros(latencyBucketUpperUs(b)), cumulative);
  }
  cumulative += latency[kLatencyBuckets - 1];
  emit(std::string("+Inf"), cumulative);
  return cumulative;
}

class Writer {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  // name{instance="..."[,key="value"]} value
  void sample(std::string_view name, const std::string& instance, std::string_view key,
              std::string_view value_label, std::string_view value) {
    out_ += name;
    out_ += "{instance=\"";
    out_ += prometheusLabelValue(instance);
    out_ += '"';
    if (!key.empty()) {
      out_ += ',';
      out_ += key;
      out_ += "=\"";
      out_ += value_label;
      out_ += '"';
    }
    out_ += "} ";
    out_ += value;
    out_ += '\n';
  }
  void sample(std::string_view name, const std::string& instance, uint64_t value) {
    sample(name, instance, {}, "", std::to_string(value));
  }
  // name{instance="...",upstream="...",server="..."[,le="..."]} value
  void serverSample(std::string_view name, const std::string& instance, const std::string& upstream,
                    const std::string& server, std::string_view value, std::string_view le = {}) {
    out_ += name;
    out_ += "{instance=\"";
    out_ += prometheusLabelValue(instance);
    out_ += "\",upstream=\"";
    out_ += prometheusLabelValue(upstream);
    out_ += "\",server=\"";
    out_ += prometheusLabelValue(server);
    if (!le.empty()) {
      out_ += "\",le=\"";
      out_ += le;
    }
    out_ += "\"} ";
    out_ += value;
    out_ += '\n';
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

struct ServerFamily {
  const char* name;
  const char* type;
  const char* help;
  uint64_t UpstreamServerMetrics::*member;  // null: the up gauge
};

constexpr ServerFamily kServerFamilies[] = {
    {"scalws_upstream_server_up", "gauge",
     "1 when no event loop sees the proxy's upstream server down, else 0.", nullptr},
    {"scalws_upstream_server_active_requests", "gauge",
     "Requests in flight to the upstream server.", &UpstreamServerMetrics::active},
    {"scalws_upstream_server_idle_connections", "gauge",
     "Kept idle connections to the upstream server.", &UpstreamServerMetrics::idle},
    {"scalws_upstream_server_requests_total", "counter", "Requests the upstream server answered.",
     &UpstreamServerMetrics::requests},
    {"scalws_upstream_server_responses_5xx_total", "counter",
     "5xx answers from the upstream server.", &UpstreamServerMetrics::responses_5xx},
    {"scalws_upstream_server_connect_failures_total", "counter",
     "Failed connections to the upstream server.", &UpstreamServerMetrics::connect_failures},
};

void renderUpstreams(Writer& w, const std::vector<PrometheusInstance>& instances) {
  bool any = false;
  for (const PrometheusInstance& i : instances) any = any || !i.upstreams.empty();
  if (!any) return;
  for (const ServerFamily& f : kServerFamilies) {
    bool gauge = std::string_view(f.type) == "gauge";
    w.family(f.name, f.type, f.help);
    for (const PrometheusInstance& i : instances) {
      for (const UpstreamMetrics& u : i.upstreams) {
        for (const UpstreamServerMetrics& s : u.servers) {
          if (gauge && s.loops == 0) continue;  // only an ended worker's counts are left
          // The up gauge is 1 or 0 (a number, not assigned from a literal: GCC 12 warns
          // falsely about that at -O2, its bug 105329).
          uint64_t v = f.member == nullptr ? uint64_t{s.loops_down == 0} : s.*f.member;
          w.serverSample(f.name, i.name, u.name, s.address, std::to_string(v));
        }
      }
    }
  }
  constexpr const char* kHistogram = "scalws_upstream_server_response_seconds";
  w.family(kHistogram, "histogram",
           "Time from a request sent to the upstream server to its answer complete.");
  for (const PrometheusInstance& i : instances) {
    for (const UpstreamMetrics& u : i.upstreams) {
      for (const UpstreamServerMetrics& s : u.servers) {
        uint64_t cumulative =
            cumulativeBuckets(s.latency, [&](const std::string& le, uint64_t count) {
              w.serverSample("scalws_upstream_server_response_seconds_bucket", i.name, u.name,
                             s.address, std::to_string(count), le);
            });
        w.serverSample("scalws_upstream_server_response_seconds_sum", i.name, u.name, s.address,
                       micros(s.latency_sum_us));
        w.serverSample("scalws_upstream_server_response_seconds_count", i.name, u.name, s.address,
                       std::to_string(cumulative));
      }
    }
  }
}

}  // namespace

std::string prometheusLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string renderPrometheus(const std::vector<PrometheusInstance>& instances) {
  Writer w;
  for (const LabelledField& f : kLabelledFields) {
    w.family(f.prometheus, "counter", f.help);
    for (const PrometheusInstance& i : instances) {
      std::span<const uint64_t> values = f.read(i.total);
      for (size_t l = 0; l < values.size(); ++l) {
        w.sample(f.prometheus, i.name, f.label, f.labels[l], std::to_string(values[l]));
      }
    }
  }
  for (const ScalarField& f : kScalarFields) {
    if (f.prometheus.empty()) continue;  // part of another family
    w.family(f.prometheus, f.kind == FieldKind::kGauge ? "gauge" : "counter", f.help);
    for (const PrometheusInstance& i : instances) {
      uint64_t v = i.total.*f.member;
      w.sample(f.prometheus, i.name, {}, "",
               f.unit == FieldUnit::kMicros ? micros(v) : std::to_string(v));
    }
  }
  w.family("scalws_worker_processes", "gauge", "Worker processes whose figures are counted.");
  for (const PrometheusInstance& i : instances) {
    w.sample("scalws_worker_processes", i.name, i.processes);
  }
  w.family("scalws_request_duration_seconds", "histogram",
           "Time from a request's first byte to its response's last byte.");
  for (const PrometheusInstance& i : instances) {
    uint64_t cumulative = cumulativeBuckets(i.total.latency, [&](const std::string& le,
                                                                 uint64_t count) {
      w.sample("scalws_request_duration_seconds_bucket", i.name, "le", le, std::to_string(count));
    });
    w.sample("scalws_request_duration_seconds_sum", i.name, {}, "", micros(i.total.latency_sum_us));
    w.sample("scalws_request_duration_seconds_count", i.name, cumulative);
  }
  renderUpstreams(w, instances);
  return w.take();
}

}  // namespace scalws::controller
