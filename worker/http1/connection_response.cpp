// The ResponseWriter side of an HTTP/1.1 connection: framing the handler's answer (head,
// Content-Length or chunked body, file slices) into the output queue, and the hooks
// asynchronous handlers steer it with. The reading side is connection.cpp.
#include "worker/config_snapshot.h"
#include "worker/http1/connection.h"
#include "worker/http1/response_serializer.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::http1 {

void Connection::sendHead(const ResponseHead& head) noexcept {
  if (state_ == State::kClosed || !beginResponse(head.status)) return;
  if (head.close_connection) close_after_response_ = true;
  if (head.status == 101 && !request_.upgrade.empty() && state_ == State::kRequestDone) {
    // RFC 9110 §15.2.2: the 101 ends HTTP/1.1 on this connection; what follows is the
    // protocol the handler switched to, unframed both ways. The handler's fields say which
    // (Upgrade, Connection: upgrade).
    HeadFraming framing;
    framing.framing = Framing::kNone;
    appendResponseHead(out_, head, framing, loop_.date().headerLine(),
                       snapshot_->serverHeaderLine());
    framing_ = BodyFraming::kPlain;
    request_read_whole_ = false;  // the client's bytes go on, unframed
    moveTo(State::kTunnel);
    armTimer(Timer::kNone);  // the handler keeps the tunnel's idle timeout
    if (!in_dispatch_) flushOutput();
    return;
  }

  HeadFraming framing;
  bool has_body = statusHasBody(head.status) && !request_.isHead();
  if (!statusHasBody(head.status)) {
    framing.framing = Framing::kNone;
  } else if (head.content_length.has_value()) {
    framing.framing = Framing::kContentLength;
    framing.content_length = *head.content_length;
  } else if (request_.version == HttpVersion::kHttp11) {
    framing.framing = Framing::kChunked;
  } else {
    framing.framing = Framing::kCloseDelimited;
    close_after_response_ = true;
  }
  framing_ = !has_body                              ? BodyFraming::kNone
             : framing.framing == Framing::kChunked ? BodyFraming::kChunked
                                                    : BodyFraming::kPlain;
  framing.close = close_after_response_;
  framing.keep_alive_header = request_.version == HttpVersion::kHttp10 && !framing.close;
  appendResponseHead(out_, head, framing, loop_.date().headerLine(),
                     snapshot_->serverHeaderLine(peer_));
}

void Connection::sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept {
  // RFC 9110 §15.2: "A server MUST NOT send a 1xx response to an HTTP/1.0 client."
  if (state_ == State::kClosed || responseState() != ResponseState::kNone ||
      request_.version != HttpVersion::kHttp11 || status < 102 || status > 199) {
    return;
  }
  ResponseHead head;
  head.status = status;
  head.headers = headers;
  HeadFraming framing;
  framing.framing = Framing::kNone;
  appendResponseHead(out_, head, framing, {}, {});
  if (!in_dispatch_) flushOutput();
}

void Connection::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (!acceptsBody() || framing_ == BodyFraming::kNone || data.empty() || state_ == State::kClosed)
    return;
  countBody(data.size());
  if (framing_ == BodyFraming::kChunked) appendChunkHeader(out_, data.size());
  // Small stable bodies are cheaper copied next to the head than as their own iovec.
  if (lifetime == BodyLifetime::kStable && data.size() > 1024) {
    out_.appendStable(data);
  } else {
    out_.append(data);
  }
  if (framing_ == BodyFraming::kChunked) out_.append("\r\n");
  if (!in_dispatch_) flushOutput();
}

void Connection::sendBodyRetained(std::string_view data, RefCounted* owner) noexcept {
  if (!acceptsBody() || framing_ == BodyFraming::kNone || data.empty() || state_ == State::kClosed)
    return;
  countBody(data.size());
  if (framing_ == BodyFraming::kChunked) appendChunkHeader(out_, data.size());
  out_.appendStable(data, owner);  // the owner goes once these bytes left
  if (framing_ == BodyFraming::kChunked) out_.append("\r\n");
  if (!in_dispatch_) flushOutput();
}

void Connection::sendFile(const FileSlice& file) noexcept {
  if (!acceptsBody() || framing_ == BodyFraming::kNone || file.length == 0 ||
      state_ == State::kClosed) {
    return;
  }
  countBody(file.length);
  if (framing_ == BodyFraming::kChunked) appendChunkHeader(out_, file.length);
  out_.appendFile(file);
  if (framing_ == BodyFraming::kChunked) out_.append("\r\n");
  if (!in_dispatch_) flushOutput();
}

void Connection::finish() noexcept {
  if (!acceptsBody() || state_ == State::kClosed) return;
  if (framing_ == BodyFraming::kChunked) out_.append("0\r\n\r\n");
  endResponse();
  // The rest of the body, if any, is read and dropped.
  if (state_ == State::kBodyPaused) moveTo(State::kReadingBody);
  if (tunnel()) {
    // The end of a tunnel is the end of the connection.
    close_after_response_ = true;
    moveTo(State::kRequestDone);
  }
  if (!in_dispatch_) onResponseDone();
}

void Connection::setBodyReadPaused(bool paused) noexcept {
  if (tunnel()) {
    if (paused == (state_ == State::kTunnelPaused)) return;
    moveTo(paused ? State::kTunnelPaused : State::kTunnel);
    if (!in_dispatch_) updatePoll();
    return;
  }
  if (paused && state_ == State::kReadingBody) {
    moveTo(State::kBodyPaused);
  } else if (!paused && state_ == State::kBodyPaused) {
    moveTo(State::kReadingBody);
  } else {
    return;  // nothing to hold back (or already so)
  }
  // The body timer measures the client; while we hold it back it must not run.
  if (paused && timer_ == Timer::kBody) armTimer(Timer::kNone);
  if (!paused && timer_ == Timer::kNone) armTimer(Timer::kBody);
  if (!in_dispatch_) updatePoll();
}

void Connection::abortResponse() noexcept {
  if (state_ == State::kClosed) return;
  detachHandler();
  // Flush what the handler already produced, then close without the chunked terminator:
  // the client can tell the response was cut.
  close_after_response_ = true;
  if (!out_.empty()) out_.flush(*transport_);
  close();
}

}  // namespace scalws::worker::http1
