#include "worker/handlers/fastcgi/exchange.h"

#include <sys/socket.h>

#include <cassert>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "worker/handlers/fastcgi/body_spool.h"
#include "worker/handlers/fastcgi/loop_pools.h"
#include "worker/handlers/fastcgi/record_writer.h"
#include "worker/http/error_response.h"
#include "worker/loop/worker_loop.h"
#include "worker/net/buffer_pool.h"

namespace scalws::worker::fastcgi {
namespace {

constexpr size_t kMaxStderrLine = 4096;
constexpr int kReadsPerEvent = 8;  // then let the loop serve others; level-triggered polls

}  // namespace

Exchange::Exchange(LoopPools& pools) : pools_(pools), parser_(*this) {}

Exchange::~Exchange() {
  if (read_buf_) pools_.loop().buffers().give(std::move(read_buf_));
}

void Exchange::moveTo(State next) {
  // Allowed moves (see the header's picture); anything may end in kFree.
  auto allowed = [&] {
    switch (next) {
      case State::kFree:
        return true;
      case State::kQueued:
      case State::kConnecting:
        return state_ == State::kFree || state_ == State::kQueued || state_ == State::kAwaitingHead;
      case State::kAwaitingHead:
        return state_ == State::kFree || state_ == State::kQueued || state_ == State::kConnecting ||
               state_ == State::kAwaitingHead;
      case State::kHeadParsed:
        return state_ == State::kAwaitingHead;
      case State::kStreaming:
        return state_ == State::kHeadParsed || state_ == State::kClientBlocked;
      case State::kClientBlocked:
        return state_ == State::kStreaming;
      case State::kAborted:
        return state_ != State::kFree;
    }
    return false;
  };
  assert(allowed() && "Exchange: a state change the picture in exchange.h does not allow");
  (void)allowed;
  const State previous = state_;
  state_ = next;
  switch (next) {
    case State::kQueued:
      armTimer(pool_->spec().queue_timeout_ms);
      return;
    case State::kConnecting:
      armTimer(pool_->spec().timeout_ms);
      return;
    case State::kAwaitingHead:
      parser_.reset();
      head_.reset();
      stdout_bytes_ = 0;
      if (!read_buf_) read_buf_ = pools_.loop().buffers().take();
      armTimer(pool_->spec().timeout_ms);
      return;
    case State::kStreaming:
      if (previous == State::kClientBlocked) {
        // The client drained its queue: read the pool again.
        armTimer(pool_->spec().timeout_ms);
        updateWatch();
      }
      return;
    case State::kClientBlocked:
      // The client is slower than PHP: stop reading the pool until its queue drained (the
      // pool's timeout measures PHP, not the client).
      pools_.loop().disarmTimeout(*this);
      updateWatch();
      writer_->notifyWhenWritable(this);
      return;
    case State::kFree:
    case State::kHeadParsed:
    case State::kAborted:
      return;
  }
}

template <typename F>
bool Exchange::callWriter(F&& f) {
  // A writer call may fail the client socket, and the connection then aborts us from
  // inside the call: abort() notes it, and the outermost frame cleans up once the call
  // returned (inside the record parser, that is processRead()).
  ++busy_;
  f();
  --busy_;
  if (state_ != State::kAborted) return true;
  if (busy_ == 0) cleanupAfterAbort();
  return false;
}

void Exchange::start(Request& request, ResponseWriter& writer, PoolState& pool,
                     std::string_view params, BodySpool* spool) {
  request_ = &request;
  writer_ = &writer;
  pool_ = &pool;
  conn_ = nullptr;
  spool_ = spool;
  send_.clear();
  send_pos_ = 0;
  stdin_ended_ = !request.has_body;
  attempts_ = 0;
  busy_ = 0;
  stdout_bytes_ = 0;
  head_error_ = nullptr;
  protocol_status_ = ProtocolStatus::kRequestComplete;
  pending_count_ = 0;
  stderr_line_.clear();

  appendBeginRequest(send_, pool.spec().keep_conn);
  appendStream(send_, RecordType::kParams, params);
  appendEndOfStream(send_, RecordType::kParams);
  if (!request.has_body) appendEndOfStream(send_, RecordType::kStdin);

  writer.setInFlight(this);
  if (spool_ != nullptr) {
    spool_->setReader(this);
    pauseBody(true);  // until a connection is ready to take it
  } else if (request.has_body) {
    request.setBodySink(this);
    pauseBody(true);
  }
  acquire();
}

void Exchange::acquire() {
  PoolConnection* c = nullptr;
  int err = 0;
  ++attempts_;
  switch (pool_->acquire(*this, c, err)) {
    case PoolState::Acquire::kGot:
      attach(*c);
      return;
    case PoolState::Acquire::kQueued:
      moveTo(State::kQueued);
      return;
    case PoolState::Acquire::kQueueFull:
      fail(503, "wait queue full");
      return;
    case PoolState::Acquire::kFailed:
      fail(502, "pool unreachable");
      return;
  }
}

void Exchange::attach(PoolConnection& c) {
  conn_ = &c;
  c.lend(this);
  if (c.state() == PoolConnection::State::kConnecting) {
    moveTo(State::kConnecting);
    return;
  }
  becomeActive();
}

void Exchange::becomeActive() {
  moveTo(State::kAwaitingHead);
  if (!flushSend()) return;
  if (!stdin_ended_ && send_.size() - send_pos_ < kSendHighWater) pauseBody(false);
  updateWatch();
}

void Exchange::onPoolConnection(PoolConnection& c) noexcept {
  pools_.loop().disarmTimeout(*this);
  attach(c);
}

void Exchange::onPoolUnreachable(int err) noexcept {
  (void)err;  // PoolState logged it
  fail(502, "pool unreachable");
}

void Exchange::onPoolConnected() noexcept {
  becomeActive();
}

void Exchange::onPoolConnectFailed(int err) noexcept {
  LOG_ERROR("php_pool.%s: connect to %s: %s", pool_->spec().name.c_str(),
            pool_->spec().address_text.c_str(), strerror(err));
  fail(502, "connect failed");
}

void Exchange::armTimer(uint64_t ms) {
  pools_.loop().armTimeout(*this, ms);
}

void Exchange::pauseBody(bool paused) {
  if (spool_ != nullptr) {
    spool_->setPaused(paused);
  } else if (writer_ != nullptr) {
    writer_->setBodyReadPaused(paused);
  }
}

void Exchange::updateWatch() {
  if (conn_ == nullptr || !connected()) return;
  conn_->watch(state_ != State::kClientBlocked, send_pos_ < send_.size());
}

bool Exchange::flushSend() {
  while (send_pos_ < send_.size()) {
    ssize_t n =
        ::send(conn_->fd(), send_.data() + send_pos_, send_.size() - send_pos_, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      updateWatch();
      return true;
    }
    if (n < 0) {
      onPoolBroken("write failed");
      return false;
    }
    send_pos_ += static_cast<size_t>(n);
    armTimer(pool_->spec().timeout_ms);
  }
  // A request without a body keeps its records until the answer starts: a kept connection
  // that PHP-FPM closed meanwhile can then be retried on a fresh one.
  if (request_->has_body) {
    send_.clear();
    send_pos_ = 0;
  }
  if (!stdin_ended_) pauseBody(false);
  updateWatch();
  return true;
}

void Exchange::onBodyData(std::string_view data) noexcept {
  if (state_ == State::kFree || state_ == State::kAborted) return;
  appendStream(send_, RecordType::kStdin, data);
  if (send_.size() - send_pos_ > kSendHighWater) pauseBody(true);
  if (connected()) flushSend();
}

void Exchange::onBodyEnd() noexcept {
  if (state_ == State::kFree || state_ == State::kAborted) return;
  stdin_ended_ = true;
  appendEndOfStream(send_, RecordType::kStdin);
  if (connected()) flushSend();
}

void Exchange::onPoolEvent(int status, int events) noexcept {
  if (status < 0) {
    onPoolBroken("poll failed");
    return;
  }
  if ((events & UV_WRITABLE) != 0 && !flushSend()) return;
  if ((events & UV_READABLE) != 0 && connected() && state_ != State::kClientBlocked) readPool();
}

void Exchange::readPool() {
  for (int i = 0; i < kReadsPerEvent; ++i) {
    ssize_t n = ::recv(conn_->fd(), read_buf_.get(), BufferPool::kBlockSize, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      onPoolBroken(n == 0 ? "pool closed the connection" : "read failed");
      return;
    }
    armTimer(pool_->spec().timeout_ms);
    if (!processRead(static_cast<size_t>(n))) return;
    if (state_ == State::kClientBlocked) return;
  }
}

bool Exchange::processRead(size_t n) {
  pending_count_ = 0;
  ++busy_;
  RecordParser::Result r = parser_.dispatch(read_buf_.get(), n);
  --busy_;
  if (state_ == State::kAborted) {
    if (busy_ == 0) cleanupAfterAbort();
    return false;
  }
  if (r.outcome == RecordParser::Outcome::kError) {
    LOG_ERROR("php_pool.%s: request %llx: malformed record: %s", pool_->spec().name.c_str(),
              static_cast<unsigned long long>(request_->id), r.error);
    fail(502, "malformed record");
    return false;
  }
  if (head_error_ != nullptr) {
    LOG_ERROR("php_pool.%s: request %llx: bad CGI head: %s", pool_->spec().name.c_str(),
              static_cast<unsigned long long>(request_->id), head_error_);
    fail(502, "bad CGI head");
    return false;
  }
  if (r.outcome == RecordParser::Outcome::kEnd) {
    complete(r.consumed < n);
    return false;
  }
  if (!deliverPending(false)) return false;
  if (state_ == State::kStreaming && writer_->queuedBytes() > kClientHighWater) {
    moveTo(State::kClientBlocked);
  }
  return true;
}

void Exchange::onStdout(std::string_view data) {
  stdout_bytes_ += data.size();
  if (head_error_ != nullptr || state_ == State::kAborted) return;
  if (state_ == State::kAwaitingHead) {
    CgiHeadParser::Result r = head_.feed(data);
    if (r.outcome == CgiHeadParser::Outcome::kError) {
      head_error_ = r.error;
      return;
    }
    if (r.outcome == CgiHeadParser::Outcome::kNeedMore) return;
    moveTo(State::kHeadParsed);
    data.remove_prefix(r.consumed);
  }
  if (data.empty()) return;
  if (pending_count_ == kMaxPending) deliverPending(false);
  if (state_ == State::kAborted) return;
  pending_[pending_count_++] = data;
}

bool Exchange::deliverPending(bool final_piece) {
  if (state_ == State::kAwaitingHead) return true;  // nothing to give yet
  size_t count = pending_count_;
  pending_count_ = 0;
  return callWriter([&] {
    if (state_ == State::kHeadParsed) {
      ResponseHead head;
      head.status = head_.status();
      head.headers = head_.headers();
      // The whole answer in one read: its length is known, no chunked framing needed. Not
      // for HEAD, where PHP sends no body and 0 would misstate the GET's length.
      if (final_piece && !request_->isHead()) {
        uint64_t total = 0;
        for (size_t i = 0; i < count; ++i) total += pending_[i].size();
        head.content_length = total;
      }
      moveTo(State::kStreaming);
      writer_->sendHead(head);
    }
    for (size_t i = 0; i < count && state_ != State::kAborted; ++i) {
      writer_->sendBody(pending_[i], BodyLifetime::kCopy);
    }
  });
}

void Exchange::onStderr(std::string_view data) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    std::string_view part = data.substr(0, nl);
    if (stderr_line_.size() + part.size() <= kMaxStderrLine) {
      stderr_line_.append(part);
    } else {
      stderr_line_.append(part.substr(0, kMaxStderrLine - stderr_line_.size()));
    }
    if (nl == std::string_view::npos) return;
    logStderrLine(stderr_line_);
    stderr_line_.clear();
    data.remove_prefix(nl + 1);
  }
}

void Exchange::logStderrLine(std::string_view line) {
  if (line.empty()) return;
  LOG_WARN("php_pool.%s: request %llx: stderr: %.*s", pool_->spec().name.c_str(),
           static_cast<unsigned long long>(request_->id), static_cast<int>(line.size()),
           line.data());
}

void Exchange::onEndRequest(uint32_t app_status, ProtocolStatus status) {
  (void)app_status;
  protocol_status_ = status;
}

void Exchange::complete(bool leftover) {
  if (protocol_status_ != ProtocolStatus::kRequestComplete) {
    LOG_ERROR("php_pool.%s: request %llx: refused (protocol status %u)", pool_->spec().name.c_str(),
              static_cast<unsigned long long>(request_->id),
              static_cast<unsigned>(protocol_status_));
    fail(protocol_status_ == ProtocolStatus::kOverloaded ? 503 : 502, "request refused");
    return;
  }
  if (state_ == State::kAwaitingHead) {
    LOG_ERROR("php_pool.%s: request %llx: the answer ended before its CGI head",
              pool_->spec().name.c_str(), static_cast<unsigned long long>(request_->id));
    fail(502, "no CGI head");
    return;
  }
  if (!deliverPending(true)) return;
  // Reusable only when nothing is half-done on it: all of STDIN went, nothing followed
  // END_REQUEST.
  bool reusable = !leftover && stdin_ended_ && send_pos_ == send_.size();
  PoolConnection* c = conn_;
  conn_ = nullptr;
  pool_->release(*c, reusable);
  ResponseWriter* w = writer_;
  teardown();
  w->finish();
}

void Exchange::onWritable() noexcept {
  if (state_ == State::kClientBlocked) moveTo(State::kStreaming);
}

void Exchange::onTimeout() noexcept {
  switch (state_) {
    case State::kQueued:
      pool_->cancel(*this);
      fail(503, "no pool connection free in time");
      return;
    case State::kConnecting:
    case State::kAwaitingHead:
    case State::kHeadParsed:
    case State::kStreaming:
    case State::kClientBlocked:
      LOG_ERROR("php_pool.%s: request %llx: no answer within %llu ms", pool_->spec().name.c_str(),
                static_cast<unsigned long long>(request_->id),
                static_cast<unsigned long long>(pool_->spec().timeout_ms));
      fail(504, "timeout");
      return;
    case State::kFree:
    case State::kAborted:
      return;
  }
}

void Exchange::onPoolBroken(const char* why) {
  // A kept connection PHP-FPM closed while it sat idle shows up only when used; a request
  // whose records are all still here is retried once on a fresh connection.
  bool reused = conn_ != nullptr && conn_->requestsServed() > 0;
  if (reused && state_ == State::kAwaitingHead && stdout_bytes_ == 0 && !request_->has_body &&
      attempts_ == 1) {
    PoolConnection* c = conn_;
    conn_ = nullptr;
    pool_->release(*c, false);
    send_pos_ = 0;
    acquire();
    return;
  }
  LOG_ERROR("php_pool.%s: request %llx: %s", pool_->spec().name.c_str(),
            static_cast<unsigned long long>(request_->id), why);
  fail(502, why);
}

void Exchange::fail(uint16_t status, const char* why) {
  LOG_DEBUG("php request %llx: %u %s", static_cast<unsigned long long>(request_->id), status, why);
  pools_.loop().counters().php_errors.add();  // failed at the pool, whatever the cause
  if (conn_ != nullptr) {
    PoolConnection* c = conn_;
    conn_ = nullptr;
    pool_->release(*c, false);
  }
  Request* request = request_;
  ResponseWriter* w = writer_;
  bool head_sent = headSent();
  // The connection must read (and drop) what the client still sends; a spooled body is
  // all read already.
  if (spool_ == nullptr) pauseBody(false);
  w->setInFlight(nullptr);
  teardown();
  sendBackendFailure(*request, *w, status, head_sent);
}

void Exchange::abort() noexcept {
  if (state_ == State::kFree) return;
  if (busy_ > 0) {
    moveTo(State::kAborted);  // the outermost writer call or parser run cleans up
    return;
  }
  cleanupAfterAbort();
}

void Exchange::cleanupAfterAbort() {
  // The client is gone: the writer must not be used. A request PHP is still running
  // cannot be taken back on its connection, so that connection closes.
  if (state_ == State::kFree) return;
  writer_ = nullptr;
  if (conn_ != nullptr) {
    PoolConnection* c = conn_;
    conn_ = nullptr;
    pool_->release(*c, false);
  }
  teardown();
}

void Exchange::teardown() {
  pools_.loop().disarmTimeout(*this);
  if (spool_ != nullptr) {
    BodySpool* spool = spool_;
    spool_ = nullptr;
    spool->release();
  }
  if (pool_ != nullptr) pool_->cancel(*this);
  if (!stderr_line_.empty() && request_ != nullptr) logStderrLine(stderr_line_);
  stderr_line_.clear();
  if (read_buf_) pools_.loop().buffers().give(std::move(read_buf_));
  moveTo(State::kFree);
  request_ = nullptr;
  writer_ = nullptr;
  pool_ = nullptr;
  pools_.recycle(*this);
}

}  // namespace scalws::worker::fastcgi
