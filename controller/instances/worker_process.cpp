#include "controller/instances/worker_process.h"

#include <unistd.h>

#include "common/log.h"
#include "controller/instances/worker_probe.h"
#include "controller/shared/handoff_channel.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using ipc::Json;

const ipc::OpHandler<WorkerProcess> WorkerProcess::kSpawnHandlers[] = {
    {ipc::op::kHello, &WorkerProcess::onSpawnHello},
    {ipc::op::kReady, &WorkerProcess::onReady},
    {ipc::op::kMetrics, &WorkerProcess::onMetrics},
};

const ipc::OpHandler<WorkerProcess> WorkerProcess::kAttachHandlers[] = {
    {ipc::op::kHello, &WorkerProcess::onAttachHello},
    {ipc::op::kMetrics, &WorkerProcess::onMetrics},
};

WorkerProcess::WorkerProcess(uv_loop_t* loop, pid_t pid, UniqueFd pidfd, bool attaching,
                             const std::string& instance, Callbacks callbacks)
    : callbacks_(std::move(callbacks)),
      peer_(loop, pid, std::move(pidfd), attaching,
            PeerProcess::Config{
                .who = "instance " + instance + ": worker",
                .noun = "worker",
                .stop = ipc::op::kStop,
                .stderr_op = ipc::op::kStderr,
                .log_prefix = "instance " + instance + " worker " + std::to_string(pid) + ": ",
            },
            PeerProcess::hooksOf(*this, callbacks_, [this](const std::string& line) {
              LOG_INFO("%s", line.c_str());
              if (callbacks_.on_log_line) callbacks_.on_log_line(line);
            })) {
  launch_.settings.instance = instance;
}

WorkerProcess::~WorkerProcess() = default;

// --- spawned workers ---------------------------------------------------------------------

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(uv_loop_t* loop, WorkerLaunch launch,
                                                            SlotListeners listeners,
                                                            Callbacks callbacks) {
  SpawnSpec spec{launch.scalwsd, launch.settings.instance, launch.settings.cpus};
  Result<SpawnedWorker> spawned = spawnWorker(spec);
  if (!spawned.ok()) return spawned.status();
  return converse(loop, std::move(spawned).value(), std::move(launch), std::move(listeners),
                  std::move(callbacks));
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::converse(uv_loop_t* loop, SpawnedWorker child,
                                                               WorkerLaunch launch,
                                                               SlotListeners listeners,
                                                               Callbacks callbacks) {
  std::unique_ptr<WorkerProcess> w(new WorkerProcess(loop, child.pid, std::move(child.pidfd), false,
                                                     launch.settings.instance,
                                                     std::move(callbacks)));
  w->slot_ = launch.settings.slot;
  w->cpus_ = launch.settings.cpus;
  Result<uint64_t> ticks = processStartTicks(child.pid);
  w->peer_.setStartTicks(ticks.ok() ? *ticks : 0);
  w->launch_ = std::move(launch);
  w->listeners_ = std::move(listeners);
  if (child.log) w->peer_.readLog(std::move(child.log));
  ipc::EndpointOptions options;  // controller <-> worker
  SCALWS_RETURN_IF_ERROR(w->peer_.converse(
      std::move(child.channel), options, PeerProcess::handlersOf<WorkerProcess>(*w, kSpawnHandlers),
      w->launch_.ready_timeout_ms));
  return w;
}

void WorkerProcess::onSpawnHello(ipc::Incoming& request, ipc::Replier replier) {
  if (!peer_.firstHello(replier)) return;
  Result<ipc::HelloArgs> hello = ipc::HelloArgs::decode(request.args());
  const std::string& instance = launch_.settings.instance;
  if (!hello.ok() || hello->instance != instance || hello->attached) {
    replier.fail(ipc::errc::kInvalidArgument, "this channel is for instance " + instance);
    return peer_.failStart("said hello as another instance");
  }
  peer_.helloTaken(hello->attach_address, std::move(replier));
  sendConfig();
}

void WorkerProcess::sendConfig() {
  ipc::ConfigArgs config;
  config.settings = launch_.settings;
  config.controller_uid = ::geteuid();
  config.tls_ticket_secret = launch_.tls_ticket_secret;
  peer_.startStep(ipc::op::kConfig, config.encode(), {}, "config", [this] { sendListeners(); });
}

void WorkerProcess::sendListeners() {
  ipc::ListenersArgs args{listeners_.specs, launch_.cache_names, launch_.shared_names};
  std::vector<UniqueFd> fds = std::move(listeners_.fds);
  listeners_.fds.clear();
  for (UniqueFd& fd : launch_.cache_fds) fds.push_back(std::move(fd));
  launch_.cache_fds.clear();
  if (launch_.access_log.valid()) {
    args.access_log = true;
    fds.push_back(std::move(launch_.access_log));
  }
  peer_.startStep(ipc::op::kListeners, args.encode(), std::move(fds), "listeners");
}

void WorkerProcess::onReady(ipc::Incoming& request, ipc::Replier replier) {
  peer_.onReady<ipc::ReadyArgs>(request, std::move(replier));
}

// --- attached workers --------------------------------------------------------------------

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::attach(uv_loop_t* loop,
                                                             const state::WorkerRecord& record,
                                                             Callbacks callbacks) {
  pid_t pid = static_cast<pid_t>(record.pid);
  Result<UniqueFd> pidfd = PeerProcess::pin(
      pid, record.start_ticks, [&] { return runsWorkerOf(pid, record.instance); },
      "a worker of " + record.instance);
  if (!pidfd.ok()) return pidfd.status();
  Result<UniqueFd> channel = connectAttachSocket(record.attach_address, pid);

  std::unique_ptr<WorkerProcess> w(
      new WorkerProcess(loop, pid, std::move(*pidfd), true, record.instance, std::move(callbacks)));
  w->slot_ = record.slot;
  w->peer_.setStartTicks(record.start_ticks);
  w->peer_.setAttachAddress(record.attach_address);
  w->recorded_digest_ = record.launch_digest;
  ipc::EndpointOptions options;
  SCALWS_RETURN_IF_ERROR(w->peer_.attach(
      std::move(channel), options, PeerProcess::handlersOf<WorkerProcess>(*w, kAttachHandlers),
      record.started_ms));
  return w;
}

void WorkerProcess::onAttachHello(ipc::Incoming& request, ipc::Replier replier) {
  if (!peer_.attachHello(replier)) return;
  auto bad = [&](const std::string& why) {
    replier.fail(ipc::errc::kInvalidArgument, why);
    peer_.reportReady(common::invalidArgument("attach hello: " + why));
  };
  Result<ipc::HelloArgs> hello = ipc::HelloArgs::decode(request.args());
  if (!hello.ok()) return bad(hello.status().message());
  if (!hello->attached || hello->instance != launch_.settings.instance || hello->pid != pid() ||
      hello->attached->settings.instance != launch_.settings.instance) {
    return bad("not the worker this record names");
  }
  ipc::HelloArgs::Attached& a = *hello->attached;
  AttachedState s;
  s.stopping = a.stopping;
  s.settings = std::move(a.settings);
  s.caches = std::move(a.caches);
  // Copies of its listeners, so a crash of this worker does not take its queue along.
  Result<SlotListeners> copies = copyListeners(a.listeners);
  if (copies.ok()) {
    s.listeners = std::move(copies).value();
  } else {
    LOG_WARN("instance %s: cannot take the listeners of pid %d (%s); a replacement will bind anew",
             launch_.settings.instance.c_str(), static_cast<int>(pid()),
             copies.status().message().c_str());
  }
  slot_ = s.settings.slot;
  cpus_ = s.settings.cpus;
  attached_ = std::move(s);
  peer_.attached(attached_.stopping, std::move(replier));
}

Result<SlotListeners> WorkerProcess::copyListeners(
    const std::vector<ipc::ListenerReport>& reported) {
  SlotListeners out;
  for (const ipc::ListenerReport& l : reported) {
    Result<UniqueFd> copy = copyFdOf(peer_.pidfd(), l.fd);
    if (!copy.ok()) return copy.status();
    if (l.spec.handoff) {
      // A channel end: paired by the kernel's name later (controller/shared/), or refused.
      if (!isChannelEnd(copy->get())) {
        return common::invalidArgument("listener " + l.spec.address + ": not a channel");
      }
    } else if (boundPort(copy->get()) != l.spec.port) {
      return common::invalidArgument("listener " + l.spec.address + ": port mismatch");
    }
    out.specs.push_back(l.spec);
    out.fds.push_back(std::move(*copy));
  }
  return out;
}

// --- both --------------------------------------------------------------------------------

void WorkerProcess::onMetrics(ipc::Incoming& request, ipc::Replier) {
  std::optional<ipc::MetricsArgs> m = peer_.takeMetrics<ipc::MetricsArgs>(request);
  if (m && callbacks_.on_metrics) callbacks_.on_metrics(*this, std::move(*m));
}

void WorkerProcess::reload(const ipc::ReloadArgs& args, std::function<void(const Status&)> done) {
  ipc::Endpoint* endpoint = peer_.readyEndpoint();
  if (endpoint == nullptr) {
    return done(Status(StatusCode::kUnavailable,
                       "worker pid " + std::to_string(pid()) + " is not ready for a reload"));
  }
  Status sent = endpoint->request(ipc::op::kReload, args.encode(), {},
                                  [this, args, done](Result<Json> reply) {
                                    if (reply.ok()) {
                                      launch_.settings.config = args.config;
                                      launch_.settings.config_path = args.config_path;
                                      launch_.settings.php_pools = args.php_pools;
                                      launch_.settings.apps = args.apps;
                                    }
                                    done(reply.status());
                                  });
  if (!sent.ok()) done(sent);
}

void WorkerProcess::sendSharedNames(const std::vector<ipc::SharedAddressNames>& names) {
  ipc::Endpoint* endpoint = peer_.readyEndpoint();
  if (endpoint == nullptr) return;
  ipc::Json args = ipc::Json::object();
  ipc::sharedNamesInto(names, args);
  std::string instance = launch_.settings.instance;
  pid_t pid = this->pid();
  Status sent = endpoint->request(
      ipc::op::kSharedNames, std::move(args), {}, [instance, pid](Result<Json> reply) {
        if (reply.ok()) return;
        LOG_WARN("instance %s: worker pid %d did not take the shared names: %s", instance.c_str(),
                 static_cast<int>(pid), reply.status().message().c_str());
      });
  if (!sent.ok()) {
    LOG_WARN("instance %s: cannot send the shared names to pid %d: %s", instance.c_str(),
             static_cast<int>(pid), sent.message().c_str());
  }
}

void WorkerProcess::reopenLogs(UniqueFd access_log, std::function<void(const Status&)> done) {
  ipc::Endpoint* endpoint = peer_.readyEndpoint();
  if (endpoint == nullptr) {
    return done(Status(StatusCode::kUnavailable,
                       "worker pid " + std::to_string(pid()) + " is not serving"));
  }
  std::vector<UniqueFd> fds;
  if (access_log.valid()) fds.push_back(std::move(access_log));
  Status sent = endpoint->request(ipc::op::kReopenLogs, Json::object(), std::move(fds),
                                  [done](Result<Json> reply) { done(reply.status()); });
  if (!sent.ok()) done(sent);
}

void WorkerProcess::purgeCache(const ipc::CachePurge& purge,
                               std::function<void(Result<ipc::CachePurgeResult>)> done) {
  ipc::Endpoint* endpoint = peer_.readyEndpoint();
  if (endpoint == nullptr) {
    return done(Status(StatusCode::kUnavailable,
                       "worker pid " + std::to_string(pid()) + " is not serving"));
  }
  Status sent =
      endpoint->request(ipc::op::kCachePurge, purge.encode(), {}, [done](Result<Json> reply) {
        if (!reply.ok()) return done(reply.status());
        done(ipc::CachePurgeResult::decode(*reply));
      });
  if (!sent.ok()) done(sent);
}

Result<InstanceCaches> WorkerProcess::cacheAreas(const common::config::SiteConfig& site) const {
  return InstanceCaches::adoptFrom(peer_.pidfd(), attached_.caches, site);
}

}  // namespace scalws::controller
