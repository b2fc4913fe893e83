// StateStore: what happened and how it went — events, metrics rollups, pruning.
#include <algorithm>

#include "controller/state/state_store_impl.h"

namespace scalws::controller::state {

using namespace store_impl;

namespace {

// "req_1xx, req_2xx, ..." in schema order.
std::string metricsColumnList() {
  std::string out;
  for (const MetricsColumn& column : metricsColumns()) {
    if (!out.empty()) out += ", ";
    out += column.name;
  }
  return out;
}

}  // namespace

// --- events ------------------------------------------------------------------------------

Result<EventRecord> StateStore::appendEvent(const std::optional<std::string>& instance,
                                            std::string_view kind, std::string_view message) {
  if (kind.empty()) return common::invalidArgument("an event needs a kind");
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(EventRecord event, insertEvent(instance, kind, message));
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return event;
}

Result<std::vector<EventRecord>> StateStore::recentEvents(
    const std::optional<std::string>& instance, int limit) {
  if (limit < 0) return common::invalidArgument("event limit must not be negative");
  Result<Statement> stmt = instance ? db_.query(
                                          "SELECT id, time_ms, instance, kind, message FROM events "
                                          "WHERE instance = ?2 ORDER BY id DESC LIMIT ?1",
                                          int64_t{limit}, *instance)
                                    : db_.query(
                                          "SELECT id, time_ms, instance, kind, message FROM events "
                                          "ORDER BY id DESC LIMIT ?1",
                                          int64_t{limit});
  return readRows(std::move(stmt), [](const Statement& row) {
    return EventRecord{row.columnInt(0), row.columnInt(1), row.columnOptionalText(2),
                       row.columnText(3), row.columnText(4)};
  });
}

// --- metrics -----------------------------------------------------------------------------

Result<int64_t> StateStore::insertMetrics(MetricsResolution resolution,
                                          std::span<const MetricsRow> rows) {
  for (const MetricsRow& row : rows) SCALWS_RETURN_IF_ERROR(validateMetricsRow(row, resolution));
  const size_t ncols = metricsColumns().size();
  // Parameters: ?1 instance, ?2 bucket_ms, ?3.. the integer columns, then the blob.
  std::string values = "?1, ?2";
  for (size_t i = 0; i < ncols + 1; ++i) values += ", ?" + std::to_string(i + 3);
  // INSERT ... SELECT ... WHERE EXISTS skips rows of removed instances instead of failing
  // the whole batch on the foreign key.
  std::string sql = "INSERT OR REPLACE INTO " + std::string(metricsTable(resolution)) +
                    " (instance, bucket_ms, " + metricsColumnList() + ", latency) SELECT " +
                    values + " WHERE EXISTS (SELECT 1 FROM instances WHERE name = ?1)";

  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  int64_t written = 0;
  {
    SCALWS_ASSIGN_OR_RETURN(Statement stmt, db_.query(sql));
    for (const MetricsRow& row : rows) {
      SCALWS_RETURN_IF_ERROR(stmt.bindAll(row.instance, row.bucket_ms));
      int index = 3;
      for (const MetricsColumn& column : metricsColumns()) {
        SCALWS_RETURN_IF_ERROR(stmt.bind(index++, static_cast<int64_t>(column.of(row.figures))));
      }
      SCALWS_RETURN_IF_ERROR(stmt.bindBlob(index, encodeHistogram(row.figures.latency)));
      SCALWS_RETURN_IF_ERROR(stmt.run());
      written += db_.changes();
      SCALWS_RETURN_IF_ERROR(stmt.reset());
    }
  }
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return written;
}

Result<std::vector<MetricsRow>> StateStore::listMetrics(const std::string& instance,
                                                        MetricsResolution resolution,
                                                        int64_t from_ms, int64_t to_ms) {
  std::string sql = "SELECT instance, bucket_ms, " + metricsColumnList() + ", latency FROM " +
                    std::string(metricsTable(resolution)) +
                    " WHERE instance = ?1 AND bucket_ms >= ?2 AND bucket_ms < ?3 "
                    "ORDER BY bucket_ms";
  const int blob_col = 2 + static_cast<int>(metricsColumns().size());
  return readRows(
      db_.query(sql, instance, from_ms, to_ms), [&](const Statement& row) -> Result<MetricsRow> {
        MetricsRow m;
        m.instance = row.columnText(0);
        m.bucket_ms = row.columnInt(1);
        int col = 2;
        for (const MetricsColumn& column : metricsColumns()) {
          column.of(m.figures) = static_cast<uint64_t>(row.columnInt(col++));
        }
        Result<std::vector<uint64_t>> latency = decodeHistogram(row.columnBlob(blob_col));
        if (!latency.ok()) {
          return Status(StatusCode::kIoError, std::string(metricsTable(resolution)) + " row " +
                                                  m.instance + "@" + std::to_string(m.bucket_ms) +
                                                  ": " + latency.status().message());
        }
        // Buckets past the snapshot's layout (a wider layout once) count in its last bucket.
        for (size_t i = 0; i < latency->size(); ++i) {
          m.figures.latency[std::min(i, common::metrics::kLatencyBuckets - 1)] += (*latency)[i];
        }
        return m;
      });
}

Result<PruneCounts> StateStore::prune(int64_t now_ms, const Retention& retention) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  PruneCounts counts;
  struct Target {
    std::string_view sql;
    int64_t keep_ms;
    int64_t* count;
  };
  const Target targets[] = {
      {"DELETE FROM metrics_10s WHERE bucket_ms < ?1", retention.metrics_10s_ms,
       &counts.metrics_10s},
      {"DELETE FROM metrics_1m WHERE bucket_ms < ?1", retention.metrics_1m_ms, &counts.metrics_1m},
      {"DELETE FROM events WHERE time_ms < ?1", retention.events_ms, &counts.events},
  };
  for (const Target& target : targets) {
    SCALWS_RETURN_IF_ERROR(db_.run(target.sql, now_ms - target.keep_ms));
    *target.count = db_.changes();
  }
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return counts;
}

}  // namespace scalws::controller::state
