// The one list of the figures a worker counts. Everything that names a figure is generated
// from it: the MetricsSnapshot members (metrics_snapshot.h), the loop counters of the
// workers (worker/metrics/loop_counters.h), the JSON of the `metrics` message and the
// status page, the controller's DB columns (controller/state/metrics_row.h) and the
// Prometheus families (controller/metrics/metrics_prometheus.h).
//
// Adding a figure = one row below (appended: the order is the DB's column order), the
// worker code that counts it, and, for the controller's DB, a migration that adds its
// column to metrics_10s and metrics_1m (state/schema.cpp: metricsColumnsSince(version)
// writes it). `since` is the schema version whose migration created its column.
#pragma once

// Plain figures: X(member, kind, since, prometheus family, unit, help).
//   kind: kCounter (monotonic; a rate is a difference) or kGauge (a value now);
//   family: "" when the figure is exposed as part of another (latency_sum_us is the
//   histogram's _sum); unit: kMicros figures are exposed in seconds.
#define SCALWS_METRICS_SCALARS(X)                                                                \
  X(bytes_in, kCounter, 2, "scalws_received_bytes_total", kCount, "Bytes read from clients.")    \
  X(bytes_out, kCounter, 2, "scalws_sent_bytes_total", kCount, "Bytes written to clients.")      \
  X(conn_accepted, kCounter, 2, "scalws_connections_accepted_total", kCount,                     \
    "Client connections accepted.")                                                              \
  X(conn_closed, kCounter, 2, "scalws_connections_closed_total", kCount,                         \
    "Client connections closed.")                                                                \
  X(conn_active, kGauge, 2, "scalws_connections_active", kCount, "Client connections open now.") \
  X(tls_handshakes, kCounter, 2, "scalws_tls_handshakes_total", kCount,                          \
    "TLS handshakes completed.")                                                                 \
  X(file_cache_hits, kCounter, 2, "scalws_open_file_cache_hits_total", kCount,                   \
    "Static files found in the open-file cache.")                                                \
  X(file_cache_misses, kCounter, 2, "scalws_open_file_cache_misses_total", kCount,               \
    "Static files not in the open-file cache.")                                                  \
  X(upstream_connects, kCounter, 2, "scalws_upstream_connects_total", kCount,                    \
    "New connections to proxy upstreams.")                                                       \
  X(upstream_reuses, kCounter, 2, "scalws_upstream_reuses_total", kCount,                        \
    "Requests on a kept upstream connection.")                                                   \
  X(upstream_errors, kCounter, 2, "scalws_upstream_errors_total", kCount,                        \
    "Upstream connection or protocol errors.")                                                   \
  X(php_connects, kCounter, 2, "scalws_php_connects_total", kCount,                              \
    "New connections to the PHP pool.")                                                          \
  X(php_reuses, kCounter, 2, "scalws_php_reuses_total", kCount,                                  \
    "Requests on a kept PHP pool connection.")                                                   \
  X(php_errors, kCounter, 2, "scalws_php_errors_total", kCount,                                  \
    "PHP requests that failed at the pool (unreachable, protocol error, timeout, queue "         \
    "full).")                                                                                    \
  X(php_waits, kCounter, 2, "scalws_php_waits_total", kCount,                                    \
    "Requests that queued for a PHP pool connection.")                                           \
  X(php_wait_us, kCounter, 2, "scalws_php_wait_seconds_total", kMicros,                          \
    "Time requests queued for the PHP pool.")                                                    \
  X(cpu_us, kCounter, 2, "scalws_cpu_seconds_total", kMicros,                                    \
    "CPU time (user + system) of the workers.")                                                  \
  X(rss_bytes, kGauge, 2, "scalws_resident_memory_bytes", kCount,                                \
    "Resident memory of the live workers.")                                                      \
  X(latency_sum_us, kCounter, 2, "", kMicros, "Total time of the requests counted.")

// Counters by label: X(member, labels, column prefix, prometheus family, label, help).
// `labels` names an array of label values (metrics_snapshot.h); the DB has one column per
// label (prefix + label value), the JSON one object, Prometheus one family.
#define SCALWS_METRICS_LABELLED(X)                                                       \
  X(requests_by_class, kClassLabels, "req_", "scalws_requests_total", "class",           \
    "Requests answered, by status class.")                                               \
  X(requests_by_action, kActionLabels, "act_", "scalws_action_requests_total", "action", \
    "Requests answered, by the route action that answered.")

// The request latency histogram (latency_buckets.h) is the one figure of neither kind: its
// JSON is an array, its DB column a blob, its Prometheus family a histogram.
