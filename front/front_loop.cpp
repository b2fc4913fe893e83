#include "front/front_loop.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "front/request_head.h"

namespace scalws::front {
namespace {

constexpr int kAcceptBatch = 64;
constexpr int kEventBatch = 64;
constexpr int kDrainReads = 4;  // at most 4 x 16 KiB read from a client being refused

// RFC 8446 §6: a fatal alert in a TLS 1.2-versioned record (what a server that never got to
// pick a version sends).
constexpr uint8_t kUnrecognizedName = 112;  // RFC 6066 §3
constexpr uint8_t kInternalError = 80;

std::string alert(uint8_t description) {
  return std::string("\x15\x03\x03\x00\x02\x02", 6) + static_cast<char>(description);
}

std::string page(int status, std::string_view reason, std::string_view text) {
  std::string body = "<!DOCTYPE html>\n<html><head><title>" + std::to_string(status) + " " +
                     std::string(reason) + "</title></head><body><h1>" + std::to_string(status) +
                     " " + std::string(reason) + "</h1><p>" + std::string(text) +
                     "</p></body></html>\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
         "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

const std::string& refusalBytes(bool tls, int kind) {
  static const std::string kTls[] = {alert(kUnrecognizedName), alert(kInternalError), "", "", ""};
  static const std::string kHttp[] = {
      page(421, "Misdirected Request", "No site here answers to this name."),
      page(503, "Service Unavailable", "The site for this name is not running."),
      page(400, "Bad Request", "This is not an HTTP/1.1 request."),
      page(431, "Request Header Fields Too Large", "The request head is too large."),
      "",  // h2c: an HTTP/1.1 page would mean nothing to an HTTP/2 client
  };
  return tls ? kTls[kind] : kHttp[kind];
}

}  // namespace

common::Result<std::unique_ptr<FrontLoop>> FrontLoop::create(uv_loop_t* loop,
                                                             const ipc::FrontSettings& settings,
                                                             common::UniqueFd listener,
                                                             common::UniqueFd udp) {
  common::UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll) return common::errnoStatus(errno, "epoll_create1");
  auto front = std::unique_ptr<FrontLoop>(
      new FrontLoop(loop, settings, std::move(listener), std::move(epoll)));
  if (udp) {
    common::Result<std::unique_ptr<QuicFront>> quic =
        QuicFront::create(loop, std::move(udp), front->counters_, front->handoffs_);
    if (!quic.ok()) return quic.status();
    front->quic_ = std::move(quic).value();
  }
  return front;
}

void FrontLoop::setRoutes(std::shared_ptr<const RouteTable> routes) {
  if (quic_) quic_->setRoutes(routes);
  routes_ = std::move(routes);
}

FrontLoop::FrontLoop(uv_loop_t* loop, const ipc::FrontSettings& settings, common::UniqueFd listener,
                     common::UniqueFd epoll)
    : loop_(loop), settings_(settings), listener_(std::move(listener)), epoll_(std::move(epoll)) {
  uv_poll_init(loop_, &accept_poll_, listener_.get());
  accept_poll_.data = this;
  uv_poll_init(loop_, &waiting_poll_, epoll_.get());
  waiting_poll_.data = this;
  uv_timer_init(loop_, &timer_);
  timer_.data = this;
}

FrontLoop::~FrontLoop() {
  closeNow();
}

void FrontLoop::start() {
  accepting_ = true;
  uv_poll_start(&accept_poll_, UV_READABLE, &FrontLoop::onAcceptable);
  uv_poll_start(&waiting_poll_, UV_READABLE, &FrontLoop::onWaitingReadable);
  if (quic_) quic_->start();
}

void FrontLoop::drain(std::function<void()> on_drained) {
  on_drained_ = std::move(on_drained);
  if (accepting_) {
    accepting_ = false;
    uv_poll_stop(&accept_poll_);
  }
  maybeDrained();
}

void FrontLoop::maybeDrained() {
  if (accepting_ || waiting_count_ != 0 || !on_drained_) return;
  closeNow();
  std::exchange(on_drained_, nullptr)();
}

void FrontLoop::closeNow() {
  while (oldest_ != nullptr) {
    Waiting* w = oldest_;
    unwait(w);
    ::close(w->fd);
    delete w;
  }
  accepting_ = false;
  if (closed_) return;
  closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&accept_poll_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&waiting_poll_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  if (quic_) quic_->close();
}

void FrontLoop::onAcceptable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<FrontLoop*>(handle->data);
  if (status < 0) {
    LOG_ERROR("listener poll failed: %s", uv_strerror(status));
    return;
  }
  self->acceptAll();
}

void FrontLoop::acceptAll() {
  for (int i = 0; i < kAcceptBatch && accepting_; ++i) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) LOG_WARN("accept: %s", std::strerror(errno));
      return;
    }
    ++counters_.accepted;
    Verdict verdict = judge(fd);
    if (verdict.kind == Verdict::Kind::kWait) {
      wait(fd);
    } else {
      settle(fd, verdict);
    }
  }
}

FrontLoop::Verdict FrontLoop::judge(int fd) {
  using Kind = Verdict::Kind;
  auto to = [](InstanceRoute* target) { return Verdict{Kind::kRoute, target, {}}; };
  auto refused = [](Refusal why) { return Verdict{Kind::kRefuse, nullptr, why}; };
  ssize_t n = ::recv(fd, peek_.data(), peek_.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Verdict{};
  if (n <= 0) return Verdict{Kind::kClose, nullptr, {}};  // gone before it named a host
  std::string_view bytes(peek_.data(), static_cast<size_t>(n));
  bool full = static_cast<size_t>(n) == peek_.size();
  if (settings_.tls) {
    ServerNamePeek peek = peekServerName(bytes);
    switch (peek.outcome) {
      case ServerNamePeek::Outcome::kNeedMore:
        return full ? refused(Refusal::kInvalid) : Verdict{};
      case ServerNamePeek::Outcome::kInvalid:
        return refused(Refusal::kInvalid);
      case ServerNamePeek::Outcome::kName:
        return to(routes_->find(peek.name));
      case ServerNamePeek::Outcome::kNoName:
        return to(routes_->fallback());
    }
    return refused(Refusal::kInvalid);
  }
  HostPeek peek = peekRequestHost(bytes);
  switch (peek.outcome) {
    case HostPeek::Outcome::kNeedMore:
      return full ? refused(Refusal::kTooLarge) : Verdict{};
    case HostPeek::Outcome::kTooLarge:
      return refused(Refusal::kTooLarge);
    case HostPeek::Outcome::kInvalid:
      return refused(Refusal::kInvalid);
    case HostPeek::Outcome::kHost:
      return to(routes_->find(peek.host));
    case HostPeek::Outcome::kNoHost:
      return to(routes_->fallback());
    case HostPeek::Outcome::kH2cPreface:
      if (routes_->fallback() != nullptr) return to(routes_->fallback());
      return refused(Refusal::kNoH2c);
  }
  return refused(Refusal::kInvalid);
}

void FrontLoop::settle(int fd, const Verdict& verdict) {
  switch (verdict.kind) {
    case Verdict::Kind::kWait:
    case Verdict::Kind::kClose:
      ::close(fd);
      return;
    case Verdict::Kind::kRoute:
      return route(fd, verdict.target);
    case Verdict::Kind::kRefuse:
      return refuse(fd, verdict.refusal);
  }
}

void FrontLoop::route(int fd, InstanceRoute* instance) {
  if (instance == nullptr) return refuse(fd, Refusal::kUnknownName);
  if (instance->channels.empty()) return refuse(fd, Refusal::kUnavailable);
  if (!handOff(fd, *instance)) {
    ++counters_.queue_full;
    --counters_.unavailable;  // refuse() counts it again: once, as queue_full
    refuse(fd, Refusal::kUnavailable);
  }
}

bool FrontLoop::handOff(int fd, InstanceRoute& instance) {
  char byte = 'C';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  size_t count = instance.channels.size();
  for (size_t tried = 0; tried < count; ++tried) {
    size_t i = (instance.next + tried) % count;
    ssize_t sent;
    do {
      sent = ::sendmsg(instance.channels[i].get(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent == 1) {
      instance.next = (i + 1) % count;
      ++counters_.handed_off;
      auto it = handoffs_.find(instance.instance);
      if (it == handoffs_.end()) it = handoffs_.emplace(instance.instance, 0).first;
      ++it->second;
      ::close(fd);
      return true;
    }
    // EAGAIN: that worker loop is behind (its queue is full); anything else: its end went
    // away. Either way the next one may take it.
  }
  return false;
}

void FrontLoop::refuse(int fd, Refusal why) {
  switch (why) {
    case Refusal::kUnknownName:
      ++counters_.unknown_name;
      break;
    case Refusal::kUnavailable:
      ++counters_.unavailable;
      break;
    case Refusal::kInvalid:
    case Refusal::kTooLarge:
      ++counters_.invalid;
      break;
    case Refusal::kNoH2c:
      ++counters_.h2c_refused;
      break;
  }
  // What was peeked is read now: closing a socket with unread bytes sends a reset, which
  // could destroy the answer before the client reads it. Bounded: a client that keeps
  // sending gets its reset rather than the front's time.
  for (int i = 0; i < kDrainReads; ++i) {
    if (::recv(fd, peek_.data(), peek_.size(), MSG_DONTWAIT) <= 0) break;
  }
  const std::string& answer = refusalBytes(settings_.tls, static_cast<int>(why));
  if (!answer.empty()) {
    ssize_t ignored = ::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)ignored;
    ::shutdown(fd, SHUT_WR);
  }
  ::close(fd);
}

// --- connections still sending their first bytes ---------------------------------------

void FrontLoop::wait(int fd) {
  if (waiting_count_ >= settings_.max_waiting && oldest_ != nullptr) {
    Waiting* victim = oldest_;
    unwait(victim);
    ::close(victim->fd);
    delete victim;
    ++counters_.evicted;
  }
  auto* w = new Waiting;
  w->fd = fd;
  w->deadline = uv_now(loop_) + settings_.header_timeout_ms;
  // Edge-triggered: peeking consumes nothing, so a level-triggered set would report the
  // same incomplete bytes again at once; each new segment is one event.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.ptr = w;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    LOG_WARN("epoll_ctl: %s", std::strerror(errno));
    ::close(fd);
    delete w;
    return;
  }
  // Every deadline is accept time plus the same timeout: the list is in deadline order.
  w->prev = newest_;
  if (newest_ != nullptr) newest_->next = w;
  newest_ = w;
  if (oldest_ == nullptr) oldest_ = w;
  ++waiting_count_;
  counters_.waiting = waiting_count_;
  armTimer();
}

void FrontLoop::unwait(Waiting* w) {
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, w->fd, nullptr);
  if (w->prev != nullptr) w->prev->next = w->next;
  if (w->next != nullptr) w->next->prev = w->prev;
  if (oldest_ == w) oldest_ = w->next;
  if (newest_ == w) newest_ = w->prev;
  --waiting_count_;
  counters_.waiting = waiting_count_;
}

void FrontLoop::onWaitingReadable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<FrontLoop*>(handle->data);
  if (status < 0) return;
  epoll_event events[kEventBatch];
  int n = ::epoll_wait(self->epoll_.get(), events, kEventBatch, 0);
  for (int i = 0; i < n; ++i) {
    auto* w = static_cast<Waiting*>(events[i].data.ptr);
    Verdict verdict = self->judge(w->fd);
    bool ended = (events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
    if (verdict.kind == Verdict::Kind::kWait && !ended) continue;  // the next bytes will say
    self->unwait(w);
    self->settle(w->fd, verdict);  // a client that stopped half-way is closed
    delete w;
  }
  self->armTimer();
  self->maybeDrained();
}

void FrontLoop::armTimer() {
  if (oldest_ == nullptr) {
    uv_timer_stop(&timer_);
    return;
  }
  uint64_t now = uv_now(loop_);
  uv_timer_start(&timer_, &FrontLoop::onTimer,
                 oldest_->deadline > now ? oldest_->deadline - now : 0, 0);
}

void FrontLoop::onTimer(uv_timer_t* timer) {
  static_cast<FrontLoop*>(timer->data)->expire();
}

void FrontLoop::expire() {
  uint64_t now = uv_now(loop_);
  while (oldest_ != nullptr && oldest_->deadline <= now) {
    Waiting* w = oldest_;
    unwait(w);
    ++counters_.peek_timeouts;
    ::close(w->fd);
    delete w;
  }
  armTimer();
  maybeDrained();
}

}  // namespace scalws::front
