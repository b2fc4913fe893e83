#include "worker/handlers/proxy/health_probe.h"

#include <cerrno>
#include <cstring>

#include "worker/handlers/proxy/upstream_pool.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::proxy {
namespace {

constexpr size_t kMaxProbeHead = 16 * 1024;

ResponseLimits probeLimits() {
  ResponseLimits limits;
  limits.max_head = kMaxProbeHead;
  return limits;
}

}  // namespace

HealthProbe::HealthProbe(UpstreamPool& pool, int server)
    : pool_(pool), server_(server), parser_(*this, probeLimits()) {}

HealthProbe::~HealthProbe() {
  stop();
}

void HealthProbe::start() {
  state_ = State::kWaiting;
  pool_.loop().armTimeout(*this, 0);
}

void HealthProbe::stop() {
  if (state_ == State::kStopped) return;
  state_ = State::kStopped;
  pool_.loop().disarmTimeout(*this);
  if (conn_ != nullptr) {
    conn_->close();
    conn_ = nullptr;
  }
}

void HealthProbe::probe() {
  const UpstreamSpec& spec = pool_.spec();
  const ServerSpec& server = spec.servers[static_cast<size_t>(server_)];
  const auto& health = *spec.health;
  int err = 0;
  state_ = State::kConnecting;
  conn_ =
      UpstreamConnection::open(pool_.loop(), server, spec.tls.get(), nullptr, server_, pool_, err);
  if (conn_ == nullptr) {
    finish(false, strerror(err));
    return;
  }
  conn_->lend(this);
  request_ = "GET " + health.path +
             " HTTP/1.1\r\nHost: " + (health.host.empty() ? server.host_header : health.host) +
             "\r\nUser-Agent: scalws-health-check\r\nConnection: close\r\n\r\n";
  sent_ = 0;
  received_.clear();
  status_ = 0;
  parser_.reset(false);
  pool_.loop().armTimeout(*this, health.timeout);
  if (conn_->state() == UpstreamConnection::State::kInUse) onUpstreamConnected();
}

void HealthProbe::onUpstreamConnected() noexcept {
  state_ = State::kSending;
  send();
}

void HealthProbe::onUpstreamConnectFailed(int err) noexcept {
  finish(false, err == EPROTO && conn_ != nullptr ? conn_->failure() : strerror(err));
}

void HealthProbe::send() {
  while (sent_ < request_.size()) {
    iovec iov{request_.data() + sent_, request_.size() - sent_};
    ssize_t n = conn_->transport().writev(&iov, 1);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      conn_->watch(false, true);
      return;
    }
    if (n < 0) {
      finish(false, strerror(errno));
      return;
    }
    sent_ += static_cast<size_t>(n);
  }
  state_ = State::kReading;
  conn_->watch(true, false);
}

void HealthProbe::onUpstreamEvent(int status, int events) noexcept {
  if (status < 0) {
    finish(false, "poll failed");
    return;
  }
  if (state_ == State::kSending && (events & UV_WRITABLE) != 0) {
    send();
    return;
  }
  if (state_ == State::kReading) read();
}

void HealthProbe::read() {
  char buf[4096];
  while (true) {
    ssize_t n = conn_->transport().read(buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      finish(false, n == 0 ? "closed before a complete head" : strerror(errno));
      return;
    }
    received_.append(buf, static_cast<size_t>(n));
    ResponseParser::Result r = parser_.dispatch(received_.data(), received_.size());
    if (r.outcome == ResponseParser::Outcome::kError) {
      finish(false, r.error);
      return;
    }
    received_.erase(0, r.consumed);
    if (status_ >= 200) {
      // The status line is all a probe judges; the body is not waited for.
      bool passed = false;
      for (const auto& range : pool_.spec().health->expect) {
        passed = passed || (status_ >= range.first && status_ <= range.last);
      }
      finish(passed, passed ? "" : "unexpected status");
      return;
    }
  }
}

void HealthProbe::onResponseHead(const UpstreamResponseHead& head) {
  if (head.status >= 200 || head.status == 101) status_ = head.status;
}

void HealthProbe::onTimeout() noexcept {
  switch (state_) {
    case State::kWaiting:
      probe();
      return;
    case State::kConnecting:
    case State::kSending:
    case State::kReading:
      finish(false, "timed out");
      return;
    case State::kStopped:
      return;
  }
}

void HealthProbe::finish(bool passed, const char* why) {
  if (conn_ != nullptr) {
    conn_->close();
    conn_ = nullptr;
  }
  state_ = State::kWaiting;
  pool_.loop().armTimeout(*this, pool_.spec().health->interval);
  pool_.recordProbe(server_, passed, why);
}

}  // namespace scalws::worker::proxy
