#include "worker/http/multiplexed_stream.h"

namespace scalws::worker {

bool MultiplexedStream::countField(uint64_t size, uint64_t max_bytes, uint32_t max_fields) {
  header_bytes_ += size;
  if (request_error_ != 0) return false;
  // Four more than the regular limit: the pseudo-headers count too.
  if (header_bytes_ > max_bytes || ++field_count_ > max_fields + 4) {
    request_error_ = 431;  // keep counting (the bomb check), stop storing
    return false;
  }
  return true;
}

void MultiplexedStream::finishHead(HttpVersion version, const PseudoHeaders& pseudo,
                                   bool end_stream) {
  uint16_t error = buildPseudoHeaderRequest(request_, version, pseudo, fields_, arena_, end_stream);
  if (error != 0 && request_error_ == 0) request_error_ = error;
  request_state_ = end_stream ? RequestState::kComplete : RequestState::kBody;
}

void MultiplexedStream::onBodyData(std::string_view data) {
  consumeBody(data.size());  // before the sink runs: it may unpause (or pause) the stream
  body_received_ += data.size();
  if (body_received_ > bodyLimit()) {
    if (!responseStarted()) {
      // The handler has not answered yet: it will not get a body that big.
      abortInFlight();
      request_.setBodySink(nullptr);
      bodyTooLarge();
    }
    return;
  }
  deliverBody(data);
}

void MultiplexedStream::onBodyEnd() {
  request_state_ = RequestState::kComplete;  // bytes held back stay so until unpaused
  deliverBodyEnd();
}

void MultiplexedStream::consumeBody(uint64_t n) {
  if (request_state_ == RequestState::kBodyPaused) {
    unconsumed_ += n;
    return;
  }
  reopenWindow(n);
}

void MultiplexedStream::setBodyReadPaused(bool paused) noexcept {
  if (!open()) return;
  if (paused) {
    if (request_state_ == RequestState::kBody) request_state_ = RequestState::kBodyPaused;
    return;
  }
  if (request_state_ == RequestState::kBodyPaused) request_state_ = RequestState::kBody;
  if (unconsumed_ > 0) {
    uint64_t n = unconsumed_;
    unconsumed_ = 0;
    reopenWindow(n);
    windowReopened();
  }
}

void MultiplexedStream::releaseUnconsumed() {
  if (unconsumed_ > 0) reopenWindow(unconsumed_);
  unconsumed_ = 0;
}

void MultiplexedStream::resetRequestSide() {
  fields_.clear();
  header_bytes_ = 0;
  field_count_ = 0;
  request_error_ = 0;
  request_state_ = RequestState::kHead;
  body_received_ = 0;
  unconsumed_ = 0;
  snapshot = nullptr;
  server_header = {};
}

}  // namespace scalws::worker
