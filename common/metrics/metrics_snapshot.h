// A worker's (or an instance's) figures at one moment: monotonic totals since the worker
// started, plus gauges (active connections, RSS). Workers send it every second; the
// standalone status page answers it; the controller subtracts two of them to get a rate.
// The members and the tables that describe them come from metrics_fields.h.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string_view>

#include "common/metrics/latency_buckets.h"
#include "common/metrics/metrics_fields.h"
#include "common/status.h"

namespace scalws::common::metrics {

// The route action that answered; the order is the wire and storage order.
enum class Action : uint8_t { kStatic, kRespond, kProxy, kPhp, kApp, kStatus, kOther };
inline constexpr size_t kActionCount = 7;
std::string_view actionName(Action a);
// From a Handler's actionName() ("static", "respond", ...); unknown → kOther.
Action actionFromName(std::string_view name);

// Label values of the labelled figures, in index order.
inline constexpr std::string_view kClassLabels[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
inline constexpr std::string_view kActionLabels[] = {"static", "respond", "proxy", "php",
                                                     "app",    "status",  "other"};
static_assert(std::size(kActionLabels) == kActionCount);

enum class FieldKind { kCounter, kGauge };
enum class FieldUnit { kCount, kMicros };

struct MetricsSnapshot {
#define SCALWS_LABELLED_MEMBER(member, labels, ...) \
  std::array<uint64_t, std::size(labels)> member{};
  SCALWS_METRICS_LABELLED(SCALWS_LABELLED_MEMBER)
#undef SCALWS_LABELLED_MEMBER
#define SCALWS_SCALAR_MEMBER(member, ...) uint64_t member = 0;
  SCALWS_METRICS_SCALARS(SCALWS_SCALAR_MEMBER)
#undef SCALWS_SCALAR_MEMBER
  std::array<uint64_t, kLatencyBuckets> latency{};

  uint64_t requests() const;
  // Adds counters and gauges alike (summing processes of one instance).
  void add(const MetricsSnapshot& other);

  friend bool operator==(const MetricsSnapshot&, const MetricsSnapshot&) = default;
};

struct ScalarField {
  std::string_view name;  // the member's, the JSON key's and the DB column's
  FieldKind kind;
  int since;  // the schema version that made its DB column
  std::string_view prometheus;
  FieldUnit unit;
  std::string_view help;
  uint64_t MetricsSnapshot::*member;
};

struct LabelledField {
  std::string_view name;
  std::span<const std::string_view> labels;
  std::string_view column_prefix;
  std::string_view prometheus;
  std::string_view label;
  std::string_view help;
  std::span<uint64_t> (*values)(MetricsSnapshot& s);
  std::span<const uint64_t> (*read)(const MetricsSnapshot& s);
};

inline constexpr ScalarField kScalarFields[] = {
#define SCALWS_SCALAR_ROW(member, kind, since, family, unit, help)              \
  ScalarField{#member, FieldKind::kind,         since, family, FieldUnit::unit, \
              help,    &MetricsSnapshot::member},
    SCALWS_METRICS_SCALARS(SCALWS_SCALAR_ROW)
#undef SCALWS_SCALAR_ROW
};

inline constexpr LabelledField kLabelledFields[] = {
#define SCALWS_LABELLED_ROW(member, labels, prefix, family, label, help)          \
  LabelledField{#member,                                                          \
                labels,                                                           \
                prefix,                                                           \
                family,                                                           \
                label,                                                            \
                help,                                                             \
                [](MetricsSnapshot& s) { return std::span<uint64_t>(s.member); }, \
                [](const MetricsSnapshot& s) { return std::span<const uint64_t>(s.member); }},
    SCALWS_METRICS_LABELLED(SCALWS_LABELLED_ROW)
#undef SCALWS_LABELLED_ROW
};

// Arithmetic on snapshots, field by field according to each field's kind.
// Counters: now - before (0 where before is larger, so never negative); gauges from now.
MetricsSnapshot metricsIncrease(const MetricsSnapshot& now, const MetricsSnapshot& before);
// Adds the counters of `from` into `into`; the gauges of `into` stay as they are.
void addCounters(MetricsSnapshot& into, const MetricsSnapshot& from);
// Adds the figures of a process that ended into `base`: its counters stay counted, its
// open connections count as closed, its gauges are dropped (a dead process holds no
// connection and no memory).
void foldEnded(MetricsSnapshot& base, const MetricsSnapshot& last);
// True when any counter of `now` is below the same counter of `before`: the figures come
// from a process that started over.
bool countersWentBack(const MetricsSnapshot& now, const MetricsSnapshot& before);

nlohmann::json toJson(const MetricsSnapshot& s);
// Refuses anything but the shape toJson writes (missing or negative fields, a histogram
// of the wrong size): the controller never stores a half-read snapshot.
Result<MetricsSnapshot> metricsFromJson(const nlohmann::json& j);

}  // namespace scalws::common::metrics
