#include "controller/state/metrics_row.h"

#include <algorithm>
#include <limits>

#include "controller/state/records.h"

namespace scalws::controller::state {

using common::Result;
using common::Status;

int64_t bucketMs(MetricsResolution resolution) {
  return resolution == MetricsResolution::k1m ? 60'000 : 10'000;
}

std::string_view metricsTable(MetricsResolution resolution) {
  return resolution == MetricsResolution::k1m ? "metrics_1m" : "metrics_10s";
}

using common::metrics::FieldKind;
using common::metrics::kLabelledFields;
using common::metrics::kLatencyBuckets;
using common::metrics::kScalarFields;
using common::metrics::LabelledField;
using common::metrics::MetricsSnapshot;
using common::metrics::ScalarField;

uint64_t& MetricsColumn::of(MetricsSnapshot& s) const {
  return member != nullptr ? s.*member : labelled->values(s)[label];
}

uint64_t MetricsColumn::of(const MetricsSnapshot& s) const {
  return member != nullptr ? s.*member : labelled->read(s)[label];
}

std::span<const MetricsColumn> metricsColumns() {
  static const std::vector<MetricsColumn> kColumns = [] {
    std::vector<MetricsColumn> out;
    // The labelled figures were made with the metrics tables (schema version 2).
    for (const LabelledField& f : kLabelledFields) {
      for (size_t i = 0; i < f.labels.size(); ++i) {
        MetricsColumn c;
        c.name = std::string(f.column_prefix) + std::string(f.labels[i]);
        c.since = 2;
        c.labelled = &f;
        c.label = i;
        out.push_back(std::move(c));
      }
    }
    for (const ScalarField& f : kScalarFields) {
      MetricsColumn c;
      c.name = std::string(f.name);
      c.gauge = f.kind == FieldKind::kGauge;
      c.since = f.since;
      c.member = f.member;
      out.push_back(std::move(c));
    }
    return out;
  }();
  return kColumns;
}

std::string metricsTableSql(std::string_view table, int version) {
  std::string t(table);
  std::string sql = "CREATE TABLE " + t +
                    " (\n"
                    "  instance TEXT NOT NULL REFERENCES instances (name) ON DELETE CASCADE,\n"
                    "  bucket_ms INTEGER NOT NULL,\n";
  for (const MetricsColumn& c : metricsColumns()) {
    if (c.since <= version) sql += "  " + c.name + " INTEGER NOT NULL,\n";
  }
  sql +=
      "  latency BLOB NOT NULL,\n  PRIMARY KEY (instance, bucket_ms)\n) STRICT, WITHOUT ROWID;\n";
  sql += "CREATE INDEX " + t + "_by_bucket ON " + t + " (bucket_ms);\n";
  return sql;
}

std::string metricsColumnsSince(int version) {
  std::string sql;
  for (MetricsResolution r : {MetricsResolution::k10s, MetricsResolution::k1m}) {
    for (const MetricsColumn& c : metricsColumns()) {
      if (c.since != version) continue;
      sql += "ALTER TABLE " + std::string(metricsTable(r)) + " ADD COLUMN " + c.name +
             " INTEGER NOT NULL DEFAULT 0;\n";
    }
  }
  return sql;
}

void mergeMetrics(MetricsRow& into, const MetricsRow& from) {
  bool later = from.bucket_ms >= into.bucket_ms;
  MetricsSnapshot gauges = later ? from.figures : into.figures;
  common::metrics::addCounters(into.figures, from.figures);
  for (const ScalarField& f : kScalarFields) {
    if (f.kind == FieldKind::kGauge) into.figures.*f.member = gauges.*f.member;
  }
}

Status validateMetricsRow(const MetricsRow& row, MetricsResolution resolution) {
  SCALWS_RETURN_IF_ERROR(validateName("instance", row.instance));
  int64_t step = bucketMs(resolution);
  if (row.bucket_ms < 0 || row.bucket_ms % step != 0) {
    return common::invalidArgument("metrics row for " + row.instance + ": bucket start " +
                                   std::to_string(row.bucket_ms) + " is not a multiple of " +
                                   std::to_string(step) + " ms");
  }
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (const MetricsColumn& column : metricsColumns()) {
    if (column.of(row.figures) > kMax) {
      return common::invalidArgument("metrics row for " + row.instance + ": " + column.name +
                                     " is out of range");
    }
  }
  for (uint64_t count : row.figures.latency) {
    if (count > kMax) {
      return common::invalidArgument("metrics row for " + row.instance +
                                     ": a latency bucket is out of range");
    }
  }
  return Status();
}

namespace {

void putVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Reads one varint at `pos`; false on truncation or more than 64 bits.
bool getVarint(std::string_view in, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= in.size()) return false;
    uint64_t byte = static_cast<uint8_t>(in[pos++]);
    if (shift == 63 && byte > 1) return false;
    value |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

std::string encodeHistogram(std::span<const uint64_t> counts) {
  std::string out;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    putVarint(out, i);
    putVarint(out, counts[i]);
  }
  return out;
}

Result<std::vector<uint64_t>> decodeHistogram(std::string_view blob) {
  std::vector<uint64_t> counts;
  size_t pos = 0;
  while (pos < blob.size()) {
    uint64_t index = 0;
    uint64_t count = 0;
    if (!getVarint(blob, pos, index) || !getVarint(blob, pos, count)) {
      return common::invalidArgument("latency histogram: truncated or overlong varint");
    }
    if (index >= kMaxLatencyBuckets) {
      return common::invalidArgument("latency histogram: bucket index " + std::to_string(index) +
                                     " out of range");
    }
    if (index < counts.size()) {
      return common::invalidArgument("latency histogram: bucket indexes not increasing");
    }
    counts.resize(index + 1);
    counts[index] = count;
  }
  // Zero counts are never written; trimming keeps decode(encode(x)) equal to x trimmed.
  while (!counts.empty() && counts.back() == 0) counts.pop_back();
  return counts;
}

}  // namespace scalws::controller::state
