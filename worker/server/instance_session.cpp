#include "worker/server/instance_session.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <utility>

#include "common/config/config_loader.h"
#include "common/hex.h"
#include "common/log.h"
#include "ipc/peer_credentials.h"
#include "worker/server/instance_pools.h"
#include "worker/server/site_runtime.h"
#include "worker/tls/ticket_keys.h"

namespace scalws::worker {

using common::Result;
using common::Status;
using common::UniqueFd;
using ipc::Json;

namespace {

constexpr uint32_t kMaxLoops = 1024;

Result<uint32_t> smallUint(const Json& args, std::string_view key, uint32_t max) {
  Result<uint64_t> value = ipc::uintField(args, key);
  if (!value.ok()) return value.status();
  if (*value > max) {
    return common::invalidArgument("\"" + std::string(key) + "\" must be at most " +
                                   std::to_string(max));
  }
  return static_cast<uint32_t>(*value);
}

std::string hexEncode(std::string_view bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

// The abstract name of a bound Unix socket, hex-encoded without the leading NUL.
std::string abstractName(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  size_t name_len = len > sizeof(sa_family_t) ? len - sizeof(sa_family_t) : 0;
  if (name_len < 2 || addr.sun_path[0] != '\0') return "";
  return hexEncode(std::string_view(addr.sun_path + 1, name_len - 1));
}

bool isListening(int fd) {
  int on = 0;
  socklen_t len = sizeof(on);
  return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

bool isDatagramSocket(int fd) {
  int type = 0;
  socklen_t len = sizeof(type);
  return ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM;
}

}  // namespace

Result<InstanceSettings> parseInstanceSettings(const Json& args) {
  InstanceSettings s;
  Result<std::string> instance = ipc::stringField(args, "instance");
  if (!instance.ok()) return instance.status();
  s.instance = *instance;
  Result<uint32_t> slot = smallUint(args, "slot", kMaxLoops);
  if (!slot.ok()) return slot.status();
  s.slot = *slot;
  Result<std::string> mode = ipc::stringField(args, "mode");
  if (!mode.ok()) return mode.status();
  if (*mode == "multi") {
    s.mode = common::config::WorkerMode::kMulti;
  } else if (*mode == "single") {
    s.mode = common::config::WorkerMode::kSingle;
  } else {
    return common::invalidArgument("\"mode\" must be \"multi\" or \"single\"");
  }
  Result<uint32_t> loops = smallUint(args, "loops", kMaxLoops);
  if (!loops.ok()) return loops.status();
  if (*loops == 0) return common::invalidArgument("\"loops\" must be at least 1");
  if (s.mode == common::config::WorkerMode::kMulti && *loops != 1) {
    return common::invalidArgument("a multi-mode worker runs exactly one loop");
  }
  s.loops = *loops;
  Result<std::string> cpus = ipc::stringField(args, "cpus");
  if (!cpus.ok()) return cpus.status();
  Result<common::CpuSet> set = common::parseCpuList(*cpus);
  if (!set.ok()) return set.status();
  s.cpus = *set;
  Result<std::string> user = ipc::stringField(args, "user");
  if (!user.ok()) return user.status();
  if (user->empty()) return common::invalidArgument("\"user\" must not be empty");
  s.user = *user;
  Result<uint64_t> uid = ipc::uintField(args, "controller_uid");
  if (!uid.ok()) return uid.status();
  s.controller_uid = static_cast<uid_t>(*uid);
  if (args.contains("tls_ticket_secret")) {
    Result<std::string> hex = ipc::stringField(args, "tls_ticket_secret");
    if (!hex.ok()) return hex.status();
    std::optional<std::string> secret = common::fromHex(*hex);
    if (!secret || secret->size() < tls::TicketKeyRing::kMinSecret) {
      return common::invalidArgument("\"tls_ticket_secret\" must be at least " +
                                     std::to_string(tls::TicketKeyRing::kMinSecret) +
                                     " bytes in hex");
    }
    s.tls_ticket_secret = std::move(*secret);
  }
  return s;
}

Result<std::shared_ptr<const ConfigSnapshot>> buildInstanceSnapshot(
    const std::string& text, const std::string& config_path, const InstanceSettings& settings,
    const std::vector<ipc::PhpPoolGrant>& pools) {
  common::config::LoadOptions options;
  options.allow_server_table = false;  // mode, CPUs and user are the controller's
  options.php_pools_from_controller = true;
  Result<common::config::SiteConfig> site =
      common::config::loadSiteConfigString(text, config_path, options);
  if (!site.ok()) return site.status();
  SCALWS_RETURN_IF_ERROR(applyPhpPoolGrants(*site, pools));
  common::config::ServerConfig server;
  server.workers = settings.loops;
  server.mode = settings.mode;
  server.cpus = settings.cpus.ids();
  server.user = settings.user;
  site->server = std::move(server);
  return ConfigSnapshot::build(std::move(site).value(), phpPoolShares(pools));
}

InstanceSession::InstanceSession(uv_loop_t* loop, std::string instance, UniqueFd channel,
                                 UniqueFd attach, InstanceHost& host)
    : loop_(loop),
      instance_(std::move(instance)),
      host_(host),
      endpoint_fd_(std::move(channel)),
      attach_fd_(std::move(attach)) {
  plan_.settings.instance = instance_;
}

InstanceSession::~InstanceSession() {
  close();
}

Status InstanceSession::start() {
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
  Json args = {{"pid", static_cast<int64_t>(::getpid())},
               {"slot", plan_.settings.slot},
               {"metrics", common::metrics::toJson(s)}};
  if (!upstreams.empty()) args["upstreams"] = common::metrics::toJson(upstreams);
  return endpoint_->notify("metrics", std::move(args)).ok();
}

void InstanceSession::close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  endpoint_.reset();
  if (attach_poll_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(attach_poll_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
    attach_poll_ = nullptr;
  }
  attach_fd_.reset();
  if (go_live_timer_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(go_live_timer_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    go_live_timer_ = nullptr;
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
  registerHandlers();
  return endpoint_->request("hello", helloArgs(attached), {}, [this, attached](Result<Json> reply) {
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

void InstanceSession::registerHandlers() {
  endpoint_->onClose([this](const Status& why) { onChannelClosed(why); });
  Status ok =
      endpoint_->registerHandler("config", [this](const ipc::Message& m, std::vector<UniqueFd>,
                                                  ipc::Replier r) { onConfig(m, std::move(r)); });
  ok = endpoint_->registerHandler(
      "listeners", [this](const ipc::Message& m, std::vector<UniqueFd> fds, ipc::Replier r) {
        onListeners(m, std::move(fds), std::move(r));
      });
  ok = endpoint_->registerHandler("reload", [this](const ipc::Message& m, std::vector<UniqueFd>,
                                                   ipc::Replier r) { onReload(m, std::move(r)); });
  ok = endpoint_->registerHandler("stop", [this](const ipc::Message&, std::vector<UniqueFd>,
                                                 ipc::Replier r) { onStop(std::move(r)); });
  (void)ok;  // every op above is controller -> worker in the op table
}

Json InstanceSession::helloArgs(bool attached) const {
  Json args = {{"pid", static_cast<int64_t>(::getpid())},
               {"instance", instance_},
               {"attached", attached},
               {"attach_address", attach_address_}};
  if (!attached) return args;
  const InstanceSettings& s = plan_.settings;
  args["slot"] = s.slot;
  args["state"] = state_ == State::kStopping ? "stopping" : "serving";
  args["mode"] = s.mode == common::config::WorkerMode::kSingle ? "single" : "multi";
  args["loops"] = s.loops;
  args["cpus"] = s.cpus.toString();
  args["user"] = s.user;
  args["config"] = config_text_;
  args["config_path"] = config_path_;
  args["php_pools"] = ipc::phpPoolGrantsJson(php_pools_);
  args["listeners"] = listenersJson(true);
  return args;
}

Json InstanceSession::listenersJson(bool with_fds) const {
  Json list = Json::array();
  for (const InstanceListener& l : plan_.listeners) {
    Json entry = {{"loop", l.loop}, {"address", l.address}, {"port", l.port}, {"tls", l.tls}};
    if (l.quic) {
      entry["quic"] = true;
      entry["steering"] = l.steering;
    }
    if (with_fds) entry["fd"] = l.fd.get();
    list.push_back(std::move(entry));
  }
  return list;
}

void InstanceSession::onConfig(const ipc::Message& request, ipc::Replier replier) {
  if (state_ != State::kAwaitConfig) {
    return replier.fail(ipc::errc::kFailed, "config is only accepted once, after hello");
  }
  Result<InstanceSettings> settings = parseInstanceSettings(request.args);
  if (!settings.ok()) return replier.fail(settings.status());
  if (settings->instance != instance_) {
    return replier.fail(ipc::errc::kInvalidArgument,
                        "this worker is instance " + instance_ + ", not " + settings->instance);
  }
  Result<std::string> text = ipc::stringField(request.args, "config");
  Result<std::string> path = ipc::stringField(request.args, "config_path");
  if (!text.ok()) return replier.fail(text.status());
  if (!path.ok()) return replier.fail(path.status());
  Result<std::vector<ipc::PhpPoolGrant>> pools = ipc::parsePhpPoolGrants(request.args);
  if (!pools.ok()) return replier.fail(pools.status());
  // Before the first snapshot: its TLS contexts derive their ticket keys from the secret.
  if (!settings->tls_ticket_secret.empty()) {
    tls::adoptProcessTicketSecret(settings->tls_ticket_secret);
  }
  auto snapshot = buildInstanceSnapshot(*text, *path, *settings, *pools);
  if (!snapshot.ok()) return replier.fail(snapshot.status());
  plan_.settings = std::move(settings).value();
  plan_.snapshot = std::move(snapshot).value();
  config_text_ = std::move(text).value();
  config_path_ = std::move(path).value();
  php_pools_ = std::move(pools).value();
  state_ = State::kAwaitListeners;
  replier.ok();
}

void InstanceSession::onListeners(const ipc::Message& request, std::vector<UniqueFd> fds,
                                  ipc::Replier replier) {
  if (state_ != State::kAwaitListeners) {
    return replier.fail(ipc::errc::kFailed, "listeners are only accepted once, after config");
  }
  auto list = request.args.find("listeners");
  if (list == request.args.end() || !list->is_array()) {
    return replier.fail(ipc::errc::kInvalidArgument, "\"listeners\" must be an array");
  }
  if (list->size() != fds.size()) {
    return replier.fail(ipc::errc::kInvalidArgument,
                        std::to_string(list->size()) + " listeners described but " +
                            std::to_string(fds.size()) + " fds received");
  }
  std::vector<InstanceListener> listeners;
  for (size_t i = 0; i < fds.size(); ++i) {
    const Json& entry = (*list)[i];
    Result<uint32_t> loop = smallUint(entry, "loop", kMaxLoops);
    Result<std::string> address = ipc::stringField(entry, "address");
    Result<uint64_t> port = ipc::uintField(entry, "port");
    Result<bool> tls = ipc::boolField(entry, "tls");
    for (const Status* s : {&loop.status(), &address.status(), &port.status(), &tls.status()}) {
      if (!s->ok()) return replier.fail(*s);
    }
    if (*loop >= plan_.settings.loops || *port == 0 || *port > 65535) {
      return replier.fail(ipc::errc::kInvalidArgument,
                          "listener " + *address + ": loop or port out of range");
    }
    bool quic = entry.value("quic", false);
    uint32_t steering = 0;
    if (quic) {
      Result<uint32_t> id = smallUint(entry, "steering", 0xfffe);
      if (!id.ok()) return replier.fail(id.status());
      steering = *id;
      if (!isDatagramSocket(fds[i].get())) {
        return replier.fail(ipc::errc::kInvalidArgument,
                            "listener " + *address + ": the fd is not a UDP socket");
      }
    } else if (!isListening(fds[i].get())) {
      return replier.fail(ipc::errc::kInvalidArgument,
                          "listener " + *address + ": the fd is not a listening socket");
    }
    InstanceListener l{*loop, *address, static_cast<uint16_t>(*port), *tls, std::move(fds[i])};
    l.quic = quic;
    l.steering = steering;
    listeners.push_back(std::move(l));
  }
  plan_.listeners = std::move(listeners);
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
        uv_close(reinterpret_cast<uv_handle_t*>(t),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
        self->go_live_timer_ = nullptr;
        self->goLive();
      },
      0, 0);
}

void InstanceSession::goLive() {
  if (state_ != State::kGoingLive) return;
  Result<Json> sandbox = host_.goLive(plan_);
  if (!sandbox.ok()) {
    LOG_ERROR("instance %s: cannot serve: %s", instance_.c_str(),
              sandbox.status().message().c_str());
    Status why = sandbox.status();
    Json args = {{"ok", false}, {"error", why.message()}};
    Status sent = endpoint_ ? endpoint_->request("ready", std::move(args), {},
                                                 [this, why](Result<Json>) { host_.fail(why); })
                            : Status(common::StatusCode::kUnavailable, "no channel");
    if (!sent.ok()) host_.fail(why);
    return;
  }
  state_ = State::kServing;
  Json args = {{"ok", true},
               {"pid", static_cast<int64_t>(::getpid())},
               {"loops", plan_.settings.loops},
               {"listeners", listenersJson(true)},
               {"sandbox", *sandbox}};
  if (!endpoint_ || !endpoint_->isOpen()) return;  // serving; a controller may attach
  Status sent = endpoint_->request("ready", std::move(args), {}, [](Result<Json> reply) {
    if (!reply.ok()) LOG_WARN("ready not acknowledged: %s", reply.status().message().c_str());
  });
  if (!sent.ok()) LOG_WARN("cannot send ready: %s", sent.message().c_str());
}

void InstanceSession::onReload(const ipc::Message& request, ipc::Replier replier) {
  if (state_ != State::kServing) {
    return replier.fail(ipc::errc::kFailed, "not serving, nothing to reload");
  }
  Result<std::string> text = ipc::stringField(request.args, "config");
  Result<std::string> path = ipc::stringField(request.args, "config_path");
  if (!text.ok()) return replier.fail(text.status());
  if (!path.ok()) return replier.fail(path.status());
  Result<std::vector<ipc::PhpPoolGrant>> pools = ipc::parsePhpPoolGrants(request.args);
  if (!pools.ok()) return replier.fail(pools.status());
  auto snapshot = buildInstanceSnapshot(*text, *path, plan_.settings, *pools);
  if (!snapshot.ok()) return replier.fail(snapshot.status());
  if (!sameListeners(plan_.snapshot->site(), (*snapshot)->site())) {
    return replier.fail(ipc::errc::kFailed,
                        "the listen addresses changed; that needs a restart of the instance");
  }
  Status admitted = host_.admits(**snapshot);
  if (!admitted.ok()) return replier.fail(admitted);
  plan_.snapshot = *snapshot;
  config_text_ = std::move(text).value();
  config_path_ = std::move(path).value();
  php_pools_ = std::move(pools).value();
  auto shared = std::make_shared<ipc::Replier>(std::move(replier));
  std::string name = instance_;
  host_.applySnapshot(std::move(snapshot).value(), [shared, name] {
    LOG_INFO("instance %s: reloaded", name.c_str());
    shared->ok();
  });
}

void InstanceSession::onStop(ipc::Replier replier) {
  replier.ok();
  requestStop();
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
    bool trusted = peer.ok() && (peer->uid == 0 || peer->uid == plan_.settings.controller_uid);
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
