// The ResponseWriter side of an HTTP/1.1 connection: framing the handler's answer (head,
// Content-Length or chunked body, file slices) into the output queue, and the hooks
// asynchronous handlers steer it with. The reading side is connection.cpp.
#include "worker/config_snapshot.h"
#include "worker/http1/connection.h"
#include "worker/http1/response_serializer.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::http1 {

void Connection::sendHead(const ResponseHead& head) noexcept {
  if (response_started_ || state_ == State::kClosed) return;
  response_started_ = true;
  status_ = head.status;
  if (head.close_connection) close_after_response_ = true;

  HeadFraming framing;
  response_has_body_ = statusHasBody(head.status) && !request_.isHead();
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
  response_chunked_ = framing.framing == Framing::kChunked && response_has_body_;
  framing.close = close_after_response_;
  framing.keep_alive_header = request_.version == HttpVersion::kHttp10 && !framing.close;
  appendResponseHead(out_, head, framing, loop_.date().headerLine(),
                     snapshot_->serverHeaderLine(peer_));
}

void Connection::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (!response_started_ || response_done_ || !response_has_body_ || data.empty() ||
      state_ == State::kClosed) {
    return;
  }
  body_bytes_sent_ += data.size();
  if (response_chunked_) appendChunkHeader(out_, data.size());
  // Small stable bodies are cheaper copied next to the head than as their own iovec.
  if (lifetime == BodyLifetime::kStable && data.size() > 1024) {
    out_.appendStable(data);
  } else {
    out_.append(data);
  }
  if (response_chunked_) out_.append("\r\n");
  if (!in_dispatch_) flushOutput();
}

void Connection::sendFile(const FileSlice& file) noexcept {
  if (!response_started_ || response_done_ || !response_has_body_ || file.length == 0 ||
      state_ == State::kClosed) {
    return;
  }
  body_bytes_sent_ += file.length;
  if (response_chunked_) appendChunkHeader(out_, file.length);
  out_.appendFile(file);
  if (response_chunked_) out_.append("\r\n");
  if (!in_dispatch_) flushOutput();
}

void Connection::finish() noexcept {
  if (!response_started_ || response_done_ || state_ == State::kClosed) return;
  if (response_chunked_) out_.append("0\r\n\r\n");
  response_done_ = true;
  in_flight_ = nullptr;
  writable_observer_ = nullptr;
  body_paused_ = false;  // the rest of the body, if any, is read and dropped
  if (!in_dispatch_) onResponseDone();
}

void Connection::setBodyReadPaused(bool paused) noexcept {
  if (body_paused_ == paused || state_ == State::kClosed) return;
  body_paused_ = paused;
  if (state_ != State::kInRequest || request_complete_) return;
  // The body timer measures the client; while we hold it back it must not run.
  if (paused && timer_ == Timer::kBody) armTimer(Timer::kNone);
  if (!paused && timer_ == Timer::kNone) armTimer(Timer::kBody);
  if (!in_dispatch_) updatePoll();
}

void Connection::abortResponse() noexcept {
  if (state_ == State::kClosed) return;
  in_flight_ = nullptr;
  writable_observer_ = nullptr;
  // Flush what the handler already produced, then close without the chunked terminator:
  // the client can tell the response was cut.
  close_after_response_ = true;
  if (!out_.empty()) out_.flush(*transport_);
  close();
}

void Connection::notifyWhenWritable(WritableObserver* observer) noexcept {
  writable_observer_ = observer;
}

}  // namespace scalws::worker::http1
