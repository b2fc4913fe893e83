#include "controller/shared/front_process.h"

#include <unistd.h>

#include <algorithm>

#include "controller/deferred_call.h"
#include "controller/instances/worker_probe.h"
#include "controller/instances/worker_spawn.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using ipc::Json;

const ipc::OpHandler<FrontProcess> FrontProcess::kSpawnHandlers[] = {
    {ipc::op::kFrontHello, &FrontProcess::onSpawnHello},
    {ipc::op::kFrontReady, &FrontProcess::onReady},
    {ipc::op::kFrontMetrics, &FrontProcess::onMetrics},
};

const ipc::OpHandler<FrontProcess> FrontProcess::kAttachHandlers[] = {
    {ipc::op::kFrontHello, &FrontProcess::onAttachHello},
    {ipc::op::kFrontMetrics, &FrontProcess::onMetrics},
};

FrontProcess::FrontProcess(uv_loop_t* loop, pid_t pid, UniqueFd pidfd, bool attaching,
                           std::string address, Callbacks callbacks)
    : loop_(loop),
      address_(std::move(address)),
      callbacks_(std::move(callbacks)),
      peer_(loop, pid, std::move(pidfd), attaching,
            PeerProcess::Config{
                .who = "front " + address_,
                .noun = "front",
                .stop = ipc::op::kFrontStop,
                .stderr_op = ipc::op::kFrontStderr,
                .log_prefix = "front " + address_ + " pid " + std::to_string(pid) + ": ",
            },
            PeerProcess::hooksOf(*this, callbacks_)) {}

FrontProcess::~FrontProcess() = default;

ipc::EndpointOptions FrontProcess::endpointOptions() {
  ipc::EndpointOptions options;
  options.local = ipc::Role::kController;
  options.peer = ipc::Role::kFront;
  return options;
}

// --- spawned fronts ----------------------------------------------------------------------

Result<std::unique_ptr<FrontProcess>> FrontProcess::spawn(uv_loop_t* loop, Launch launch,
                                                          Callbacks callbacks) {
  SpawnSpec spec{launch.binary, launch.settings.address, {}, "--address"};
  Result<SpawnedWorker> child = spawnWorker(spec);
  if (!child.ok()) return child.status();
  std::unique_ptr<FrontProcess> f(new FrontProcess(loop, child->pid, std::move(child->pidfd), false,
                                                   launch.settings.address, std::move(callbacks)));
  f->settings_ = launch.settings;
  f->listener_ = std::move(launch.listener);
  f->udp_ = std::move(launch.udp);
  Result<uint64_t> ticks = processStartTicks(child->pid);
  f->peer_.setStartTicks(ticks.ok() ? *ticks : 0);
  if (child->log) f->peer_.readLog(std::move(child->log));
  SCALWS_RETURN_IF_ERROR(f->peer_.converse(
      std::move(child->channel), endpointOptions(),
      PeerProcess::handlersOf<FrontProcess>(*f, kSpawnHandlers), launch.ready_timeout_ms));
  return f;
}

void FrontProcess::onSpawnHello(ipc::Incoming& request, ipc::Replier replier) {
  if (!peer_.firstHello(replier)) return;
  Result<ipc::FrontHelloArgs> hello = ipc::FrontHelloArgs::decode(request.args());
  if (!hello.ok() || hello->address != address_ || hello->attached || hello->pid != pid()) {
    replier.fail(ipc::errc::kInvalidArgument, "this channel is for the front of " + address_);
    return peer_.failStart("said hello as another front");
  }
  peer_.helloTaken(hello->attach_address, std::move(replier));
  sendConfig();
}

void FrontProcess::sendConfig() {
  ipc::FrontConfigArgs config{settings_, static_cast<uint64_t>(::geteuid())};
  std::vector<UniqueFd> fds;
  fds.push_back(std::move(listener_));
  if (settings_.quic) fds.push_back(std::move(udp_));
  peer_.startStep(ipc::op::kFrontConfig, config.encode(), std::move(fds), "config");
}

void FrontProcess::onReady(ipc::Incoming& request, ipc::Replier replier) {
  peer_.onReady<ipc::FrontReadyArgs>(request, std::move(replier));
}

// --- attached fronts ---------------------------------------------------------------------

Result<std::unique_ptr<FrontProcess>> FrontProcess::attach(uv_loop_t* loop,
                                                           const state::FrontRecord& record,
                                                           Callbacks callbacks) {
  pid_t pid = static_cast<pid_t>(record.pid);
  Result<UniqueFd> pidfd = PeerProcess::pin(
      pid, record.start_ticks,
      [&] { return runsProgramWith(pid, "scalws-front", "--address", record.address); },
      "the front of " + record.address);
  if (!pidfd.ok()) return pidfd.status();
  Result<UniqueFd> channel = connectAttachSocket(record.attach_address, pid);
  std::unique_ptr<FrontProcess> f(
      new FrontProcess(loop, pid, std::move(*pidfd), true, record.address, std::move(callbacks)));
  f->settings_.slot = record.slot;
  f->peer_.setStartTicks(record.start_ticks);
  f->peer_.setAttachAddress(record.attach_address);
  SCALWS_RETURN_IF_ERROR(f->peer_.attach(std::move(channel), endpointOptions(),
                                         PeerProcess::handlersOf<FrontProcess>(*f, kAttachHandlers),
                                         record.started_ms));
  return f;
}

void FrontProcess::onAttachHello(ipc::Incoming& request, ipc::Replier replier) {
  if (!peer_.attachHello(replier)) return;
  Result<ipc::FrontHelloArgs> hello = ipc::FrontHelloArgs::decode(request.args());
  if (!hello.ok() || !hello->attached || hello->pid != pid() || hello->address != address_ ||
      hello->attached->settings.address != address_) {
    std::string why = hello.ok() ? "not the front this record names" : hello.status().message();
    replier.fail(ipc::errc::kInvalidArgument, why);
    return peer_.reportReady(common::invalidArgument("attach hello: " + why));
  }
  ipc::FrontHelloArgs::Attached& a = *hello->attached;
  settings_ = a.settings;
  // Copies of what it holds, checked by the owner against the kernel before any is used.
  if (Result<UniqueFd> listener = copyFdOf(peer_.pidfd(), a.listener_fd); listener.ok()) {
    attached_listener_ = std::move(*listener);
  }
  if (a.udp_fd >= 0) {
    if (Result<UniqueFd> udp = copyFdOf(peer_.pidfd(), a.udp_fd); udp.ok()) {
      attached_udp_ = std::move(*udp);
    }
  }
  for (int fd : a.channel_fds) {
    Result<UniqueFd> copy = copyFdOf(peer_.pidfd(), fd);
    if (copy.ok()) attached_channels_.push_back(std::move(*copy));
  }
  peer_.attached(a.stopping, std::move(replier));
}

// --- both --------------------------------------------------------------------------------

void FrontProcess::onMetrics(ipc::Incoming& request, ipc::Replier) {
  std::optional<ipc::FrontMetricsArgs> m = peer_.takeMetrics<ipc::FrontMetricsArgs>(request);
  if (m && callbacks_.on_metrics) callbacks_.on_metrics(*this, std::move(*m));
}

void FrontProcess::route(const ipc::FrontRouteArgs& entry, std::vector<UniqueFd> channels,
                         std::function<void(const Status&)> done) {
  ipc::Endpoint* endpoint = peer_.readyEndpoint();
  if (endpoint == nullptr) {
    return failLater(std::move(done), "front pid " + std::to_string(pid()) + " is not ready");
  }
  // In parts of at most one frame's descriptors; the front puts the entry in force with
  // the last part, so the answer to that one is the answer.
  size_t total = channels.size();
  size_t sent_parts = 0;
  size_t parts = std::max<size_t>(1, (total + ipc::kMaxFdsPerFrame - 1) / ipc::kMaxFdsPerFrame);
  for (size_t part = 0; part < parts; ++part) {
    ipc::FrontRouteArgs args;
    args.instance = entry.instance;
    args.names = entry.names;
    args.is_default = entry.is_default;
    args.more = part + 1 < parts;
    std::vector<UniqueFd> fds;
    size_t begin = part * ipc::kMaxFdsPerFrame;
    size_t end = std::min(total, begin + ipc::kMaxFdsPerFrame);
    for (size_t i = begin; i < end; ++i) {
      args.channels.push_back(entry.channels[i]);
      fds.push_back(std::move(channels[i]));
    }
    bool last = !args.more;
    Status sent = endpoint->request(ipc::op::kFrontRoute, args.encode(), std::move(fds),
                                    [done, last](Result<Json> reply) {
                                      if (last || !reply.ok()) done(reply.status());
                                    });
    if (!sent.ok()) {
      if (sent_parts == 0) failLater(std::move(done), sent.message());
      return;  // an earlier part's failure (the channel closes) answers `done`
    }
    ++sent_parts;
  }
}

void FrontProcess::unroute(const std::string& instance, std::function<void(const Status&)> done) {
  ipc::Endpoint* endpoint = peer_.readyEndpoint();
  if (endpoint == nullptr) {
    return failLater(std::move(done), "front pid " + std::to_string(pid()) + " is not ready");
  }
  Status sent = endpoint->request(ipc::op::kFrontUnroute, Json{{"instance", instance}}, {},
                                  [done](Result<Json> reply) { done(reply.status()); });
  if (!sent.ok()) failLater(std::move(done), sent.message());
}

void FrontProcess::failLater(std::function<void(const Status&)> done, const std::string& why) {
  // Never from inside the call: the caller may be walking what the answer changes.
  deferCall(loop_, [done = std::move(done), why] { done(Status(StatusCode::kUnavailable, why)); });
}

}  // namespace scalws::controller
