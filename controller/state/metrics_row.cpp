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

namespace {

// One accessor per column; captureless lambdas convert to the function pointer.
#define SCALWS_COLUMN(name, gauge, expr)                         \
  MetricsColumn {                                                \
    name, gauge, [](MetricsRow& r) -> uint64_t& { return expr; } \
  }

const MetricsColumn kColumns[] = {
    SCALWS_COLUMN("req_1xx", false, r.requests_by_class[0]),
    SCALWS_COLUMN("req_2xx", false, r.requests_by_class[1]),
    SCALWS_COLUMN("req_3xx", false, r.requests_by_class[2]),
    SCALWS_COLUMN("req_4xx", false, r.requests_by_class[3]),
    SCALWS_COLUMN("req_5xx", false, r.requests_by_class[4]),
    SCALWS_COLUMN("act_static", false, r.requests_by_action[0]),
    SCALWS_COLUMN("act_respond", false, r.requests_by_action[1]),
    SCALWS_COLUMN("act_proxy", false, r.requests_by_action[2]),
    SCALWS_COLUMN("act_php", false, r.requests_by_action[3]),
    SCALWS_COLUMN("act_app", false, r.requests_by_action[4]),
    SCALWS_COLUMN("act_status", false, r.requests_by_action[5]),
    SCALWS_COLUMN("act_other", false, r.requests_by_action[6]),
    SCALWS_COLUMN("bytes_in", false, r.bytes_in),
    SCALWS_COLUMN("bytes_out", false, r.bytes_out),
    SCALWS_COLUMN("conn_accepted", false, r.conn_accepted),
    SCALWS_COLUMN("conn_closed", false, r.conn_closed),
    SCALWS_COLUMN("conn_active", true, r.conn_active),
    SCALWS_COLUMN("tls_handshakes", false, r.tls_handshakes),
    SCALWS_COLUMN("file_cache_hits", false, r.file_cache_hits),
    SCALWS_COLUMN("file_cache_misses", false, r.file_cache_misses),
    SCALWS_COLUMN("upstream_connects", false, r.upstream_connects),
    SCALWS_COLUMN("upstream_reuses", false, r.upstream_reuses),
    SCALWS_COLUMN("upstream_errors", false, r.upstream_errors),
    SCALWS_COLUMN("php_connects", false, r.php_connects),
    SCALWS_COLUMN("php_reuses", false, r.php_reuses),
    SCALWS_COLUMN("php_errors", false, r.php_errors),
    SCALWS_COLUMN("php_waits", false, r.php_waits),
    SCALWS_COLUMN("php_wait_us", false, r.php_wait_us),
    SCALWS_COLUMN("cpu_us", false, r.cpu_us),
    SCALWS_COLUMN("rss_bytes", true, r.rss_bytes),
    SCALWS_COLUMN("latency_sum_us", false, r.latency_sum_us),
    SCALWS_COLUMN("http3_requests", false, r.http3_requests),
    SCALWS_COLUMN("quic_handshakes", false, r.quic_handshakes),
    SCALWS_COLUMN("quic_retries", false, r.quic_retries),
    SCALWS_COLUMN("quic_migrations", false, r.quic_migrations),
    SCALWS_COLUMN("quic_lost_packets", false, r.quic_lost_packets),
};

#undef SCALWS_COLUMN

}  // namespace

std::span<const MetricsColumn> metricsColumns() {
  return kColumns;
}

void mergeMetrics(MetricsRow& into, const MetricsRow& from) {
  bool later = from.bucket_ms >= into.bucket_ms;
  // The table's accessors take a mutable row; `from` is only read through them.
  MetricsRow& src = const_cast<MetricsRow&>(from);
  for (const MetricsColumn& column : kColumns) {
    uint64_t& dst = column.field(into);
    uint64_t value = column.field(src);
    if (column.gauge) {
      if (later) dst = value;
    } else {
      dst += value;
    }
  }
  if (into.latency_buckets.size() < from.latency_buckets.size()) {
    into.latency_buckets.resize(from.latency_buckets.size());
  }
  for (size_t i = 0; i < from.latency_buckets.size(); ++i) {
    into.latency_buckets[i] += from.latency_buckets[i];
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
  if (row.latency_buckets.size() > kMaxLatencyBuckets) {
    return common::invalidArgument(
        "metrics row for " + row.instance + ": " + std::to_string(row.latency_buckets.size()) +
        " latency buckets, at most " + std::to_string(kMaxLatencyBuckets));
  }
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  MetricsRow& src = const_cast<MetricsRow&>(row);  // read only
  for (const MetricsColumn& column : kColumns) {
    if (column.field(src) > kMax) {
      return common::invalidArgument("metrics row for " + row.instance + ": " +
                                     std::string(column.name) + " is out of range");
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
