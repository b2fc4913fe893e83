// PeerProcess: what the controller's handles on a scalwsd worker (WorkerProcess) and on a
// front (FrontProcess) share: a process spawned here or re-attached after a controller
// restart, spoken to over one IPC channel and watched through a pidfd, so exits are seen
// the same way for children and for adopted processes (whose exit status is not ours).
// Its owner registers the handlers for the ops it accepts and says what differs (the
// ops, the hello and ready it expects, the names in log lines).
//
// States: kStarting (spawned, until ready) or kAttaching (until the attach hello), then
// kReady, kStopping once asked to stop (or found draining), kExited when the process is
// gone. A process that fails to start is killed at once (nothing to drain).
//
// Hooks fire on the loop thread, never from inside the call that started the process:
// on_ready once (ok: it serves; an error: it will not, and a spawned one has been killed),
// on_exit once when the process is gone. Destroying it closes the channel and stops
// watching; the process itself is not signalled (see detach()).
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/printable.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/instances/worker_log.h"
#include "controller/loop_handles.h"
#include "controller/token_bucket.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"
#include "ipc/sandbox_summary.h"

namespace scalws::controller {

// How long an attach may take to its hello.
inline constexpr uint64_t kAttachTimeoutMs = 3'000;
// A peer sends its metrics about once a second and each is a few KiB: more often than
// kMetricsPerSecond (after a burst of kMetricsBurst) or larger than kMaxMetricsBytes, and
// the message is dropped (said once in the log), so a peer cannot keep the controller
// busy decoding and writing to its state DB.
inline constexpr double kMetricsPerSecond = 4;
inline constexpr double kMetricsBurst = 10;
inline constexpr size_t kMaxMetricsBytes = 64 * 1024;

class PeerProcess {
 public:
  enum class State { kAttaching, kStarting, kReady, kStopping, kExited };

  struct Config {
    std::string who;             // names it in log lines: "instance NAME: worker", "front ADDRESS"
    std::string noun;            // "worker", "front": in what its owner hears
    std::string_view stop;       // the op that asks it to stop
    std::string_view stderr_op;  // the op that hands it a new stderr
    std::string log_prefix;      // starts each line of its stdout and stderr in the log
  };
  struct Hooks {
    std::function<void(const common::Status&)> on_ready;
    std::function<void(const std::string& how)> on_exit;
    std::function<void()> on_hello;  // spawned: its attach address is known
    WorkerLog::Sink log_sink;        // each line of its stdout and stderr; none: the log only
  };
  using Handlers = std::function<common::Status(ipc::Endpoint&)>;

  // Registers `table` (the ops the owner accepts, handled by its members).
  template <typename Owner>
  static Handlers handlersOf(Owner& owner, std::span<const ipc::OpHandler<Owner>> table) {
    return [&owner, table](ipc::Endpoint& e) { return ipc::registerHandlers(e, owner, table); };
  }
  // Hooks that pass on_ready, on_exit and on_hello on to the owner's `callbacks`, with the
  // owner.
  template <typename Owner, typename Callbacks>
  static Hooks hooksOf(Owner& owner, const Callbacks& callbacks, WorkerLog::Sink sink = {}) {
    Hooks hooks;
    hooks.on_ready = [&owner, &callbacks](const common::Status& status) {
      if (callbacks.on_ready) callbacks.on_ready(owner, status);
    };
    hooks.on_exit = [&owner, &callbacks](const std::string& how) {
      if (callbacks.on_exit) callbacks.on_exit(owner, how);
    };
    hooks.on_hello = [&owner, &callbacks] {
      if (callbacks.on_hello) callbacks.on_hello(owner);
    };
    hooks.log_sink = std::move(sink);
    return hooks;
  }

  // A spawned child (state kStarting) or, with `attaching`, one a previous controller left.
  PeerProcess(uv_loop_t* loop, pid_t pid, common::UniqueFd pidfd, bool attaching, Config config,
              Hooks hooks);
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  // Spawned: talks over `channel` (registering `handlers`) and watches the exit; on an
  // error the child is killed and reaped. Not ready within `ready_timeout_ms`: failStart.
  common::Status converse(common::UniqueFd channel, const ipc::EndpointOptions& options,
                          const Handlers& handlers, uint64_t ready_timeout_ms);
  // Attached: the pid of a process whose start time was `start_ticks` and that `ours`
  // says is ours, pinned by a pidfd (checked again once it is held, so a reused PID cannot
  // pass).
  static common::Result<common::UniqueFd> pin(pid_t pid, uint64_t start_ticks,
                                              const std::function<bool()>& ours,
                                              const std::string& not_ours);
  // Attached: watches the exit and waits for the attach hello on `channel` (an error there
  // is told through on_ready on the next loop turn: ours but unreachable). `started_ms`:
  // when it started (Unix ms), as its record says.
  common::Status attach(common::Result<common::UniqueFd> channel,
                        const ipc::EndpointOptions& options, const Handlers& handlers,
                        int64_t started_ms);

  // Handler parts. A spawned peer's hello: false (and answered) when it came twice.
  bool firstHello(ipc::Replier& replier);
  // ... and it was the one expected: answered, its attach address kept, on_hello.
  void helloTaken(std::string attach_address, ipc::Replier replier);
  // One step of a spawned peer's start-up: sends `op`; `next` once the peer took it. A send
  // that fails or a refusal fails the start ("cannot send the WHAT", "refused its WHAT").
  void startStep(std::string_view op, ipc::Json args, std::vector<common::UniqueFd> fds,
                 const std::string& what, std::function<void()> next = {});
  // A spawned peer's `ready`.
  template <typename ReadyArgs>
  void onReady(ipc::Incoming& request, ipc::Replier replier);
  // The attach hello was checked: false (and answered) when it came twice.
  bool attachHello(ipc::Replier& replier);
  // The attach hello was taken: ready (or stopping), answered, a new stderr handed over.
  void attached(bool stopping, ipc::Replier replier);
  // A metrics notification, when its turn, size and rate allow and it decodes.
  template <typename MetricsArgs>
  std::optional<MetricsArgs> takeMetrics(ipc::Incoming& request);
  void failStart(const std::string& reason);
  void reportReady(const common::Status& status);

  // Graceful stop over the channel (SIGTERM without one); SIGKILL after kill_after_ms.
  void stop(uint64_t kill_after_ms);
  void kill();  // SIGKILL now
  // Lets go: closes the channel and stops watching; the process keeps running and waits
  // for the next controller on its attach socket.
  void detach();
  // Reads its stdout and stderr from `read_end` (worker_log.h: prefixed, escaped).
  void readLog(common::UniqueFd read_end);
  // The endpoint when open and ready: nullptr otherwise.
  ipc::Endpoint* readyEndpoint() const;

  State state() const { return state_; }
  void setState(State state) { state_ = state; }
  std::string_view stateName() const;
  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  bool isChild() const { return is_child_; }
  int64_t startedMs() const { return started_wall_ms_; }  // Unix ms
  uint64_t startedMonoMs() const { return started_mono_ms_; }
  uint64_t startTicks() const { return start_ticks_; }
  void setStartTicks(uint64_t ticks) { start_ticks_ = ticks; }
  const std::string& attachAddress() const { return attach_address_; }
  void setAttachAddress(std::string address) { attach_address_ = std::move(address); }
  const std::optional<ipc::SandboxSummary>& sandbox() const { return sandbox_; }

 private:
  common::Status watchExit();
  common::Status openEndpoint(common::UniqueFd channel, const ipc::EndpointOptions& options,
                              const Handlers& handlers);
  void ready(std::optional<ipc::SandboxSummary> sandbox);
  bool admitMetrics(const ipc::Incoming& request);
  void dropMetrics(const std::string& why);
  void handOverLog();
  void onProcessExit();

  uv_loop_t* loop_;
  pid_t pid_;
  common::UniqueFd pidfd_;
  Config config_;
  Hooks hooks_;
  State state_;
  bool is_child_;
  bool ready_reported_ = false;
  bool exit_reported_ = false;
  bool bad_metrics_logged_ = false;
  TokenBucket metrics_rate_{kMetricsPerSecond, kMetricsBurst};
  int64_t started_wall_ms_ = 0;
  uint64_t started_mono_ms_ = 0;
  uint64_t start_ticks_ = 0;
  std::string attach_address_;
  std::optional<ipc::SandboxSummary> sandbox_;
  std::unique_ptr<ipc::Endpoint> endpoint_;
  FdWatch exit_watch_;
  LoopTimer timer_;
  std::unique_ptr<WorkerLog> log_;  // its stdout and stderr (worker_log.h)
};

template <typename ReadyArgs>
void PeerProcess::onReady(ipc::Incoming& request, ipc::Replier replier) {
  replier.ok();
  if (state_ != State::kStarting) return;
  common::Result<ReadyArgs> args = ReadyArgs::decode(request.args());
  if (!args.ok()) return failStart("sent a malformed ready: " + args.status().message());
  // Its own words: escaped before they reach a log line or the DB.
  if (!args->ok) return failStart(common::printable(args->error));
  ready(std::move(args->sandbox));
}

template <typename MetricsArgs>
std::optional<MetricsArgs> PeerProcess::takeMetrics(ipc::Incoming& request) {
  if (!admitMetrics(request)) return std::nullopt;
  common::Result<MetricsArgs> m = MetricsArgs::decode(request.args());
  if (!m.ok()) {
    dropMetrics(m.status().message());
    return std::nullopt;
  }
  return std::move(m).value();
}

}  // namespace scalws::controller
