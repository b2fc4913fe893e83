#include "common/metrics/metrics_snapshot.h"

#include <nlohmann/json.hpp>

namespace scalws::common::metrics {
namespace {

using Json = nlohmann::json;

uint64_t minus(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

// Calls f(out, a, b) for every counter of three snapshots: scalar counters, every labelled
// counter and every histogram bucket (the histogram counts requests: a counter too).
template <typename F>
void forEachCounter(MetricsSnapshot& out, const MetricsSnapshot& a, const MetricsSnapshot& b, F f) {
  for (const ScalarField& field : kScalarFields) {
    if (field.kind == FieldKind::kCounter) f(out.*field.member, a.*field.member, b.*field.member);
  }
  for (const LabelledField& field : kLabelledFields) {
    std::span<uint64_t> o = field.values(out);
    std::span<const uint64_t> x = field.read(a);
    std::span<const uint64_t> y = field.read(b);
    for (size_t i = 0; i < o.size(); ++i) f(o[i], x[i], y[i]);
  }
  for (size_t i = 0; i < kLatencyBuckets; ++i) f(out.latency[i], a.latency[i], b.latency[i]);
}

bool readUint(const Json& obj, std::string_view key, uint64_t& out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_unsigned()) return false;
  out = it->get<uint64_t>();
  return true;
}

}  // namespace

std::string_view actionName(Action a) {
  size_t i = static_cast<size_t>(a);
  return i < kActionCount ? kActionLabels[i] : "other";
}

Action actionFromName(std::string_view name) {
  for (size_t i = 0; i < kActionCount; ++i) {
    if (kActionLabels[i] == name) return static_cast<Action>(i);
  }
  return Action::kOther;
}

uint64_t MetricsSnapshot::requests() const {
  uint64_t n = 0;
  for (uint64_t c : requests_by_class) n += c;
  return n;
}

void MetricsSnapshot::add(const MetricsSnapshot& o) {
  MetricsSnapshot self = *this;
  forEachCounter(*this, self, o, [](uint64_t& out, uint64_t a, uint64_t b) { out = a + b; });
  for (const ScalarField& f : kScalarFields) {
    if (f.kind == FieldKind::kGauge) this->*f.member += o.*f.member;
  }
}

MetricsSnapshot metricsIncrease(const MetricsSnapshot& now, const MetricsSnapshot& before) {
  MetricsSnapshot d;
  forEachCounter(d, now, before, [](uint64_t& out, uint64_t a, uint64_t b) { out = minus(a, b); });
  for (const ScalarField& f : kScalarFields) {
    if (f.kind == FieldKind::kGauge) d.*f.member = now.*f.member;
  }
  return d;
}

void addCounters(MetricsSnapshot& into, const MetricsSnapshot& from) {
  MetricsSnapshot before = into;
  forEachCounter(into, before, from, [](uint64_t& out, uint64_t a, uint64_t b) { out = a + b; });
}

void foldEnded(MetricsSnapshot& base, const MetricsSnapshot& last) {
  addCounters(base, last);
  base.conn_closed += last.conn_active;
}

bool countersWentBack(const MetricsSnapshot& now, const MetricsSnapshot& before) {
  bool back = false;
  MetricsSnapshot scratch;
  forEachCounter(scratch, now, before, [&](uint64_t&, uint64_t a, uint64_t b) {
    if (a < b) back = true;
  });
  return back;
}

Json toJson(const MetricsSnapshot& s) {
  Json j = Json::object();
  for (const LabelledField& f : kLabelledFields) {
    Json by_label = Json::object();
    std::span<const uint64_t> values = f.read(s);
    for (size_t i = 0; i < values.size(); ++i) by_label[std::string(f.labels[i])] = values[i];
    j[std::string(f.name)] = std::move(by_label);
  }
  for (const ScalarField& f : kScalarFields) j[std::string(f.name)] = s.*f.member;
  j["latency_buckets"] = s.latency;
  return j;
}

Result<MetricsSnapshot> metricsFromJson(const Json& j) {
  if (!j.is_object()) return invalidArgument("metrics: expected an object");
  MetricsSnapshot s;
  for (const LabelledField& f : kLabelledFields) {
    std::string name(f.name);
    auto by_label = j.find(name);
    if (by_label == j.end() || !by_label->is_object()) {
      return invalidArgument("metrics: missing " + name);
    }
    std::span<uint64_t> values = f.values(s);
    for (size_t i = 0; i < values.size(); ++i) {
      if (!readUint(*by_label, f.labels[i], values[i])) {
        return invalidArgument("metrics: bad " + name + "." + std::string(f.labels[i]));
      }
    }
  }
  for (const ScalarField& f : kScalarFields) {
    if (!readUint(j, f.name, s.*f.member)) {
      return invalidArgument("metrics: bad or missing " + std::string(f.name));
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
