#include "worker/handlers/proxy/proxy_exchange.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "worker/handlers/proxy/response_head.h"
#include "worker/handlers/proxy/tunnel.h"
#include "worker/handlers/proxy/upstream_pools.h"
#include "worker/http/error_response.h"
#include "worker/loop/worker_loop.h"
#include "worker/net/buffer_pool.h"

namespace scalws::worker::proxy {
namespace {

constexpr int kReadsPerEvent = 8;  // then let the loop serve others; level-triggered polls

ResponseLimits responseLimits() {
  ResponseLimits limits;
  limits.max_head = ProxyExchange::kMaxResponseHead;
  return limits;
}

// RFC 9110 §9.2.2: a request these methods make may be sent again.
bool idempotent(Method m) {
  switch (m) {
    case Method::kGet:
    case Method::kHead:
    case Method::kPut:
    case Method::kDelete:
    case Method::kOptions:
    case Method::kTrace:
      return true;
    default:
      return false;
  }
}

}  // namespace

ProxyExchange::ProxyExchange(UpstreamPools& pools)
    : pools_(pools), parser_(*this, responseLimits()) {
  out_headers_.reserve(32);
}

ProxyExchange::~ProxyExchange() {
  if (read_buf_ && read_cap_ == BufferPool::kBlockSize) {
    pools_.loop().buffers().give(std::move(read_buf_));
  }
}

template <typename F>
bool ProxyExchange::callWriter(F&& f) {
  // A writer call may fail the client socket, and the connection then aborts us from
  // inside the call: note it, and clean up once the call returned.
  calling_writer_ = true;
  f();
  calling_writer_ = false;
  if (!aborted_) return true;
  if (!in_parse_) cleanupAfterAbort();
  return false;
}

void ProxyExchange::start(Request& request, ResponseWriter& writer, UpstreamPool& pool,
                          const ProxyRoute& route, bool cache_fill, std::string_view conditional) {
  request_ = &request;
  writer_ = &writer;
  pool_ = &pool;
  route_ = &route;
  conn_ = nullptr;
  server_ = -1;
  tried_ = 0;
  attempts_ = 0;
  reused_ = fresh_retry_ = false;
  bytes_received_ = 0;
  head_options_ = RequestHeadOptions{};
  head_options_.framing = requestFramingOf(request, head_options_.content_length);
  head_options_.cache_fill = cache_fill;
  head_options_.conditional = conditional;
  tunnel_ = route.websocket && equalsIgnoreCase(request.upgrade, "websocket");
  if (tunnel_) {
    // RFC 6455 §4.1 (and RFC 8441 §5 for HTTP/2): the upstream gets an HTTP/1.1 upgrade
    // without a body; what the client sends is for the tunnel.
    head_options_.framing = RequestFraming::kNone;
    head_options_.upgrade = true;
    if (request.header("sec-websocket-key").empty()) {
      head_options_.websocket_key = makeWebSocketKey(websocket_key_);
    }
  }
  head_.clear();
  head_pos_ = 0;
  body_.clear();
  body_pos_ = 0;
  replayable_ = true;
  body_state_ = request.has_body ? Body::kStreaming : Body::kNone;
  body_paused_ = body_abandoned_ = false;
  read_len_ = 0;
  reply_ = Reply::kAwaitingHead;
  head_ready_ = false;
  upstream_keep_alive_ = false;
  client_paused_ = false;
  calling_writer_ = in_parse_ = aborted_ = false;

  writer.setInFlight(this);
  if (request.has_body) {
    request.setBodySink(this);
    pauseBody(true);  // until a connection is ready to take it
  }
  attempt();
}

void ProxyExchange::attempt() {
  bool all_down = false;
  int server = pool_->choose(*request_, tried_, all_down);
  if (server < 0) {
    // 503 when no server was even tried (every one is down); 502 when those tried failed.
    bool none_tried = attempts_ == 0 && all_down;
    if (none_tried) {
      LOG_ERROR("upstream %s: request %llx: every server is down", pool_->spec().name.c_str(),
                static_cast<unsigned long long>(request_->id));
    }
    fail(none_tried ? 503 : 502, none_tried ? "every server is down" : "no server left to try");
    return;
  }
  server_ = server;
  tried_ |= uint64_t{1} << server;
  ++attempts_;
  sent_ns_ = uv_hrtime();  // the upstream's time counts from here, connect included
  const UpstreamSpec& spec = pool_->spec();
  head_.clear();
  head_pos_ = 0;
  body_pos_ = 0;  // a retry sends the body kept so far again
  head_options_.close = spec.keepalive == 0;
  appendRequestHead(head_, *request_, *route_, spec.servers[static_cast<size_t>(server)],
                    head_options_);
  int err = 0;
  bool reused = false;
  conn_ = pool_->connect(server, *this, !fresh_retry_, reused, err);
  if (conn_ == nullptr) {
    upstreamFailed(Failure::kConnect, strerror(err));
    return;
  }
  reused_ = reused;
  if (conn_->state() != UpstreamConnection::State::kInUse) {
    state_ = State::kConnecting;
    pools_.loop().armTimeout(*this, spec.connect_timeout_ms);
    return;
  }
  becomeActive();
}

void ProxyExchange::onUpstreamConnected() noexcept {
  becomeActive();
}

void ProxyExchange::onUpstreamConnectFailed(int err) noexcept {
  upstreamFailed(Failure::kConnect, err == EPROTO ? conn_->failure() : strerror(err));
}

void ProxyExchange::becomeActive() {
  state_ = State::kExchanging;
  parser_.reset(request_->isHead());
  read_len_ = 0;
  bytes_received_ = 0;
  bytes_sent_ = 0;
  if (!read_buf_) {
    read_buf_ = pools_.loop().buffers().take();
    read_cap_ = BufferPool::kBlockSize;
  }
  flushSend();
}

bool ProxyExchange::flushSend() {
  while (sendPending() && !body_abandoned_) {
    iovec iov[2];
    int count = 0;
    if (head_pos_ < head_.size()) {
      iov[count++] = iovec{head_.data() + head_pos_, head_.size() - head_pos_};
    }
    if (body_pos_ < body_.size()) {
      iov[count++] = iovec{body_.data() + body_pos_, body_.size() - body_pos_};
    }
    ssize_t n = conn_->transport().writev(iov, count);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) {
      if (parser_.headDone()) {
        // The upstream answered and stopped reading the body (it may close its side after
        // an early answer such as 413): the answer still goes to the client.
        body_abandoned_ = true;
        pauseBody(false);
        break;
      }
      upstreamFailed(Failure::kBroken, strerror(errno));
      return false;
    }
    size_t sent = static_cast<size_t>(n);
    bytes_sent_ += sent;
    size_t from_head = std::min(sent, head_.size() - head_pos_);
    head_pos_ += from_head;
    body_pos_ += sent - from_head;
  }
  // Body bytes are kept for a retry while they fit kReplayLimit; past it, what left goes.
  if (body_.size() > kReplayLimit) replayable_ = false;
  if (!replayable_ && body_pos_ > 0 && (body_pos_ == body_.size() || body_pos_ >= kSendHighWater)) {
    body_.erase(0, body_pos_);
    body_pos_ = 0;
  }
  if (body_state_ == Body::kStreaming && !body_abandoned_ && !tunnel_ &&
      body_.size() - body_pos_ < kSendHighWater) {
    pauseBody(false);
  }
  updateWatch();
  updateTimer();
  return true;
}

void ProxyExchange::onBodyData(std::string_view data) noexcept {
  if (state_ == State::kFree || body_abandoned_) return;
  if (head_options_.framing == RequestFraming::kChunked) {
    appendChunk(body_, data);
  } else {
    body_.append(data);
  }
  if (tunnel_ || body_.size() - body_pos_ > kSendHighWater) pauseBody(true);
  if (state_ == State::kExchanging) flushSend();
}

void ProxyExchange::onBodyEnd() noexcept {
  if (state_ == State::kFree) return;
  body_state_ = Body::kEnded;
  if (body_abandoned_) return;
  if (head_options_.framing == RequestFraming::kChunked) body_.append(kLastChunk);
  if (state_ == State::kExchanging) flushSend();
}

void ProxyExchange::onUpstreamEvent(int status, int events) noexcept {
  if (status < 0) {
    upstreamFailed(Failure::kBroken, uv_strerror(status));
    return;
  }
  if ((events & UV_WRITABLE) != 0 && sendPending() && !flushSend()) return;
  if (client_paused_) return;
  if ((events & UV_READABLE) != 0 || conn_->transport().hasBufferedInput()) readUpstream();
}

void ProxyExchange::readUpstream() {
  for (int i = 0; i < kReadsPerEvent; ++i) {
    if (read_len_ == read_cap_) {
      // Only an incomplete head is ever held; let it grow to the head limit.
      size_t next = read_cap_ * 2;
      if (read_cap_ >= kMaxResponseHead + BufferPool::kBlockSize) {
        upstreamFailed(Failure::kBadAnswer, "response head too large");
        return;
      }
      std::unique_ptr<char[]> bigger(new char[next]);
      std::memcpy(bigger.get(), read_buf_.get(), read_len_);
      if (read_cap_ == BufferPool::kBlockSize) pools_.loop().buffers().give(std::move(read_buf_));
      read_buf_ = std::move(bigger);
      read_cap_ = next;
    }
    size_t space = read_cap_ - read_len_;
    ssize_t n = conn_->transport().read(read_buf_.get() + read_len_, space);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0) {
      upstreamFailed(Failure::kBroken, strerror(errno));
      return;
    }
    if (n == 0) {
      onUpstreamEof();
      return;
    }
    read_len_ += static_cast<size_t>(n);
    bytes_received_ += static_cast<uint64_t>(n);
    if (!processRead()) return;
    if (client_paused_) return;
    // A short read drained the socket: the read that would say so (EAGAIN) is saved, the
    // level-triggered poll calls again when more arrives.
    if (static_cast<size_t>(n) < space && !conn_->transport().hasBufferedInput()) break;
  }
  updateTimer();
}

void ProxyExchange::onUpstreamEof() {
  ResponseParser::Result r = parser_.finishEof();
  if (r.outcome == ResponseParser::Outcome::kComplete) {
    upstream_keep_alive_ = false;
    body_out_ = nullptr;
    body_out_len_ = 0;
    if (!deliver(true)) return;
    complete(false);
    return;
  }
  upstreamFailed(Failure::kBroken, r.error);
}

bool ProxyExchange::processRead() {
  body_out_ = nullptr;
  body_out_len_ = 0;
  in_parse_ = true;
  ResponseParser::Result r = parser_.dispatch(read_buf_.get(), read_len_);
  in_parse_ = false;
  switch (r.outcome) {
    case ResponseParser::Outcome::kError:
      upstreamFailed(Failure::kBadAnswer, r.error);
      return false;
    case ResponseParser::Outcome::kUpgrade:
      if (!tunnel_ || !head_ready_) {
        upstreamFailed(Failure::kBadAnswer, "101 Switching Protocols to a request without Upgrade");
        return false;
      }
      startTunnel(r.consumed);
      return false;
    case ResponseParser::Outcome::kComplete: {
      bool leftover = r.consumed < read_len_;
      if (leftover && head_ready_ && head_info_.framing == BodyFraming::kNone) {
        // RFC 9110 §6.4.1: a 204, a 304 and the answer to HEAD end with their head; bytes
        // right behind it are a body the upstream should not have sent (or a desynced
        // stream): nothing of it reaches the client.
        upstreamFailed(Failure::kBadAnswer, "a body on a response that has none");
        return false;
      }
      read_len_ = 0;
      if (!deliver(true)) return false;
      complete(leftover);
      return false;
    }
    case ResponseParser::Outcome::kNeedMore:
      break;
  }
  if (!deliver(false)) return false;
  // Only an incomplete head stays; it moves to the front (after interim 1xx heads).
  size_t rest = read_len_ - r.consumed;
  if (rest > 0 && r.consumed > 0) std::memmove(read_buf_.get(), read_buf_.get() + r.consumed, rest);
  read_len_ = rest;
  if (reply_ == Reply::kStreaming && writer_->queuedBytes() > kClientHighWater) {
    // The client is slower than the upstream: stop reading it until the client drained.
    client_paused_ = true;
    updateWatch();
    updateTimer();
    writer_->notifyWhenWritable(this);
    return false;
  }
  return true;
}

void ProxyExchange::onResponseHead(const UpstreamResponseHead& head) {
  bool upgrade = head.status == 101 && tunnel_;
  if (head.status < 200 && !upgrade) {
    // A 100 Continue is not passed on: the worker answered the client's Expect itself
    // before it read the body. Others (103 Early Hints) reach the client where its
    // protocol allows; a 101 without an upgrade asked for is dropped.
    if (head.status > 101) {
      filterInterimHeaders(head, *route_, out_headers_);
      writer_->sendInterim(head.status, out_headers_);
    }
    return;
  }
  head_info_ = head;
  upstream_keep_alive_ = head.keep_alive;
  filterResponseHeaders(head, *route_, upgrade, out_headers_);
  if (upgrade && request_->version == HttpVersion::kHttp2) {
    // RFC 8441 §5: the HTTP/2 client sent no key, so the upstream's answer to ours is not
    // its business.
    std::erase_if(out_headers_, [](const HeaderField& h) {
      return equalsIgnoreCase(h.name, "sec-websocket-accept");
    });
  }
  head_ready_ = true;
}

bool ProxyExchange::startTunnel(size_t consumed) {
  if (!deliver(false)) return false;  // the 101 (a 200 on HTTP/2) goes to the client
  noteUpstream();
  pool_->recordResponse(server_, 101, request_->upstream_us);
  pools_.loop().disarmTimeout(*this);
  UpstreamConnection* c = conn_;
  conn_ = nullptr;
  std::string_view from_upstream(read_buf_.get() + consumed, read_len_ - consumed);
  std::string_view to_upstream(body_.data() + body_pos_, body_.size() - body_pos_);
  // The tunnel copies both before it returns; this exchange is free afterwards.
  pools_.takeTunnel().start(*pool_, *c, *request_, *writer_, from_upstream, to_upstream,
                            route_->read_timeout_ms);
  teardown();
  return false;
}

void ProxyExchange::onResponseBody(std::string_view data) {
  // Gathered in place: chunk framing between the pieces is squeezed out, so the whole read
  // goes to the writer in one call (one write to the client).
  auto* at = const_cast<char*>(data.data());  // our own read buffer
  if (body_out_ == nullptr) {
    body_out_ = at;
  } else if (body_out_ + body_out_len_ != at) {
    std::memmove(body_out_ + body_out_len_, at, data.size());
  }
  body_out_len_ += data.size();
}

bool ProxyExchange::deliver(bool complete) {
  if (!head_ready_ && body_out_len_ == 0) return true;
  return callWriter([&] {
    if (head_ready_) {
      head_ready_ = false;
      reply_ = Reply::kStreaming;
      ResponseHead head;
      head.status = head_info_.status;
      head.headers = out_headers_;
      if (head_info_.framing == BodyFraming::kContentLength ||
          (head_info_.framing == BodyFraming::kNone && head_info_.has_content_length)) {
        head.content_length = head_info_.content_length;
      } else if (complete && head_info_.framing != BodyFraming::kNone) {
        // The whole answer in one read: its length is known, no chunked framing needed.
        head.content_length = body_out_len_;
      }
      writer_->sendHead(head);
    }
    if (body_out_len_ > 0 && !aborted_) {
      writer_->sendBody(std::string_view(body_out_, body_out_len_), BodyLifetime::kCopy);
    }
  });
}

void ProxyExchange::complete(bool leftover) {
  noteUpstream();
  pool_->recordResponse(server_, head_info_.status, request_->upstream_us);
  // Reusable only when nothing is half-done on it: the whole request went, the answer
  // ended where its framing said and the upstream did not ask to close.
  bool reusable = upstream_keep_alive_ && !leftover && requestSent() && !body_abandoned_;
  releaseConnection(reusable);
  ResponseWriter* w = writer_;
  teardown();
  w->finish();
}

void ProxyExchange::onWritable() noexcept {
  if (state_ != State::kExchanging || !client_paused_) return;
  client_paused_ = false;
  updateWatch();
  updateTimer();
}

void ProxyExchange::onTimeout() noexcept {
  switch (state_) {
    case State::kConnecting:
      upstreamFailed(Failure::kConnectTimeout, "connect timed out");
      return;
    case State::kExchanging:
      upstreamFailed(Failure::kTimeout, sendPending() ? "send timed out" : "read timed out");
      return;
    case State::kFree:
      return;
  }
}

void ProxyExchange::upstreamFailed(Failure failure, const char* why) {
  const UpstreamSpec& spec = pool_->spec();
  const char* server = spec.servers[static_cast<size_t>(server_)].text.c_str();
  bool answered = reply_ != Reply::kAwaitingHead;
  bool connect = failure == Failure::kConnect || failure == Failure::kConnectTimeout;
  // May the request go out again? Always when not a byte of it reached the upstream; once
  // some did, only when the method is idempotent (RFC 9110 §9.2.2) and every byte is still
  // here; never once an answer started or the upstream answered badly.
  bool resendable = !answered && failure != Failure::kBadAnswer && bytes_received_ == 0 &&
                    replayable_ && (bytes_sent_ == 0 || idempotent(request_->method));
  // A kept connection the server closed while it sat idle shows up only when used: such a
  // request goes once more on a fresh connection, not held against the server.
  if (!connect && reused_ && !fresh_retry_ && resendable && failure == Failure::kBroken) {
    LOG_DEBUG("upstream %s: request %llx: kept connection to %s failed (%s); retrying on a new one",
              spec.name.c_str(), static_cast<unsigned long long>(request_->id), server, why);
    releaseConnection(false);
    fresh_retry_ = true;
    tried_ &= ~(uint64_t{1} << server_);
    --attempts_;
    attempt();
    return;
  }
  pool_->recordFailure(server_, connect, why);
  releaseConnection(false);
  if ((connect || resendable) && attempts_ < 1 + spec.retries) {
    LOG_WARN("upstream %s: request %llx to %s: %s; retrying", spec.name.c_str(),
             static_cast<unsigned long long>(request_->id), server, why);
    fresh_retry_ = false;
    attempt();
    return;
  }
  LOG_ERROR("upstream %s: request %llx to %s: %s", spec.name.c_str(),
            static_cast<unsigned long long>(request_->id), server, why);
  bool timeout = failure == Failure::kConnectTimeout || failure == Failure::kTimeout;
  fail(timeout ? 504 : 502, why);
}

void ProxyExchange::releaseConnection(bool reusable) {
  pools_.loop().disarmTimeout(*this);
  if (conn_ == nullptr) return;
  UpstreamConnection* c = conn_;
  conn_ = nullptr;
  pool_->release(*c, reusable);
}

void ProxyExchange::noteUpstream() {
  if (server_ < 0) return;
  request_->upstream_address = pool_->spec().servers[static_cast<size_t>(server_)].text;
  request_->upstream_us = (uv_hrtime() - sent_ns_) / 1000;
}

void ProxyExchange::fail(uint16_t status, const char* why) {
  LOG_DEBUG("proxy request %llx: %u %s", static_cast<unsigned long long>(request_->id), status,
            why);
  noteUpstream();
  releaseConnection(false);
  Request* request = request_;
  ResponseWriter* w = writer_;
  bool answered = reply_ != Reply::kAwaitingHead;
  pauseBody(false);  // the connection must read (and drop) what the client still sends
  w->setInFlight(nullptr);
  teardown();
  sendBackendFailure(*request, *w, status, answered);
}

void ProxyExchange::pauseBody(bool paused) {
  if (body_paused_ == paused || writer_ == nullptr) return;
  body_paused_ = paused;
  writer_->setBodyReadPaused(paused);
}

void ProxyExchange::updateWatch() {
  if (conn_ == nullptr || state_ != State::kExchanging) return;
  bool buffered = !client_paused_ && conn_->transport().hasBufferedInput();
  // Readable while the answer is wanted: an early answer or a close is seen at once. A TLS
  // record already decrypted is invisible to the poller: a writable socket wakes us for it.
  conn_->watch(!client_paused_, (sendPending() && !body_abandoned_) || buffered);
}

void ProxyExchange::updateTimer() {
  if (state_ != State::kExchanging) return;
  const UpstreamSpec& spec = pool_->spec();
  if (sendPending() && !body_abandoned_) {
    pools_.loop().armTimeout(*this, spec.send_timeout_ms);
  } else if (client_paused_ || (reply_ == Reply::kAwaitingHead && !requestSent())) {
    // Waiting on the client (to read the answer, or to send the rest of its body): the
    // client connection's own timeouts cover that.
    pools_.loop().disarmTimeout(*this);
  } else {
    pools_.loop().armTimeout(*this, route_->read_timeout_ms);
  }
}

void ProxyExchange::abort() noexcept {
  aborted_ = true;
  if (calling_writer_) return;
  cleanupAfterAbort();
}

void ProxyExchange::cleanupAfterAbort() {
  // The client is gone: the writer must not be used. An answer still coming cannot be
  // taken back on its connection, so that connection closes.
  if (state_ == State::kFree) return;
  writer_ = nullptr;
  releaseConnection(false);
  teardown();
}

void ProxyExchange::teardown() {
  pools_.loop().disarmTimeout(*this);
  if (read_buf_) {
    if (read_cap_ == BufferPool::kBlockSize) {
      pools_.loop().buffers().give(std::move(read_buf_));
    } else {
      read_buf_.reset();  // a head that outgrew a block: not kept
    }
    read_cap_ = 0;
  }
  // Keep the strings' memory for the next request, unless one grew unusually large.
  if (body_.capacity() > 4 * kReplayLimit) std::string().swap(body_);
  state_ = State::kFree;
  request_ = nullptr;
  writer_ = nullptr;
  pool_ = nullptr;
  route_ = nullptr;
  pools_.recycle(*this);
}

}  // namespace scalws::worker::proxy
