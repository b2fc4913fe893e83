// One loop's side of one [upstream]: the health of each server as this loop sees it, its
// kept connections, the balancer's state, the active health probes and the per-server
// counters.
//
// Kept connections: at most `keepalive` idle ones in the loop, over all servers of the
// upstream. Each server keeps its own, most recently used first; past the limit the least
// recently used one of the server with the most closes, so that a server the balancer turns
// to next still has one. Each is reused for at most `keepalive_requests` requests and closed
// after `keepalive_timeout` idle or as soon as the server closes it.
//
// Loop thread only. Owned by the loop's UpstreamPools; lives as long as the loop. A reload
// that keeps the upstream's servers moves the pool to the new spec (update()); one that
// changes them retires it: idle connections close now, lent ones when released.
#pragma once

#include <openssl/ssl.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/metrics/latency_buckets.h"
#include "common/metrics/relaxed_counter.h"
#include "worker/handlers/proxy/balancer.h"
#include "worker/handlers/proxy/server_health.h"
#include "worker/handlers/proxy/upstream_connection.h"
#include "worker/handlers/proxy/upstream_spec.h"
#include "worker/http/request.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::proxy {

class HealthProbe;

// One server's figures in one loop since the loop started, written by the loop only and
// readable from any thread (upstream_stats.h collects them for reports and metrics).
struct ServerCounters {
  using RelaxedCounter = common::metrics::RelaxedCounter;
  RelaxedCounter requests;  // answered (a complete head reached the client)
  RelaxedCounter responses_5xx;
  RelaxedCounter connect_failures;  // refused, unreachable, timed out, TLS handshake failed
  RelaxedCounter failures;          // every failure counted against its health
  RelaxedCounter latency_sum_us;    // request sent → response complete
  std::array<RelaxedCounter, common::metrics::kLatencyBuckets> latency;
  // The loop's view published: gauges and the health state.
  RelaxedCounter active;  // requests in flight
  RelaxedCounter idle;    // kept idle connections
  std::atomic<bool> down{false};
  std::atomic<int64_t> down_since_unix_ms{0};
  std::atomic<uint32_t> health_failures{0};
};

struct ServerSlot {
  ServerHealth health;
  ServerCounters counters;
  uint32_t idle = 0;                        // kept idle connections
  UpstreamConnection* idle_head = nullptr;  // most recently used first
  UpstreamConnection* idle_tail = nullptr;
  SSL_SESSION* tls_session = nullptr;
  std::unique_ptr<HealthProbe> probe;
};

class UpstreamPool final : public UpstreamConnectionOwner {
 public:
  UpstreamPool(WorkerLoop& loop, std::shared_ptr<const UpstreamSpec> spec);
  ~UpstreamPool();
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  WorkerLoop& loop() { return loop_; }
  const UpstreamSpec& spec() const { return *spec_; }
  const UpstreamSpec* specPointer() const { return spec_.get(); }
  // A reload with the same servers (UpstreamSpec::sameServers): new settings, same state.
  void update(std::shared_ptr<const UpstreamSpec> spec);
  void retire();
  bool retired() const { return retired_; }
  HealthPolicy policy() const;

  // The server for the next attempt of `request` among those not in `tried` (bit i for
  // server i): primaries up first, backups only when no primary is. -1 when none; then
  // `all_down` tells "every server is down" (503) from "every candidate was tried".
  int choose(const Request& request, uint64_t tried, bool& all_down);
  // A connection to `server` lent to `user`: a kept one (`reused`, when `allow_reuse`) or a
  // new one, which may still be connecting (its state() says). Null with `err` when the
  // connect failed at once.
  UpstreamConnection* connect(int server, UpstreamConnectionUser& user, bool allow_reuse,
                              bool& reused, int& err);
  // Takes a lent connection back: kept when `reusable` and the limits allow, else closed.
  void release(UpstreamConnection& connection, bool reusable);

  // Outcomes of requests, for health, metrics and the error log.
  void recordResponse(int server, uint16_t status, uint64_t us);
  void recordFailure(int server, bool connect_failure, const char* why);
  void recordProbe(int server, bool passed, const char* why);

  size_t serverCount() const { return slots_.size(); }
  const ServerSlot& slot(size_t server) const { return slots_[server]; }
  // Requests in flight on `server`.
  uint32_t activeCount(size_t server) const { return active_[server]; }
  uint32_t idleCount() const { return idle_count_; }

  // The loop is stopping: idle connections and probes close so the loop can end.
  void stop();

  // UpstreamConnectionOwner
  void onIdleClosed(UpstreamConnection& connection) noexcept override;

 private:
  bool hashKeyOf(const Request& request, uint64_t& hash) const;
  // Copies the server's health into its counters for readers on other threads.
  void publishHealth(size_t server);
  void pushIdle(UpstreamConnection& c);
  void unlinkIdle(UpstreamConnection& c);
  // Closes the least recently used idle connection of the server that keeps the most
  // (`spare_server` only when no other keeps as many); false when none is idle.
  bool closeOneIdle(int spare_server);
  void closeIdle();
  void startProbes();

  WorkerLoop& loop_;
  std::shared_ptr<const UpstreamSpec> spec_;
  std::vector<ServerSlot> slots_;
  std::vector<uint32_t> active_;  // requests in flight per server, as the balancer reads them
  Balancer balancer_;
  uint32_t idle_count_ = 0;  // over all servers
  bool retired_ = false;
  bool stopped_ = false;
};

}  // namespace scalws::worker::proxy
