// FrontProcess: the controller's handle on one front (scalws-front) of a shared address,
// spawned here or re-attached after a controller restart. It speaks the controller's side
// of ipc/front_messages.h:
//   spawned:  front.hello -> front.config (+ the listening socket) -> front.ready
//   attached: connect to its attach socket -> front.hello {attached, ...}
// and later front.route / front.unroute / front.stop. Like WorkerProcess it watches the
// process through a pidfd, and its stdout and stderr reach the controller's log prefixed
// ("front ADDRESS pid PID: "), escaped and rate-limited (worker_log.h): what the two share
// is peer_process.h.
//
// Nothing a front says is taken on trust: an attached front's listener and channels are
// copied from its descriptor table (pidfd_getfd) by the numbers it reports and then
// checked by the caller against the kernel (a listening TCP socket on the address; channel
// ends paired by name, handoff_channel.h).
//
// Callbacks fire on the loop thread, never from inside a call on this object: on_ready
// once, on_exit once when the process is gone. The owner must not destroy a FrontProcess
// from inside one of its callbacks.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/peer_process.h"
#include "controller/state/records.h"
#include "ipc/endpoint.h"
#include "ipc/front_messages.h"
#include "ipc/handler_table.h"

namespace scalws::controller {

class FrontProcess {
 public:
  using State = PeerProcess::State;

  struct Callbacks {
    std::function<void(FrontProcess&, const common::Status&)> on_ready;
    std::function<void(FrontProcess&)> on_hello;  // spawned: its attach address is known
    std::function<void(FrontProcess&, const std::string& how)> on_exit;
    std::function<void(FrontProcess&, ipc::FrontMetricsArgs&&)> on_metrics;
  };

  struct Launch {
    std::string binary;  // absolute path of scalws-front
    ipc::FrontSettings settings;
    common::UniqueFd listener;  // a copy: the front gets it with front.config
    common::UniqueFd udp;       // with settings.quic: a copy of the address's UDP socket
    uint64_t ready_timeout_ms = 10'000;
  };

  static common::Result<std::unique_ptr<FrontProcess>> spawn(uv_loop_t* loop, Launch launch,
                                                             Callbacks callbacks);
  // Re-attaches to a front a previous controller left (checked against /proc first). An
  // error means it is not (or no longer) a front we can trust.
  static common::Result<std::unique_ptr<FrontProcess>> attach(uv_loop_t* loop,
                                                              const state::FrontRecord& record,
                                                              Callbacks callbacks);
  ~FrontProcess();
  FrontProcess(const FrontProcess&) = delete;
  FrontProcess& operator=(const FrontProcess&) = delete;

  // Sends an instance's entry with one descriptor per channel (copies; sent in parts of at
  // most one frame's worth). `done` gets the front's answer to the last part, always from
  // the loop (never from inside this call).
  void route(const ipc::FrontRouteArgs& entry, std::vector<common::UniqueFd> channels,
             std::function<void(const common::Status&)> done);
  void unroute(const std::string& instance, std::function<void(const common::Status&)> done);
  // Graceful stop over the channel (SIGTERM without one); SIGKILL after kill_after_ms.
  void stop(uint64_t kill_after_ms) { peer_.stop(kill_after_ms); }
  void kill() { peer_.kill(); }
  // Lets go: the front keeps accepting and waits for the next controller.
  void detach() { peer_.detach(); }

  pid_t pid() const { return peer_.pid(); }
  uint32_t slot() const { return settings_.slot; }
  State state() const { return peer_.state(); }
  std::string_view stateName() const { return peer_.stateName(); }
  bool ready() const { return state() == State::kReady; }
  bool isChild() const { return peer_.isChild(); }
  int64_t startedMs() const { return peer_.startedMs(); }
  uint64_t startedMonoMs() const { return peer_.startedMonoMs(); }
  uint64_t startTicks() const { return peer_.startTicks(); }
  const std::string& attachAddress() const { return peer_.attachAddress(); }
  const std::string& address() const { return address_; }
  // Spawned: what it was told; attached: what it says it was told.
  const ipc::FrontSettings& settings() const { return settings_; }
  const std::optional<ipc::SandboxSummary>& sandbox() const { return peer_.sandbox(); }
  // Attached: copies of its listening socket and channel ends (invalid/empty when they
  // could not be taken).
  common::UniqueFd takeAttachedListener() { return std::move(attached_listener_); }
  common::UniqueFd takeAttachedUdp() { return std::move(attached_udp_); }
  std::vector<common::UniqueFd> takeAttachedChannels() { return std::move(attached_channels_); }

 private:
  FrontProcess(uv_loop_t* loop, pid_t pid, common::UniqueFd pidfd, bool attaching,
               std::string address, Callbacks callbacks);

  static ipc::EndpointOptions endpointOptions();
  void onSpawnHello(ipc::Incoming& request, ipc::Replier replier);
  void onReady(ipc::Incoming& request, ipc::Replier replier);
  void onAttachHello(ipc::Incoming& request, ipc::Replier replier);
  void onMetrics(ipc::Incoming& request, ipc::Replier replier);
  void sendConfig();
  void failLater(std::function<void(const common::Status&)> done, const std::string& why);

  static const ipc::OpHandler<FrontProcess> kSpawnHandlers[];
  static const ipc::OpHandler<FrontProcess> kAttachHandlers[];

  uv_loop_t* loop_;
  std::string address_;
  Callbacks callbacks_;
  ipc::FrontSettings settings_;
  common::UniqueFd listener_;  // spawned: handed over with front.config
  common::UniqueFd udp_;       // the same, with settings_.quic
  common::UniqueFd attached_listener_;
  common::UniqueFd attached_udp_;
  std::vector<common::UniqueFd> attached_channels_;
  PeerProcess peer_;  // last: its hooks use the members above
};

}  // namespace scalws::controller
