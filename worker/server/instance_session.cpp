#include "worker/server/instance_session.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <optional>
#include <utility>

#include "common/config/config_loader.h"
#include "common/hex.h"
#include "common/log.h"
#include "ipc/peer_credentials.h"
#include "ipc/uv_handle.h"
#include "worker/server/instance_apps.h"
#include "worker/server/instance_pools.h"
#include "worker/server/site_runtime.h"
#include "worker/tls/ticket_keys.h"

namespace scalws::worker {

using common::Result;
using common::Status;
using common::UniqueFd;
using ipc::Json;

namespace {

// The abstract name of a bound Unix socket, hex-encoded without the leading NUL.
std::string abstractName(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  size_t name_len = len > sizeof(sa_family_t) ? len - sizeof(sa_family_t) : 0;
  if (name_len < 2 || addr.sun_path[0] != '\0') return "";
  return common::toHex(std::string_view(addr.sun_path + 1, name_len - 1));
}

bool isListening(int fd) {
  int on = 0;
  socklen_t len = sizeof(on);
  return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

bool isHandoffChannel(int fd) {
  int type = 0;
  int domain = 0;
  socklen_t len = sizeof(type);
  socklen_t domain_len = sizeof(domain);
  return ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET &&
         ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &domain_len) == 0 && domain == AF_UNIX;
}

// The access log the controller opened: a file it may only append to.
Status checkLogFd(int fd) {
  struct stat st {};
  int flags = ::fcntl(fd, F_GETFL);
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || flags < 0 || (flags & O_APPEND) == 0) {
    return common::invalidArgument("the access log fd is not a file open for appending");
  }
  return common::okStatus();
}

bool isDatagramSocket(int fd) {
  int type = 0;
  socklen_t len = sizeof(type);
  return ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM;
}

}  // namespace

Result<ipc::ConfigArgs> parseInstanceSettings(const Json& args) {
  Result<ipc::ConfigArgs> config = ipc::ConfigArgs::decode(args);
  if (!config.ok()) return config.status();
  if (!config->tls_ticket_secret.empty() &&
      config->tls_ticket_secret.size() < tls::TicketKeyRing::kMinSecret) {
    return common::invalidArgument("\"tls_ticket_secret\" must be at least " +
                                   std::to_string(tls::TicketKeyRing::kMinSecret) +
                                   " bytes in hex");
  }
  return config;
}

Result<common::config::SiteConfig> loadInstanceSite(const ipc::WorkerSettings& settings) {
  common::config::LoadOptions options;
  options.server_table = common::config::ServerTable::kSiteOnly;  // see below
  options.php_pools_from_controller = true;
  options.apps_from_controller = true;
  Result<common::config::SiteConfig> site =
      common::config::loadSiteConfigString(settings.config, settings.config_path, options);
  if (!site.ok()) return site.status();
  SCALWS_RETURN_IF_ERROR(applyPhpPoolGrants(*site, settings.php_pools));
  SCALWS_RETURN_IF_ERROR(applyAppGrants(*site, settings.apps));
  // The site's own [server] keys (timeouts, limits, ...) from the config; processes, CPUs
  // and user from the controller. The log files are the controller's too: it opens them
  // and sends the fds, so no path is set here.
  common::config::ServerConfig server = common::config::serverOrDefaults(*site);
  server.workers = settings.loops;
  server.mode = settings.mode;
  server.cpus = settings.cpus.ids();
  server.user = settings.user;
  site->server = std::move(server);
  return site;
}

Result<std::shared_ptr<const ConfigSnapshot>> buildInstanceSnapshot(
    const ipc::WorkerSettings& settings, const cache::CacheSet* caches) {
  Result<common::config::SiteConfig> site = loadInstanceSite(settings);
  if (!site.ok()) return site.status();
  return ConfigSnapshot::build(std::move(site).value(), phpPoolShares(settings.php_pools), caches);
}

const ipc::OpHandler<InstanceSession> InstanceSession::kHandlers[] = {
    {ipc::op::kConfig, &InstanceSession::onConfig},
    {ipc::op::kListeners, &InstanceSession::onListeners},
    {ipc::op::kReload, &InstanceSession::onReload},
    {ipc::op::kStop, &InstanceSession::onStop},
    {ipc::op::kStderr, &InstanceSession::onStderr},
    {ipc::op::kCachePurge, &InstanceSession::onCachePurge},
    {ipc::op::kSharedNames, &InstanceSession::onSharedNames},
    {ipc::op::kReopenLogs, &InstanceSession::onReopenLogs},
};

InstanceSession::InstanceSession(uv_loop_t* loop, std::string instance, UniqueFd channel,
                                 UniqueFd attach, InstanceHost& host)
    : loop_(loop),
      instance_(std::move(instance)),
      host_(host),
      endpoint_fd_(std::move(channel)),
      attach_fd_(std::move(attach)) {
  plan_.settings.instance = instance_;
  mailbox_ = cache::LoopMailbox::open(loop_);
}

InstanceSession::~InstanceSession() {
  close();
}

Status InstanceSession::start() {
  // stdout and stderr are a pipe to the controller: one that died must not end us.
  std::signal(SIGPIPE, SIG_IGN);
  if (attach_fd_.valid()) {
    attach_address_ = abstractName(attach_fd_.get());
    attach_poll_ = new uv_poll_t;
    uv_poll_init(loop_, attach_poll_, attach_fd_.get());
    attach_poll_->data = this;
    uv_poll_start(attach_poll_, UV_READABLE, &InstanceSession::onAttachReadable);
  }
  return openChannel(std::move(endpoint_fd_), false);
}

bool InstanceSession::sendMetrics(const common::metrics::MetricsSnapshot& s,
                                  const std::vector<common::metrics::UpstreamMetrics>& upstreams) {
  // Two snapshots' worth queued: the controller is not reading; the next one says it all.
  constexpr size_t kMaxQueued = 8 * 1024;
  if (state_ != State::kServing && state_ != State::kStopping) return false;
  if (!channelOpen() || endpoint_->queuedBytes() > kMaxQueued) return false;
  ipc::MetricsArgs args{::getpid(), plan_.settings.slot, s, upstreams, {}};
  if (plan_.caches != nullptr) {
    for (const auto& [name, shared] : plan_.caches->all()) {
      cache::CacheSize size = shared->size();
      args.caches.push_back({name, size.entries, size.memory_bytes, size.disk_bytes});
    }
  }
  return endpoint_->notify(ipc::op::kMetrics, args.encode()).ok();
}

void InstanceSession::close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  endpoint_.reset();
  mailbox_->close();
  if (attach_poll_ != nullptr) {
    ipc::closeAndDelete(attach_poll_);
  }
  attach_fd_.reset();
  if (go_live_timer_ != nullptr) {
    ipc::closeAndDelete(go_live_timer_);
  }
}

Status InstanceSession::openChannel(UniqueFd fd, bool attached) {
  ipc::EndpointOptions options;
  options.local = ipc::Role::kWorker;
  options.peer = ipc::Role::kController;
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop_, std::move(fd), options);
  if (!endpoint.ok()) return endpoint.status();
  endpoint_ = std::move(endpoint).value();
  endpoint_->onClose([this](const Status& why) { onChannelClosed(why); });
  SCALWS_RETURN_IF_ERROR(ipc::registerHandlers<InstanceSession>(*endpoint_, *this, kHandlers));
  return endpoint_->request(
      ipc::op::kHello, hello(attached).encode(), {}, [this, attached](Result<Json> reply) {
        if (reply.ok()) {
          if (state_ == State::kHello) state_ = State::kAwaitConfig;
          return;
        }
        LOG_ERROR("controller refused hello: %s", reply.status().message().c_str());
        if (!attached && state_ == State::kHello) {
          host_.fail(reply.status());
        } else if (endpoint_) {
          endpoint_->close();  // serving on; a later controller may try again
        }
      });
}

ipc::HelloArgs InstanceSession::hello(bool attached) const {
  ipc::HelloArgs h;
  h.pid = ::getpid();
  h.instance = instance_;
  h.attach_address = attach_address_;
  if (attached) {
    h.attached = ipc::HelloArgs::Attached{state_ == State::kStopping, plan_.settings,
                                          listenerReports(), cacheReports()};
  }
  return h;
}

std::vector<ipc::CacheAreaReport> InstanceSession::cacheReports() const {
  std::vector<ipc::CacheAreaReport> out;
  if (plan_.caches == nullptr) return out;
  for (const auto& [name, shared] : plan_.caches->all()) {
    out.push_back(ipc::CacheAreaReport{name, shared->areaFd()});
  }
  if (plan_.caches->limits() != nullptr) {
    out.push_back(
        ipc::CacheAreaReport{std::string(ipc::kLimitAreaName), plan_.caches->limits()->fd()});
  }
  return out;
}

Result<std::shared_ptr<cache::CacheSet>> InstanceSession::adoptCaches(
    const std::vector<std::string>& names, std::vector<UniqueFd> fds) const {
  Result<common::config::SiteConfig> site = loadInstanceSite(plan_.settings);
  if (!site.ok()) return site.status();
  auto set = std::make_shared<cache::CacheSet>();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == ipc::kLimitAreaName) {
      // Mapped and checked now, so a table that is not what this config makes (its size,
      // its header) refuses the start.
      if (!common::config::hasLimits(*site) || set->limits() != nullptr) {
        return common::invalidArgument("a limit table the config has no use for, or twice");
      }
      Result<std::shared_ptr<limits::SharedLimits>> table =
          limits::SharedLimits::adopt(site->limit_table, std::move(fds[i]));
      if (!table.ok()) {
        return common::invalidArgument("the limit table sent cannot be used: " +
                                       table.status().message());
      }
      set->setLimits(std::move(table).value());
      continue;
    }
    const common::config::CacheConfig* config = nullptr;
    for (const common::config::CacheConfig& c : site->caches) {
      if (c.name == names[i]) config = &c;
    }
    if (config == nullptr || set->find(names[i]) != nullptr) {
      return common::invalidArgument("cache." + names[i] + ": not a cache of the config, or twice");
    }
    std::shared_ptr<cache::SharedCache> shared =
        cache::SharedCache::adopt(*config, std::move(fds[i]));
    // Attached now, so an area that is not what this config makes refuses the start.
    if (shared->store() == nullptr) {
      return common::invalidArgument("cache." + names[i] + ": the area sent cannot be used");
    }
    SCALWS_RETURN_IF_ERROR(shared->prepareDisk(plan_.settings.user));
    set->add(names[i], std::move(shared));
  }
  return set;
}

std::vector<ipc::ListenerReport> InstanceSession::listenerReports() const {
  std::vector<ipc::ListenerReport> out;
  for (const InstanceListener& l : plan_.listeners) {
    out.push_back(ipc::ListenerReport{l, l.fd.get()});
  }
  return out;
}

void InstanceSession::onConfig(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kAwaitConfig) {
    return replier.fail(ipc::errc::kFailed, "config is only accepted once, after hello");
  }
  Result<ipc::ConfigArgs> config = parseInstanceSettings(request.args());
  if (!config.ok()) return replier.fail(config.status());
  if (config->settings.instance != instance_) {
    return replier.fail(ipc::errc::kInvalidArgument, "this worker is instance " + instance_ +
                                                         ", not " + config->settings.instance);
  }
  // Before the first snapshot: its TLS contexts derive their ticket keys from the secret.
  if (!config->tls_ticket_secret.empty()) {
    tls::adoptProcessTicketSecret(config->tls_ticket_secret);
  }
  // The snapshot is built once the cache areas came with the listeners; the config is
  // checked now, so a bad one is refused as the config.
  Result<common::config::SiteConfig> site = loadInstanceSite(config->settings);
  if (!site.ok()) return replier.fail(site.status());
  plan_.settings = std::move(config->settings);
  plan_.controller_uid = static_cast<uid_t>(config->controller_uid);
  state_ = State::kAwaitListeners;
  replier.ok();
}

void InstanceSession::onListeners(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kAwaitListeners) {
    return replier.fail(ipc::errc::kFailed, "listeners are only accepted once, after config");
  }
  Result<ipc::ListenersArgs> args = ipc::ListenersArgs::decode(request.args());
  if (!args.ok()) return replier.fail(args.status());
  std::vector<common::UniqueFd>& fds = request.fds;
  size_t logs = args->access_log ? 1 : 0;
  if (args->listeners.size() + args->caches.size() + logs != fds.size()) {
    return replier.fail(ipc::errc::kInvalidArgument,
                        std::to_string(args->listeners.size()) + " listeners, " +
                            std::to_string(args->caches.size()) + " caches and " +
                            std::to_string(logs) + " access log described but " +
                            std::to_string(fds.size()) + " fds received");
  }
  UniqueFd access_log;
  if (args->access_log) {
    access_log = std::move(fds.back());
    fds.pop_back();
    Status usable = checkLogFd(access_log.get());
    if (!usable.ok()) return replier.fail(usable);
  }
  std::vector<InstanceListener> listeners;
  for (size_t i = 0; i < args->listeners.size(); ++i) {
    const ipc::ListenerSpec& spec = args->listeners[i];
    if (spec.loop >= plan_.settings.loops) {
      return replier.fail(ipc::errc::kInvalidArgument,
                          "listener " + spec.address + ": loop out of range");
    }
    if (spec.quic) {
      if (!isDatagramSocket(fds[i].get())) {
        return replier.fail(ipc::errc::kInvalidArgument,
                            "listener " + spec.address + ": the fd is not a UDP socket");
      }
    } else if (spec.handoff) {
      if (!isHandoffChannel(fds[i].get())) {
        return replier.fail(ipc::errc::kInvalidArgument,
                            "listener " + spec.address + ": the fd is not a unix seqpacket socket");
      }
    } else if (!isListening(fds[i].get())) {
      return replier.fail(ipc::errc::kInvalidArgument,
                          "listener " + spec.address + ": the fd is not a listening socket");
    }
    listeners.push_back(InstanceListener{spec, std::move(fds[i])});
  }
  std::vector<UniqueFd> cache_fds;
  for (size_t i = args->listeners.size(); i < fds.size(); ++i)
    cache_fds.push_back(std::move(fds[i]));
  Result<std::shared_ptr<cache::CacheSet>> caches = adoptCaches(args->caches, std::move(cache_fds));
  if (!caches.ok()) return replier.fail(caches.status());
  auto snapshot = buildInstanceSnapshot(plan_.settings, caches->get());
  if (!snapshot.ok()) return replier.fail(snapshot.status());
  plan_.listeners = std::move(listeners);
  plan_.shared = std::move(args->shared);
  plan_.caches = std::move(caches).value();
  plan_.snapshot = std::move(snapshot).value();
  plan_.access_log = std::move(access_log);
  state_ = State::kGoingLive;
  replier.ok();
  // Out of this handler: the reply leaves first, and the sandbox is entered from a plain
  // loop callback rather than from inside the endpoint's dispatch.
  go_live_timer_ = new uv_timer_t;
  uv_timer_init(loop_, go_live_timer_);
  go_live_timer_->data = this;
  uv_timer_start(
      go_live_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<InstanceSession*>(t->data);
        ipc::closeAndDelete(self->go_live_timer_);  // `t`: closed from its own callback
        self->goLive();
      },
      0, 0);
}

void InstanceSession::goLive() {
  if (state_ != State::kGoingLive) return;
  Result<ipc::SandboxSummary> sandbox = host_.goLive(plan_);
  if (!sandbox.ok()) {
    LOG_ERROR("instance %s: cannot serve: %s", instance_.c_str(),
              sandbox.status().message().c_str());
    Status why = sandbox.status();
    ipc::ReadyArgs refusal;
    refusal.error = why.message();
    Status sent = endpoint_ ? endpoint_->request(ipc::op::kReady, refusal.encode(), {},
                                                 [this, why](Result<Json>) { host_.fail(why); })
                            : Status(common::StatusCode::kUnavailable, "no channel");
    if (!sent.ok()) host_.fail(why);
    return;
  }
  state_ = State::kServing;
  ipc::ReadyArgs ready;
  ready.ok = true;
  ready.pid = ::getpid();
  ready.loops = plan_.settings.loops;
  ready.listeners = listenerReports();
  ready.caches = cacheReports();
  ready.sandbox = std::move(sandbox).value();
  if (!endpoint_ || !endpoint_->isOpen()) return;  // serving; a controller may attach
  Status sent = endpoint_->request(ipc::op::kReady, ready.encode(), {}, [](Result<Json> reply) {
    if (!reply.ok()) LOG_WARN("ready not acknowledged: %s", reply.status().message().c_str());
  });
  if (!sent.ok()) LOG_WARN("cannot send ready: %s", sent.message().c_str());
}

void InstanceSession::onReload(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kServing) {
    return replier.fail(ipc::errc::kFailed, "not serving, nothing to reload");
  }
  Result<ipc::ReloadArgs> reload = ipc::ReloadArgs::decode(request.args());
  if (!reload.ok()) return replier.fail(reload.status());
  ipc::WorkerSettings next = plan_.settings;
  next.config = std::move(reload->config);
  next.config_path = std::move(reload->config_path);
  next.php_pools = std::move(reload->php_pools);
  next.apps = std::move(reload->apps);
  auto snapshot = buildInstanceSnapshot(next, plan_.caches.get());
  if (!snapshot.ok()) return replier.fail(snapshot.status());
  for (const common::config::CacheConfig& c : (*snapshot)->site().caches) {
    std::shared_ptr<cache::SharedCache> shared = plan_.caches->find(c.name);
    if (shared == nullptr || !common::config::sameCacheStorage(shared->config(), c)) {
      return replier.fail(ipc::errc::kFailed, "cache." + c.name +
                                                  ": its storage changed; that needs a restart "
                                                  "of the instance");
    }
  }
  if (!sameListeners(plan_.snapshot->site(), (*snapshot)->site())) {
    return replier.fail(ipc::errc::kFailed,
                        "the listen addresses changed; that needs a restart of the instance");
  }
  Status admitted = host_.admits(**snapshot);
  if (!admitted.ok()) return replier.fail(admitted);
  plan_.snapshot = *snapshot;
  plan_.settings = std::move(next);
  auto shared = std::make_shared<ipc::Replier>(std::move(replier));
  std::string name = instance_;
  host_.applySnapshot(std::move(snapshot).value(), [shared, name] {
    LOG_INFO("instance %s: reloaded", name.c_str());
    shared->ok();
  });
}

void InstanceSession::onStop(ipc::Incoming&, ipc::Replier replier) {
  replier.ok();
  requestStop();
}

void InstanceSession::onStderr(ipc::Incoming& request, ipc::Replier replier) {
  if (request.fds.size() != 1) {
    return replier.fail(ipc::errc::kInvalidArgument, "stderr takes one fd");
  }
  // dup3 is in the seccomp allow-list; the old pipe's reader died with its controller.
  int fd = request.fds[0].get();
  if (::dup3(fd, STDOUT_FILENO, 0) < 0 || ::dup3(fd, STDERR_FILENO, 0) < 0) {
    return replier.fail(common::errnoStatus(errno, "dup3"));
  }
  replier.ok();
}

void InstanceSession::onCachePurge(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kServing) return replier.fail(ipc::errc::kFailed, "not serving");
  Result<ipc::CachePurge> purge = ipc::CachePurge::decode(request.args());
  if (!purge.ok()) return replier.fail(purge.status());
  std::vector<std::shared_ptr<cache::SharedCache>> targets;
  if (plan_.caches != nullptr) {
    for (const auto& [name, shared] : plan_.caches->all()) {
      if (purge->cache.empty() || purge->cache == name) targets.push_back(shared);
    }
  }
  if (!purge->cache.empty() && targets.empty()) {
    return replier.fail(ipc::errc::kNotFound, "no [cache." + purge->cache + "]");
  }
  static constexpr cache::PurgeScope kScopes[] = {
      cache::PurgeScope::kUrl, cache::PurgeScope::kPrefix, cache::PurgeScope::kAll};
  cache::PurgeScope scope = kScopes[static_cast<size_t>(purge->scope)];
  struct Tally {
    size_t waiting = 0;
    ipc::CachePurgeResult total;
    ipc::Replier replier;
  };
  auto tally = std::make_shared<Tally>(Tally{targets.size(), {}, std::move(replier)});
  if (targets.empty()) return tally->replier.ok(tally->total.encode());
  // Each cache answers here or on its disk thread; the reply leaves from this loop.
  auto counted = [tally](cache::PurgeCounts counts) {
    tally->total.memory_entries += counts.memory_entries;
    tally->total.disk_files += counts.disk_files;
    if (--tally->waiting == 0) tally->replier.ok(tally->total.encode());
  };
  for (const std::shared_ptr<cache::SharedCache>& shared : targets) {
    std::shared_ptr<cache::LoopMailbox> mailbox = mailbox_;
    shared->purge(scope, purge->target, [mailbox, counted](cache::PurgeCounts counts) {
      mailbox->post([counted, counts] { counted(counts); });
    });
  }
}

void InstanceSession::onSharedNames(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kServing) return replier.fail(ipc::errc::kFailed, "not serving");
  Result<std::vector<ipc::SharedAddressNames>> shared = ipc::sharedNamesFrom(request.args());
  if (!shared.ok()) return replier.fail(shared.status());
  plan_.shared = std::move(shared).value();
  host_.applySharedNames(plan_.shared);
  replier.ok();
}

void InstanceSession::onReopenLogs(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kServing) return replier.fail(ipc::errc::kFailed, "not serving");
  if (request.fds.size() > 1) {
    return replier.fail(ipc::errc::kInvalidArgument, "reopen_logs takes at most one fd");
  }
  if (request.fds.empty() || !plan_.access_log.valid()) return replier.ok();  // no access log
  int fd = request.fds[0].get();
  Status usable = checkLogFd(fd);
  if (!usable.ok()) return replier.fail(usable);
  // The new file takes the old one's fd number: every loop's next write(2) goes there, with
  // no handoff between threads and no line written to a closed fd. Lines a loop buffered
  // before this land in the new file at its next flush, so none is lost across a rotation.
  if (::dup3(fd, plan_.access_log.get(), O_CLOEXEC) < 0) {
    return replier.fail(common::errnoStatus(errno, "dup3"));
  }
  replier.ok();
}

void InstanceSession::requestStop() {
  if (state_ == State::kStopping || state_ == State::kClosed) return;
  if (state_ != State::kServing) {
    // Not serving yet: nothing to drain.
    host_.fail(Status(common::StatusCode::kUnavailable, "stopped before serving"));
    return;
  }
  state_ = State::kStopping;
  LOG_INFO("instance %s: stopping gracefully", instance_.c_str());
  host_.stop();
}

void InstanceSession::onChannelClosed(const Status& why) {
  if (state_ == State::kServing || state_ == State::kStopping) {
    LOG_WARN(
        "instance %s: controller channel closed (%s); serving on, waiting for a "
        "controller to attach",
        instance_.c_str(), why.ok() ? "end of stream" : why.message().c_str());
    return;
  }
  if (state_ == State::kClosed) return;
  host_.fail(Status(common::StatusCode::kUnavailable,
                    "the controller went away before this worker served" +
                        (why.ok() ? std::string() : ": " + why.message())));
}

void InstanceSession::onAttachReadable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<InstanceSession*>(handle->data);
  if (status < 0) {
    LOG_WARN("attach socket: %s", uv_strerror(status));
    return;
  }
  self->acceptAttach();
}

void InstanceSession::acceptAttach() {
  while (attach_fd_.valid()) {
    UniqueFd conn(::accept4(attach_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!conn) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: wait for the next one
    }
    Result<ipc::PeerCredentials> peer = ipc::peerCredentials(conn.get());
    bool trusted = peer.ok() && (peer->uid == 0 || peer->uid == plan_.controller_uid);
    bool serving = state_ == State::kServing || state_ == State::kStopping;
    if (!trusted || !serving || channelOpen()) {
      if (!trusted) LOG_WARN("attach refused: the peer is neither root nor our controller");
      continue;  // conn closes here
    }
    LOG_INFO("instance %s: a controller attached (pid %d)", instance_.c_str(),
             static_cast<int>(peer->pid));
    Status opened = openChannel(std::move(conn), true);
    if (!opened.ok()) LOG_WARN("attach: %s", opened.message().c_str());
  }
}

}  // namespace scalws::worker
