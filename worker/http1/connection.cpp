#include "worker/http1/connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "worker/config_snapshot.h"
#include "worker/http/error_response.h"
#include "worker/http/request_dispatcher.h"
#include "worker/http1/response_serializer.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::http1 {
namespace {

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// A client that pipelines requests but does not read the answers gets no more requests
// parsed once this much output waits for it: memory stays bounded per connection.
constexpr uint64_t kMaxPendingOutput = 256 * 1024;

}  // namespace

CodecLimits Connection::limitsFor(const common::config::ServerConfig& server) {
  CodecLimits limits;
  limits.max_request_line = server.max_request_line;
  limits.max_header_size = server.max_header_size;
  limits.max_headers = server.max_headers;
  return limits;
}

Connection::Connection(WorkerLoop& loop, std::unique_ptr<Transport> transport, const PeerInfo& peer)
    : SocketConnection(loop, std::move(transport), peer),
      HttpStream(2048),
      snapshot_(loop.snapshot()),
      codec_(limitsFor(snapshot_->server()), *this, request_) {
  request_.peer = &peer_;
  request_.loop = &loop_;
}

Connection::~Connection() {
  if (read_buf_) releaseReadBuffer();
}

bool Connection::start() {
  startPolling();
  // The first request's head must arrive within header_timeout of the accept.
  armTimer(Timer::kHeader);
  updatePoll();
  return true;
}

void Connection::adoptCurrentSnapshot() {
  if (snapshot_ == loop_.snapshot()) return;
  snapshot_ = loop_.snapshot();
  codec_.setLimits(limitsFor(snapshot_->server()));
}

void Connection::moveTo(State next) {
  using S = State;
  bool allowed = false;
  switch (next) {
    case S::kIdle:
      allowed = state_ == S::kRequestDone || state_ == S::kIdle;
      break;
    case S::kReadingHead:
      allowed = state_ == S::kIdle;
      break;
    case S::kReadingBody:  // a head dispatched, or a paused body resumed
      allowed = state_ == S::kReadingHead || state_ == S::kIdle || state_ == S::kBodyPaused;
      break;
    case S::kBodyPaused:
      allowed = state_ == S::kReadingBody;
      break;
    case S::kRequestDone:  // the body ended, or will not be read (an error, a stop, a
                           // finished tunnel)
      allowed = state_ != S::kLingering && state_ != S::kClosed;
      break;
    case S::kTunnel:  // the switch after a 101, or a paused tunnel resumed
      allowed = state_ == S::kRequestDone || state_ == S::kTunnelPaused;
      break;
    case S::kTunnelPaused:
      allowed = state_ == S::kTunnel;
      break;
    case S::kLingering:
      allowed = state_ == S::kRequestDone;
      break;
    case S::kClosed:
      allowed = state_ != S::kClosed;
      break;
  }
  if (!allowed) {
    LOG_ERROR("http1 connection: bug: state %d -> %d", static_cast<int>(state_),
              static_cast<int>(next));
  }
  state_ = next;
}

bool Connection::shouldRead() const {
  if (read_eof_) return false;
  switch (state_) {
    case State::kIdle:
    case State::kReadingHead:
      return out_.pendingBytes() <= kMaxPendingOutput;
    case State::kLingering:
      return true;  // (read_eof_ never set while lingering: it drains until EOF)
    case State::kReadingBody:
    case State::kTunnel:
      return true;
    case State::kBodyPaused:  // the body waits in the kernel until the handler caught up
    case State::kTunnelPaused:
    case State::kRequestDone:  // pipelined bytes wait there until this response is done
      return false;
    case State::kClosed:
      return false;
  }
  return false;
}

void Connection::updatePoll() {
  if (state_ == State::kClosed) return;
  int events = 0;
  if (shouldRead()) events |= UV_READABLE;
  // TLS records already read ahead are invisible to the poller; a writable socket wakes us
  // at once to read them (see Transport::hasBufferedInput).
  if (shouldRead() && transport_->hasBufferedInput()) events |= UV_WRITABLE;
  if (!out_.empty()) events |= UV_WRITABLE;
  // An asynchronous handler (PHP, the proxy) wants nothing read until it answered; the
  // registration stays unless the client sends meanwhile (socket_poller.h).
  watch(events);
}

void Connection::onSocketEvent(int status, int events) {
  if (status < 0) {
    close();
    return;
  }
  if ((events & UV_WRITABLE) != 0) onWritable();
  bool buffered = state_ != State::kClosed && shouldRead() && transport_->hasBufferedInput();
  if (((events & UV_READABLE) != 0 || buffered) && state_ != State::kClosed) onReadable();
}

void Connection::armTimer(Timer timer) {
  setTimer(timer, snapshot_->server());
}

void Connection::onTimeout() noexcept {
  switch (takeFiredTimer()) {
    case Timer::kHeader:
      if (state_ == State::kReadingHead) {
        onCodecError(408, "request head timeout");
        process();
        return;
      }
      close();  // nothing arrived at all: close quietly
      return;
    case Timer::kBody:
      if (!responseStarted()) {
        onCodecError(408, "request body timeout");
        process();
        return;
      }
      close();
      return;
    case Timer::kKeepAlive:
    case Timer::kSend:
    case Timer::kLinger:
    case Timer::kNone:
      close();
      return;
  }
}

bool Connection::ensureReadSpace() {
  if (!read_buf_) {
    read_buf_ = loop_.buffers().take();
    read_cap_ = BufferPool::kBlockSize;
    read_len_ = parse_pos_ = head_start_ = body_start_ = 0;
  }
  if (read_len_ < read_cap_) return true;
  if (inRequest() && parse_pos_ == read_len_) {
    // Body bytes already handed over: reuse their room, the head before them stays put.
    read_len_ = parse_pos_ = body_start_;
    if (read_len_ < read_cap_) return true;
  }
  // Drop what earlier messages left before the current one (pipelined requests keep
  // coming while their predecessors are answered); a partial head moves with its views.
  size_t keep_from = 0;
  if (codec_.phase() == RequestCodec::Phase::kIdle) keep_from = parse_pos_;
  if (codec_.phase() == RequestCodec::Phase::kHead) keep_from = head_start_;
  if (keep_from > 0) {
    char* base = read_buf_.get();
    std::memmove(base, base + keep_from, read_len_ - keep_from);
    codec_.rebase(base + keep_from, base);
    read_len_ -= keep_from;
    parse_pos_ -= keep_from;
    head_start_ = 0;
    return true;
  }
  // A head that does not fit: grow up to the limits, moving the views with it.
  const auto& server = snapshot_->server();
  size_t max = server.max_request_line + server.max_header_size + 1024;
  if (read_cap_ >= max) return false;
  size_t next = std::min(read_cap_ * 2, max);
  std::unique_ptr<char[]> bigger(new char[next]);
  std::memcpy(bigger.get(), read_buf_.get(), read_len_);
  codec_.rebase(read_buf_.get(), bigger.get());
  if (read_cap_ == BufferPool::kBlockSize) loop_.buffers().give(std::move(read_buf_));
  read_buf_ = std::move(bigger);
  read_cap_ = next;
  return true;
}

void Connection::releaseReadBuffer() {
  if (read_cap_ == BufferPool::kBlockSize) loop_.buffers().give(std::move(read_buf_));
  read_buf_.reset();
  read_cap_ = read_len_ = parse_pos_ = head_start_ = body_start_ = 0;
}

void Connection::onReadable() {
  if (state_ == State::kLingering) {
    if (!lingerRead()) close();
    return;
  }
  if (tunnel()) {
    readTunnel();
    return;
  }
  if (!ensureReadSpace()) {
    onCodecError(codec_.phase() == RequestCodec::Phase::kBody ? 413 : 431,
                 "request head does not fit the buffer");
    flushOutput();
    return;
  }
  ssize_t n = readIntoBuffer();
  if (n < 0) return;
  if (n == 0) {
    // The client finished sending (half-close). What it sent before is still answered:
    // a response in progress, and pipelined requests already in the buffer.
    read_eof_ = true;
    bool cut_short = readingBody() || (state_ == State::kReadingHead && parse_pos_ == read_len_);
    if (cut_short || (state_ == State::kIdle && parse_pos_ == read_len_ && out_.empty())) {
      close();
      return;
    }
    close_after_response_ = close_after_response_ || inRequest();
    updatePoll();
    return;
  }
  if (state_ == State::kIdle) {
    moveTo(State::kReadingHead);
    if (requests_served_ > 0) armTimer(Timer::kHeader);
  } else if (readingBody()) {
    armTimer(Timer::kBody);
  }
  process();
}

ssize_t Connection::readIntoBuffer() {
  size_t room = read_cap_ - read_len_;
  ssize_t n = transport_->read(read_buf_.get() + read_len_, room);
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) close();
    return -1;
  }
  // TLS reads a record at a time, so only a plain socket's short read says it is empty.
  last_read_emptied_socket_ = !peer_.tls && static_cast<size_t>(n) < room;
  read_len_ += static_cast<size_t>(n);
  loop_.counters().bytes_in.add(static_cast<uint64_t>(n));
  return n;
}

void Connection::readTunnel() {
  // The request's head stays where it is (the access log reads it at the end); the
  // client's bytes go to the room behind it, handed over as soon as they arrive.
  deliverTunnelBytes();
  if (!read_buf_ || read_len_ >= read_cap_) {
    LOG_DEBUG("tunnel: no room behind the request head");
    close();
    return;
  }
  ssize_t n = readIntoBuffer();
  if (n < 0) return;
  if (n == 0) {
    read_eof_ = true;  // the client stopped sending: the handler hears, the tunnel stays
    deliverBodyEnd();
    if (state_ != State::kClosed) updatePoll();
    return;
  }
  deliverTunnelBytes();
  if (state_ != State::kClosed) updatePoll();
}

void Connection::deliverTunnelBytes() {
  if (parse_pos_ >= read_len_) return;
  std::string_view data(read_buf_.get() + parse_pos_, read_len_ - parse_pos_);
  read_len_ = parse_pos_ = body_start_;
  in_dispatch_ = true;  // output the handler makes meanwhile is flushed once, after
  deliverBody(data);
  in_dispatch_ = false;
  flushOutput();
}

void Connection::process() {
  if (tunnel()) {
    deliverTunnelBytes();  // bytes that came with the upgrade request
    return;
  }
  in_dispatch_ = true;
  while (state_ == State::kIdle || state_ == State::kReadingHead || inRequest()) {
    if (responseFinished() && close_after_response_ && readingBody()) {
      // The connection ends after this response: the rest of the body is not worth
      // parsing, lingering drains it.
      moveTo(State::kRequestDone);
    }
    if (state_ == State::kRequestDone) {
      if (!responseFinished()) break;
      finishRequest();
      continue;
    }
    if (parse_pos_ == read_len_) break;
    if (out_.pendingBytes() > kMaxPendingOutput) break;  // resumed from flushOutput()
    if (state_ == State::kIdle) {
      moveTo(State::kReadingHead);
      armTimer(Timer::kHeader);
    }
    if (codec_.phase() == RequestCodec::Phase::kIdle) head_start_ = parse_pos_;
    RequestCodec::DispatchResult r =
        codec_.dispatch(read_buf_.get() + parse_pos_, read_len_ - parse_pos_);
    parse_pos_ += r.consumed;
    if (r.outcome == RequestCodec::Outcome::kNeedMore) {
      if (responseFinished() && close_after_response_) continue;  // no need to wait for a body
      break;
    }
    if (r.outcome == RequestCodec::Outcome::kMessageComplete) continue;  // kRequestDone
    if (r.outcome == RequestCodec::Outcome::kStopped) {
      close_after_response_ = true;
      request_read_whole_ = false;
      moveTo(State::kRequestDone);
      continue;
    }
    onCodecError(r.error_status, r.error_reason);
    // The error response is done: the next turn finishes the request and starts the
    // polite close.
  }
  in_dispatch_ = false;
  flushOutput();
}

bool Connection::onRequestHead(Request& request) {
  moveTo(State::kReadingBody);
  request_read_whole_ = false;
  // The head ends somewhere before read_len_; body bytes beyond it may be overwritten once
  // consumed, the head itself must stay (the Request views it).
  body_start_ = read_len_;
  request.id = loop_.nextRequestId();
  request.start_ns = uv_hrtime();
  const auto& server = snapshot_->server();
  client_closes_ = !request.keep_alive;
  close_after_response_ = !request.keep_alive || shutting_down_ || server.keepalive_timeout == 0 ||
                          requests_served_ + 1 >= server.max_requests_per_connection;
  response_mark_ = out_.mark();
  armTimer(request.has_body ? Timer::kBody : Timer::kNone);
  RequestDispatcher::dispatch(*this, *snapshot_);
  codec_.setBodyLimit(bodyLimit());
  return true;
}

void Connection::onExpectContinue(bool will_read) noexcept {
  if (will_read) {
    out_.append(kContinue);
  } else {
    // RFC 9110 §10.1.1: we answer without reading the body the client is holding back,
    // so the connection cannot be reused.
    close_after_response_ = true;
  }
}

void Connection::beginResumedDispatch() noexcept {
  resumed_outer_ = in_dispatch_;
  in_dispatch_ = true;
}

void Connection::endResumedDispatch() noexcept {
  in_dispatch_ = resumed_outer_;
  // What the handler answered at once is finished here, then pipelined requests go on.
  if (!in_dispatch_) process();
}

void Connection::onRequestBody(std::string_view data) {
  deliverBody(data);
}

void Connection::onRequestComplete() {
  request_read_whole_ = true;
  moveTo(State::kRequestDone);
  if (timer_ == Timer::kBody) armTimer(Timer::kNone);
  deliverBodyEnd();
}

void Connection::onCodecError(uint16_t status, const char* reason) {
  LOG_DEBUG("request error %u: %s", status, reason);
  request_read_whole_ = false;  // the rest of a bad request may still be on its way
  abortInFlight();
  if (responseStarted()) {
    // A handler answered before the codec found the request bad (a malformed chunked
    // body, one past max_body). Not a byte of that answer left yet: replace it with the
    // error. Otherwise a finished answer goes out and the connection ends after it; a
    // half-sent one cannot be saved.
    if (!out_.truncate(response_mark_)) {
      if (responseFinished()) {
        close_after_response_ = true;
        moveTo(State::kRequestDone);
      } else {
        close();
      }
      return;
    }
    rewind();
  }
  // The head may be half-parsed: answer as to a plain GET so nothing stale leaks in, but
  // with the error page and header edits of the route it was dispatched to, if it was.
  const ResponseRules* rules = request_.response_rules;
  request_.resetForReuse();
  request_.response_rules = rules;
  moveTo(State::kRequestDone);
  close_after_response_ = true;
  RequestDispatcher::answerError(*this, status, true);
}

void Connection::onResponseDone() {
  // Called outside a dispatch: an asynchronous handler finished. Continue with what the
  // client pipelined and send everything in one go.
  process();
}

void Connection::finishRequest() {
  RequestDispatcher::account(*this, loop_);
  ++requests_served_;
  reset();
  if (close_after_response_) {
    moveTo(State::kLingering);  // becomes real lingering once the output is flushed
    return;
  }
  codec_.resume();
  adoptCurrentSnapshot();
  moveTo(State::kIdle);
  if (parse_pos_ == read_len_) {
    parse_pos_ = read_len_ = head_start_ = body_start_ = 0;
  }
}

void Connection::flushOutput() {
  if (state_ == State::kClosed) return;
  if (!out_.empty()) {
    ByteQueue::FlushResult r = writeOutput();
    if (r == ByteQueue::FlushResult::kError) {
      close();
      return;
    }
    if (r == ByteQueue::FlushResult::kBlocked) {
      armTimer(Timer::kSend);
      updatePoll();
      return;
    }
  }
  if (WritableObserver* o = takeWritableObserver(); o != nullptr) {
    o->onWritable();
    if (state_ == State::kClosed) return;
  }
  if (state_ == State::kLingering && timer_ != Timer::kLinger) {
    startLingering();
    return;
  }
  if (timer_ == Timer::kSend) armTimer(Timer::kNone);
  if (state_ == State::kIdle && parse_pos_ < read_len_ && !in_dispatch_) {
    // Pipelined requests were left unparsed while output was backed up.
    process();
    return;
  }
  if (state_ == State::kTunnel && parse_pos_ < read_len_ && !in_dispatch_) {
    deliverTunnelBytes();  // what the client sent right behind its upgrade request
    return;
  }
  if (state_ == State::kIdle) afterIdle();
  updatePoll();
}

void Connection::afterIdle() {
  if (shutting_down_ || (read_eof_ && parse_pos_ == read_len_)) {
    close();
    return;
  }
  if (parse_pos_ == read_len_) {
    releaseReadBuffer();
    armTimer(Timer::kKeepAlive);
  }
}

void Connection::startLingering() {
  if (read_eof_) {
    close();  // the client already finished sending: nothing to drain
    return;
  }
  if (clientDoneSending()) {
    // Closing now sends a FIN, not a reset: no shutdown, wakeup and read per connection
    // for a client that sent Connection: close.
    if (peer_.tls) transport_->shutdownWrite();  // close_notify: the end is no truncation
    close();
    return;
  }
  // Close politely: stop sending, then read and drop what the client still sends for a
  // moment, so our final response is not destroyed by a reset (nginx's lingering close).
  beginLinger();
  releaseReadBuffer();
  armTimer(Timer::kLinger);
  updatePoll();
}

bool Connection::clientDoneSending() {
  // nginx's rule: linger only when the client may still be sending — a request body not
  // read to its end, bytes read but not parsed (pipelined), or bytes waiting in the socket.
  if (!request_read_whole_ || parse_pos_ != read_len_ || transport_->hasBufferedInput()) {
    return false;
  }
  // A client that said it closes, whose socket was empty at the last read, and nothing
  // seen by the poller since: no read to find that out again (nginx's `ready` flag). What
  // arrives between the last wait and the close is a client breaking its own word. A close
  // the server decided (a limit, an error, a shutdown) still reads: a pipelining client
  // may have sent its next request just now.
  if (client_closes_ && last_read_emptied_socket_ && noInputSinceLastWait()) return true;
  char probe;
  ssize_t n = transport_->read(&probe, 1);
  if (n > 0) return false;
  return n == 0 || errno == EAGAIN || errno == EWOULDBLOCK;
}

void Connection::onWritable() {
  flushOutput();
}

void Connection::beginShutdown() {
  shutting_down_ = true;
  if (state_ != State::kIdle || !out_.empty()) return;  // the response in progress ends it
  // A connection accepted moments ago has a client about to send, or already sent, its
  // first request: it keeps its header timer (the shutdown deadline caps it) and is
  // answered with Connection: close. Closing it now would reset a request the client
  // rightly expects to be served.
  if (requests_served_ == 0) return;
  // A kept-alive connection may hold the client's next request unread in the socket;
  // closing over unread bytes resets the connection, so read once: what arrived is
  // answered, and only a silent connection is closed now.
  onReadable();
  if (state_ == State::kIdle && out_.empty()) close();
}

void Connection::forceClose() {
  close();
}

void Connection::close() {
  if (state_ == State::kClosed) return;
  moveTo(State::kClosed);
  die();
  loop_.disarmTimeout(*this);
  closeSocket();
}

}  // namespace scalws::worker::http1
