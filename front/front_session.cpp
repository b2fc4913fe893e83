#include "front/front_session.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "common/hex.h"
#include "common/log.h"
#include "front/front_sandbox.h"
#include "ipc/peer_credentials.h"

namespace scalws::front {

using common::Result;
using common::Status;
using common::UniqueFd;
using ipc::Json;

namespace {

constexpr uint64_t kMetricsIntervalMs = 1000;

// The abstract name of a bound Unix socket, hex-encoded without the leading NUL.
std::string abstractName(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  size_t name_len = len > sizeof(sa_family_t) ? len - sizeof(sa_family_t) : 0;
  if (name_len < 2 || addr.sun_path[0] != '\0') return "";
  return common::toHex(std::string_view(addr.sun_path + 1, name_len - 1));
}

int socketOption(int fd, int option) {
  int value = -1;
  socklen_t len = sizeof(value);
  return ::getsockopt(fd, SOL_SOCKET, option, &value, &len) == 0 ? value : -1;
}

bool isTcpListener(int fd) {
  int domain = socketOption(fd, SO_DOMAIN);
  return socketOption(fd, SO_ACCEPTCONN) == 1 && socketOption(fd, SO_TYPE) == SOCK_STREAM &&
         (domain == AF_INET || domain == AF_INET6);
}

bool isUdpSocket(int fd) {
  int domain = socketOption(fd, SO_DOMAIN);
  return socketOption(fd, SO_TYPE) == SOCK_DGRAM && (domain == AF_INET || domain == AF_INET6);
}

bool isChannel(int fd) {
  return socketOption(fd, SO_DOMAIN) == AF_UNIX && socketOption(fd, SO_TYPE) == SOCK_SEQPACKET;
}

template <typename T>
void closeHandle(T*& handle) {
  if (handle == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(handle),
           [](uv_handle_t* h) { delete reinterpret_cast<T*>(h); });
  handle = nullptr;
}

}  // namespace

const ipc::OpHandler<FrontSession> FrontSession::kHandlers[] = {
    {ipc::op::kFrontConfig, &FrontSession::onConfig},
    {ipc::op::kFrontRoute, &FrontSession::onRoute},
    {ipc::op::kFrontUnroute, &FrontSession::onUnroute},
    {ipc::op::kFrontStop, &FrontSession::onStop},
    {ipc::op::kFrontStderr, &FrontSession::onStderr},
};

FrontSession::FrontSession(uv_loop_t* loop, std::string address, UniqueFd channel, UniqueFd attach)
    : loop_(loop),
      address_(std::move(address)),
      channel_fd_(std::move(channel)),
      attach_fd_(std::move(attach)) {}

FrontSession::~FrontSession() {
  close();
}

Status FrontSession::start() {
  // stdout and stderr are a pipe to the controller: one that died must not end us.
  std::signal(SIGPIPE, SIG_IGN);
  signals_ = new uv_signal_t[2];
  for (int i = 0; i < 2; ++i) {
    uv_signal_init(loop_, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(
        &signals_[i],
        [](uv_signal_t* s, int) { static_cast<FrontSession*>(s->data)->requestStop(); },
        i == 0 ? SIGTERM : SIGINT);
  }
  if (attach_fd_) {
    attach_address_ = abstractName(attach_fd_.get());
    attach_poll_ = new uv_poll_t;
    uv_poll_init(loop_, attach_poll_, attach_fd_.get());
    attach_poll_->data = this;
    uv_poll_start(attach_poll_, UV_READABLE, [](uv_poll_t* h, int status, int) {
      if (status >= 0) static_cast<FrontSession*>(h->data)->acceptAttach();
    });
  }
  return openChannel(std::move(channel_fd_), false);
}

Status FrontSession::openChannel(UniqueFd fd, bool attached) {
  ipc::EndpointOptions options;
  options.local = ipc::Role::kFront;
  options.peer = ipc::Role::kController;
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop_, std::move(fd), options);
  if (!endpoint.ok()) return endpoint.status();
  endpoint_ = std::move(endpoint).value();
  endpoint_->onClose([this](const Status& why) { onChannelClosed(why); });
  SCALWS_RETURN_IF_ERROR(ipc::registerHandlers<FrontSession>(*endpoint_, *this, kHandlers));
  return endpoint_->request(
      ipc::op::kFrontHello, hello(attached).encode(), {}, [this, attached](Result<Json> reply) {
        if (reply.ok()) {
          if (state_ == State::kHello) state_ = State::kAwaitConfig;
          return;
        }
        LOG_ERROR("controller refused hello: %s", reply.status().message().c_str());
        if (!attached) return fail("the controller refused hello");
        if (endpoint_) endpoint_->close();  // routing on; a later controller may try again
      });
}

ipc::FrontHelloArgs FrontSession::hello(bool attached) const {
  ipc::FrontHelloArgs h;
  h.pid = ::getpid();
  h.address = address_;
  h.attach_address = attach_address_;
  if (attached && front_) {
    h.attached =
        ipc::FrontHelloArgs::Attached{state_ == State::kStopping, settings_, front_->listenerFd(),
                                      front_->routes().channelFds(), front_->udpFd()};
  }
  return h;
}

void FrontSession::onConfig(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kAwaitConfig) {
    return replier.fail(ipc::errc::kFailed, "front.config is only accepted once, after hello");
  }
  Result<ipc::FrontConfigArgs> config = ipc::FrontConfigArgs::decode(request.args());
  if (!config.ok()) return replier.fail(config.status());
  if (config->settings.address != address_) {
    return replier.fail(ipc::errc::kInvalidArgument,
                        "this front is for " + address_ + ", not " + config->settings.address);
  }
  size_t want = config->settings.quic ? 2 : 1;
  if (request.fds.size() != want || !isTcpListener(request.fds[0].get()) ||
      (config->settings.quic && !isUdpSocket(request.fds[1].get()))) {
    return replier.fail(ipc::errc::kInvalidArgument,
                        config->settings.quic
                            ? "front.config with quic takes a listening TCP socket and a UDP one"
                            : "front.config takes one listening TCP socket");
  }
  settings_ = std::move(config->settings);
  controller_uid_ = static_cast<uid_t>(config->controller_uid);
  listener_ = std::move(request.fds[0]);
  if (settings_.quic) udp_ = std::move(request.fds[1]);
  state_ = State::kGoingLive;
  replier.ok();
  // Out of this handler: the reply leaves first, and the sandbox is entered from a plain
  // loop callback rather than from inside the endpoint's dispatch.
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  uv_timer_start(
      timer_, [](uv_timer_t* t) { static_cast<FrontSession*>(t->data)->goLive(); }, 0, 0);
}

void FrontSession::goLive() {
  if (state_ != State::kGoingLive) return;
  Result<std::unique_ptr<FrontLoop>> front =
      FrontLoop::create(loop_, settings_, std::move(listener_), std::move(udp_));
  Result<sandbox::SandboxReport> report = front.ok()
                                              ? enterFrontSandbox(settings_.user)
                                              : Result<sandbox::SandboxReport>(front.status());
  ipc::FrontReadyArgs ready;
  if (!report.ok()) {
    ready.error = "sandbox: " + report.status().message();
    LOG_ERROR("front %s: cannot serve: %s", address_.c_str(), ready.error.c_str());
    Status sent = endpoint_
                      ? endpoint_->request(ipc::op::kFrontReady, ready.encode(), {},
                                           [this, why = ready.error](Result<Json>) { fail(why); })
                      : Status(common::StatusCode::kUnavailable, "no channel");
    if (!sent.ok()) fail(ready.error);
    return;
  }
  front_ = std::move(front).value();
  front_->start();
  state_ = State::kServing;
  // Through text, as on the wire: the report's signed numbers become what the decoder reads.
  Result<ipc::SandboxSummary> summary =
      ipc::SandboxSummary::decode(Json::parse(report->toJson().dump()));
  if (!summary.ok()) LOG_WARN("sandbox report: %s", summary.status().message().c_str());
  ready.ok = true;
  ready.pid = ::getpid();
  if (summary.ok()) ready.sandbox = std::move(summary).value();
  uv_timer_start(
      timer_, [](uv_timer_t* t) { static_cast<FrontSession*>(t->data)->sendMetrics(); },
      kMetricsIntervalMs, kMetricsIntervalMs);
  LOG_INFO("front %s: accepting (%s%s)", address_.c_str(),
           settings_.tls ? "TLS, by SNI" : "by Host", settings_.quic ? "; QUIC by SNI" : "");
  if (!endpoint_ || !endpoint_->isOpen()) return;
  Status sent = endpoint_->request(ipc::op::kFrontReady, ready.encode(), {}, [](Result<Json> r) {
    if (!r.ok()) LOG_WARN("front.ready not acknowledged: %s", r.status().message().c_str());
  });
  if (!sent.ok()) LOG_WARN("cannot send front.ready: %s", sent.message().c_str());
}

void FrontSession::onRoute(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kServing && state_ != State::kStopping) {
    return replier.fail(ipc::errc::kFailed, "not serving yet");
  }
  Result<ipc::FrontRouteArgs> args = ipc::FrontRouteArgs::decode(request.args());
  if (!args.ok()) return replier.fail(args.status());
  if (args->channels.size() != request.fds.size()) {
    return replier.fail(ipc::errc::kInvalidArgument,
                        std::to_string(args->channels.size()) + " channels described but " +
                            std::to_string(request.fds.size()) + " fds received");
  }
  for (const UniqueFd& fd : request.fds) {
    if (!isChannel(fd.get())) {
      return replier.fail(ipc::errc::kInvalidArgument, "a channel must be a unix seqpacket socket");
    }
  }
  if (!staging_ || staging_->instance != args->instance) {
    staging_ = std::make_shared<InstanceRoute>();
    staging_->instance = args->instance;
  }
  staging_->names = std::move(args->names);
  staging_->is_default = args->is_default;
  for (size_t i = 0; i < args->channels.size(); ++i) {
    if (staging_->channels.size() >= ipc::kMaxFrontChannels) {
      staging_.reset();
      return replier.fail(ipc::errc::kInvalidArgument, "too many channels");
    }
    staging_->channel_ids.push_back(args->channels[i]);
    staging_->channels.push_back(std::move(request.fds[i]));
  }
  if (!args->more) {
    front_->setRoutes(RouteTable::with(front_->routes(), std::move(staging_)));
    staging_.reset();
  }
  replier.ok();
}

void FrontSession::onUnroute(ipc::Incoming& request, ipc::Replier replier) {
  if (!front_) return replier.fail(ipc::errc::kFailed, "not serving yet");
  Result<std::string> instance = ipc::stringField(request.args(), "instance");
  if (!instance.ok()) return replier.fail(instance.status());
  front_->setRoutes(RouteTable::without(front_->routes(), *instance));
  replier.ok();
}

void FrontSession::onStop(ipc::Incoming&, ipc::Replier replier) {
  replier.ok();
  requestStop();
}

void FrontSession::onStderr(ipc::Incoming& request, ipc::Replier replier) {
  if (request.fds.size() != 1) return replier.fail(ipc::errc::kInvalidArgument, "one fd");
  int fd = request.fds[0].get();
  if (::dup3(fd, STDOUT_FILENO, 0) < 0 || ::dup3(fd, STDERR_FILENO, 0) < 0) {
    return replier.fail(common::errnoStatus(errno, "dup3"));
  }
  replier.ok();
}

void FrontSession::requestStop() {
  if (state_ == State::kStopping || state_ == State::kClosed) return;
  if (state_ != State::kServing) return fail("stopped before serving");
  state_ = State::kStopping;
  LOG_INFO("front %s: stopping", address_.c_str());
  sendMetrics();
  front_->drain([this] {
    sendMetrics();  // the last figures
    close();
  });
}

void FrontSession::sendMetrics() {
  constexpr size_t kMaxQueued = 64 * 1024;  // the controller is not reading: skip this one
  if (!front_ || !endpoint_ || !endpoint_->isOpen() || endpoint_->queuedBytes() > kMaxQueued) {
    return;
  }
  ipc::FrontMetricsArgs m;
  m.pid = ::getpid();
  m.slot = settings_.slot;
  m.counters = front_->counters();
  for (const std::shared_ptr<InstanceRoute>& r : front_->routes().routes()) {
    auto it = front_->handoffs().find(r->instance);
    m.handoffs.emplace_back(r->instance, it == front_->handoffs().end() ? 0 : it->second);
  }
  Status sent = endpoint_->notify(ipc::op::kFrontMetrics, m.encode());
  (void)sent;
}

void FrontSession::onChannelClosed(const Status& why) {
  if (state_ == State::kServing || state_ == State::kStopping) {
    LOG_WARN("front %s: controller channel closed (%s); routing on, waiting for a controller",
             address_.c_str(), why.ok() ? "end of stream" : why.message().c_str());
    return;
  }
  if (state_ == State::kClosed) return;
  fail("the controller went away before this front served");
}

void FrontSession::acceptAttach() {
  while (attach_fd_) {
    UniqueFd conn(::accept4(attach_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!conn) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    Result<ipc::PeerCredentials> peer = ipc::peerCredentials(conn.get());
    bool trusted = peer.ok() && (peer->uid == 0 || peer->uid == controller_uid_);
    bool serving = state_ == State::kServing || state_ == State::kStopping;
    if (!trusted || !serving || (endpoint_ && endpoint_->isOpen())) {
      if (!trusted) LOG_WARN("attach refused: the peer is neither root nor our controller");
      continue;
    }
    LOG_INFO("front %s: a controller attached (pid %d)", address_.c_str(),
             static_cast<int>(peer->pid));
    Status opened = openChannel(std::move(conn), true);
    if (!opened.ok()) LOG_WARN("attach: %s", opened.message().c_str());
  }
}

void FrontSession::fail(const std::string& why) {
  LOG_ERROR("front %s: %s", address_.c_str(), why.c_str());
  exit_code_ = 1;
  close();
}

void FrontSession::close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  endpoint_.reset();
  closeHandle(attach_poll_);
  attach_fd_.reset();
  closeHandle(timer_);
  if (signals_ != nullptr) {
    // Both in one allocation: freed once the second is closed.
    uv_signal_t* both = signals_;
    signals_ = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&both[0]), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&both[1]),
             [](uv_handle_t* h) { delete[](reinterpret_cast<uv_signal_t*>(h) - 1); });
  }
  if (front_) front_->closeNow();  // its handles close; the loop can end
}

}  // namespace scalws::front
