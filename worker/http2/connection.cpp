#include "worker/http2/connection.h"

#include <unistd.h>

#include <cerrno>

#include "common/log.h"
#include "worker/http/error_response.h"
#include "worker/http/request_dispatcher.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::http2 {
namespace {

constexpr int kReadsPerEvent = 4;  // then let other connections have the loop

}  // namespace

SessionSettings Connection::settingsFor(const ConfigSnapshot& snapshot) {
  SessionSettings s;
  const auto& server = snapshot.server();
  s.max_header_list = static_cast<uint32_t>(std::min<uint64_t>(server.max_header_size, 1u << 24));
  s.max_headers = server.max_headers;
  return s;
}

Connection::Connection(WorkerLoop& loop, std::unique_ptr<Transport> transport, const PeerInfo& peer)
    : SocketConnection(loop, std::move(transport), peer),
      snapshots_(loop.snapshot()),
      session_(*this, settingsFor(*loop.snapshot()), loop.date(), loop.buffers(),
               &loop.codecMemory()),
      high_water_(settingsFor(*loop.snapshot()).output_high_water) {}

Connection::~Connection() = default;

bool Connection::start() {
  if (!session_.valid()) return false;
  startPolling();
  armTimer(Timer::kHeader);
  flush();  // the server connection preface: our SETTINGS (RFC 9113 §3.4)
  return true;
}

void Connection::onSocketEvent(int status, int events) {
  if (status < 0) {
    close();
    return;
  }
  if (events == 0) return;  // nothing wanted right now (socket_poller.h)
  if (state_ == State::kLingering) {
    onLingerReadable();
    return;
  }
  if ((events & UV_WRITABLE) != 0) flush();
  bool buffered = state_ == State::kOpen && transport_->hasBufferedInput();
  if (((events & UV_READABLE) != 0 || buffered) && state_ == State::kOpen) onReadable();
  if (state_ != State::kClosed) session_.collect();
}

void Connection::onReadable() {
  in_event_ = true;
  bool peer_closed = false;
  for (int round = 0; round < kReadsPerEvent && state_ == State::kOpen; ++round) {
    if (out_.pendingBytes() >= high_water_ || !session_.wantsRead()) break;
    std::unique_ptr<char[]> buf = loop_.buffers().take();
    ssize_t n = transport_->read(buf.get(), BufferPool::kBlockSize);
    if (n <= 0) {
      loop_.buffers().give(std::move(buf));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      peer_closed = true;  // EOF or a reset: nothing more will come, nothing can be sent
      break;
    }
    loop_.counters().bytes_in.add(static_cast<uint64_t>(n));
    bool ok = session_.receive(buf.get(), static_cast<size_t>(n), uv_now(loop_.uv()));
    loop_.buffers().give(std::move(buf));
    received_ = true;
    if (!ok) break;  // flush() sends the GOAWAY, if any, then the connection ends
    if (static_cast<size_t>(n) < BufferPool::kBlockSize && !transport_->hasBufferedInput()) break;
  }
  in_event_ = false;
  if (peer_closed) {
    close();
    return;
  }
  flush();
}

void Connection::flush() {
  if (state_ != State::kOpen) return;
  for (int round = 0; round < 8; ++round) {
    if (!session_.send(out_)) {
      close();
      return;
    }
    if (out_.empty()) break;
    uint64_t before = out_.pendingBytes();
    ByteQueue::FlushResult r = writeOutput();
    if (out_.pendingBytes() < before) wrote_ = true;
    if (r == ByteQueue::FlushResult::kError) {
      close();
      return;
    }
    if (r == ByteQueue::FlushResult::kBlocked || !session_.wantsWrite()) break;
  }
  afterOutput();
}

void Connection::afterOutput() {
  if (session_.dataBytesSent() != data_sent_mark_) {
    data_sent_mark_ = session_.dataBytesSent();
    wrote_ = true;
  }
  // Done: a GOAWAY went out (ours or after the peer's) and no stream is left.
  if (!session_.wantsRead() && !session_.wantsWrite() && out_.empty()) {
    startLingering();
    return;
  }
  updateTimer();
  updatePoll();
}

void Connection::updatePoll() {
  if (state_ == State::kClosed) return;
  int events = 0;
  if (state_ == State::kLingering) {
    events = UV_READABLE;
  } else {
    bool read = session_.wantsRead() && out_.pendingBytes() < high_water_;
    if (read) events |= UV_READABLE;
    // flush() gives up after a few rounds so one large response cannot hold the loop;
    // frames nghttp2 still has ready go out on the next writable event.
    if (!out_.empty() || session_.wantsWrite()) events |= UV_WRITABLE;
    // TLS records already read ahead are invisible to the poller: a writable socket
    // wakes us at once to read them.
    if (read && transport_->hasBufferedInput()) events |= UV_WRITABLE;
  }
  watch(events);
}

void Connection::updateTimer() {
  Timer want;
  if (!out_.empty() || session_.hasBlockedData()) {
    want = Timer::kSend;
  } else if (session_.activeStreams() == 0) {
    want = served_any_ ? Timer::kKeepAlive : Timer::kHeader;
  } else if (session_.awaitsRequestBody()) {
    want = Timer::kBody;
  } else {
    want = Timer::kNone;  // handlers at work: their own timeouts apply
  }
  bool progress = (want == Timer::kSend && wrote_) || (want == Timer::kBody && received_);
  wrote_ = received_ = false;
  if (want != timer_ || progress) armTimer(want);
}

void Connection::armTimer(Timer timer) {
  setTimer(timer, snapshots_.current().server());
}

void Connection::onTimeout() noexcept {
  switch (takeFiredTimer()) {
    case Timer::kHeader:
    case Timer::kKeepAlive:
      // Nothing open: say goodbye properly (GOAWAY NO_ERROR), then close.
      session_.shutdown();
      flush();
      break;
    case Timer::kBody:
      // A request body stalled: end the connection (GOAWAY), as HTTP/1 would with 408.
      session_.terminate(NGHTTP2_NO_ERROR);
      flush();
      break;
    case Timer::kSend:
      // The peer takes nothing — neither bytes nor window updates: give up at once.
      LOG_DEBUG("HTTP/2 send timeout: closing");
      close();
      return;
    case Timer::kLinger:
    case Timer::kNone:
      close();
      return;
  }
  if (state_ != State::kClosed) session_.collect();
}

void Connection::onRequest(Stream& stream) noexcept {
  served_any_ = true;
  const ConfigSnapshot& snap = stream.beginRequest(loop_, peer_, snapshots_);
  Request& r = stream.request();
  stream.alt_svc = snap.altSvc(peer_);
  if (stream.requestError() != 0) {
    sendError(r, stream, stream.requestError());
    return;
  }
  RequestDispatcher::dispatch(stream, snap);
}

void Connection::onResponseFinished(Stream& stream) noexcept {
  RequestDispatcher::account(stream, loop_);
}

void Connection::onStreamClosed(Stream& stream) noexcept {
  snapshots_.release(stream.snapshot);
}

void Connection::onOutputPending() noexcept {
  // An asynchronous handler wrote: send now, unless this connection is already in the
  // middle of an event that ends with a flush.
  if (!in_event_ && state_ == State::kOpen) flush();
}

void Connection::onBodyTooLarge(Stream& stream) noexcept {
  RequestDispatcher::answerError(stream, 413, false);
}

void Connection::startLingering() {
  // As HTTP/1 does: stop sending, then read and drop what the peer still sends for a
  // moment, so our last frames (a GOAWAY) are not destroyed by a reset.
  state_ = State::kLingering;
  session_.abortAll();
  beginLinger();
  armTimer(Timer::kLinger);
  updatePoll();
}

void Connection::onLingerReadable() {
  if (!lingerRead()) close();
}

void Connection::beginShutdown() {
  if (state_ != State::kOpen) return;
  session_.shutdown();
  flush();
}

void Connection::forceClose() {
  close();
}

void Connection::close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  session_.abortAll();
  loop_.disarmTimeout(*this);
  closeSocket();
}

}  // namespace scalws::worker::http2
