// InstanceSession: scalwsd's side of the controller channel in instance mode
// (`scalwsd --instance NAME --ipc-fd N --attach-fd M`).
//
// Its stdout and stderr are a pipe the controller reads (a new controller hands over a new
// pipe with the `stderr` op); SIGPIPE is ignored from start(), so a controller gone only
// loses the lines written meanwhile.
//
// The conversation is ipc/worker_messages.h's (one struct per op, encoded and decoded
// there for both ends): hello -> config -> listeners (fds) -> ready, then reload / stop,
// and a `metrics` notification about once a second while serving or stopping (and once
// more when the loops drained, sendMetrics; with the proxy's upstream figures when it has
// used any). `config` is loaded and built into a snapshot
// with the pools the controller assigned (instance_pools.h); an error reply says why. A
// reload is answered once every loop uses it, and refused (old config kept) when invalid,
// when the listen addresses differ or when a pool is outside the sandbox in force
// (InstanceHost::admits). `stop` is acknowledged at once; the process exits 0 when the last
// connection is done (shutdown_timeout at most). A `listeners` entry with quic set carries
// a bound UDP socket of an HTTP/3 listener (not a listening one) and its steering id.
//
// The controller may die, the site may not: when the channel closes after the worker
// serves, it keeps serving and waits on its attach socket (an abstract Unix socket the
// controller created and listened on before exec, inherited as --attach-fd). A new
// controller connects there; the session accepts it only when no channel is open and the
// peer's uid (SO_PEERCRED) is 0 or the uid that started this worker, then says hello with
// `attached` set (its state, settings and listeners) and the conversation goes on with
// reload/stop as before. The fd numbers let the new
// controller take copies of the listeners (pidfd_getfd) so a crashed worker's queue is
// kept for its replacement. A channel that closes before the worker serves ends it: it
// has nothing to serve and no controller to tell.
//
// Single-threaded: everything runs on the main uv loop (loop 0 of the worker shares it).
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/cpu_set.h"
#include "common/metrics/metrics_snapshot.h"
#include "common/metrics/upstream_metrics.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"
#include "ipc/worker_messages.h"
#include "worker/config_snapshot.h"
#include "worker/handlers/cache/cache_loop.h"
#include "worker/handlers/cache/shared_cache.h"

namespace scalws::worker {

// One listener as the controller described it, with its fd (owned by the plan).
struct InstanceListener : ipc::ListenerSpec {
  common::UniqueFd fd;
};

// The `config` message as this worker takes it: ipc::ConfigArgs::decode plus the worker's
// own rule for the TLS ticket secret (long enough to seal tickets with). Pure.
common::Result<ipc::ConfigArgs> parseInstanceSettings(const ipc::Json& args);

// Loads the TOML text of `settings` (never a [server] table) with the server settings
// taken from it (mode, loops, CPUs and user) and its PHP pools. Pure.
common::Result<common::config::SiteConfig> loadInstanceSite(const ipc::WorkerSettings& settings);
// loadInstanceSite, then the snapshot on `caches` (the areas the controller sent; every
// [cache] must have one). Without `caches` each [cache] gets a private one (tests).
common::Result<std::shared_ptr<const ConfigSnapshot>> buildInstanceSnapshot(
    const ipc::WorkerSettings& settings, const cache::CacheSet* caches = nullptr);

// What the session hands its host once config and listeners are in.
struct InstancePlan {
  ipc::WorkerSettings settings;  // what it runs: a reload changes config, path and pools
  uid_t controller_uid = 0;
  std::shared_ptr<const ConfigSnapshot> snapshot;
  std::vector<InstanceListener> listeners;
  // The memory tiers of its [cache]s, as the controller made them (with the listeners).
  std::shared_ptr<cache::CacheSet> caches;
  // Who claims which names on the shared addresses among the listeners (handoff ones).
  std::vector<ipc::SharedAddressNames> shared;
  // The instance's access log, opened by the controller (invalid: none). A reopen_logs
  // puts the new file in place of this fd number (dup3), so every loop writes there next.
  common::UniqueFd access_log;
};

// The serving side, implemented by the real worker (instance_server.cpp) and by tests.
class InstanceHost {
 public:
  virtual ~InstanceHost() = default;
  // Sandboxes the process and starts the loops on `plan`. The result is the sandbox report
  // of the ready message; an error ends the worker (after ready{ok:false}).
  virtual common::Result<ipc::SandboxSummary> goLive(const InstancePlan& plan) = 0;
  // Swaps every loop to `snapshot`; `on_applied` fires (on the main thread, possibly
  // later) once new requests start on it.
  virtual void applySnapshot(std::shared_ptr<const ConfigSnapshot> snapshot,
                             std::function<void()> on_applied) = 0;
  // Whether a reload to `next` can work inside what the host entered at goLive (the
  // sandbox cannot be widened): an error refuses the reload, saying why.
  virtual common::Status admits(const ConfigSnapshot& next) {
    (void)next;
    return common::okStatus();
  }
  // New names for the shared addresses (shared_names): connections handed over from then on
  // are checked against them.
  virtual void applySharedNames(const std::vector<ipc::SharedAddressNames>& shared) {
    (void)shared;
  }
  // Graceful stop; the host calls InstanceSession::close() once every loop drained.
  virtual void stop() = 0;
  // The worker cannot go on (no controller before serving, or it could not go live):
  // the host ends the process with `status` as the reason.
  virtual void fail(const common::Status& status) = 0;
};

class InstanceSession {
 public:
  enum class State {
    kHello,
    kAwaitConfig,
    kAwaitListeners,
    kGoingLive,
    kServing,
    kStopping,
    kClosed
  };

  // `channel`: the socketpair end (--ipc-fd); `attach`: the listening attach socket
  // (--attach-fd), may be invalid (then no re-attach is possible).
  InstanceSession(uv_loop_t* loop, std::string instance, common::UniqueFd channel,
                  common::UniqueFd attach, InstanceHost& host);
  ~InstanceSession();
  InstanceSession(const InstanceSession&) = delete;
  InstanceSession& operator=(const InstanceSession&) = delete;

  // Opens the channel and sends hello. An error means nothing was started.
  common::Status start();
  // Closes the channel and the attach socket so the loop can end. Idempotent.
  void close();
  // A graceful stop asked for by a signal rather than the controller (same as `stop`).
  void requestStop();
  // Sends a `metrics` notification when serving or stopping with a channel open, and the
  // controller reads what it was sent before (the figures are totals: skipping one loses
  // nothing). False when nothing was sent.
  bool sendMetrics(const common::metrics::MetricsSnapshot& s,
                   const std::vector<common::metrics::UpstreamMetrics>& upstreams = {});

  State state() const { return state_; }
  bool channelOpen() const { return endpoint_ != nullptr && endpoint_->isOpen(); }
  // The abstract name the attach socket is bound to, hex-encoded ("" without one).
  const std::string& attachAddress() const { return attach_address_; }

 private:
  common::Status openChannel(common::UniqueFd fd, bool attached);
  ipc::HelloArgs hello(bool attached) const;
  std::vector<ipc::ListenerReport> listenerReports() const;
  std::vector<ipc::CacheAreaReport> cacheReports() const;
  common::Result<std::shared_ptr<cache::CacheSet>> adoptCaches(
      const std::vector<std::string>& names, std::vector<common::UniqueFd> fds) const;
  void onConfig(ipc::Incoming& request, ipc::Replier replier);
  void onListeners(ipc::Incoming& request, ipc::Replier replier);
  void onReload(ipc::Incoming& request, ipc::Replier replier);
  void onStop(ipc::Incoming& request, ipc::Replier replier);
  void onStderr(ipc::Incoming& request, ipc::Replier replier);
  void onCachePurge(ipc::Incoming& request, ipc::Replier replier);
  void onSharedNames(ipc::Incoming& request, ipc::Replier replier);
  void onReopenLogs(ipc::Incoming& request, ipc::Replier replier);
  void goLive();
  void onChannelClosed(const common::Status& why);
  void acceptAttach();
  static void onAttachReadable(uv_poll_t* handle, int status, int events);

  uv_loop_t* loop_;
  std::string instance_;
  InstanceHost& host_;
  State state_ = State::kHello;
  common::UniqueFd endpoint_fd_;  // the --ipc-fd channel until start() opens it
  std::unique_ptr<ipc::Endpoint> endpoint_;
  common::UniqueFd attach_fd_;
  std::string attach_address_;
  uv_poll_t* attach_poll_ = nullptr;  // freed by its close callback
  uv_timer_t* go_live_timer_ = nullptr;
  // Brings a cache purge's disk results back here (they end on the disk threads).
  std::shared_ptr<cache::LoopMailbox> mailbox_;

  InstancePlan plan_;

  static const ipc::OpHandler<InstanceSession> kHandlers[];
};

}  // namespace scalws::worker
