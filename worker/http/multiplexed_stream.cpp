#include "worker/http/multiplexed_stream.h"

#include <uv.h>

#include "worker/config_snapshot.h"
#include "worker/http/decimal.h"
#include "worker/http/header_field.h"
#include "worker/http/status_text.h"
#include "worker/http/stream_snapshots.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {
namespace {

// RFC 9113 §8.2.2 and RFC 9114 §4.2: connection-specific fields are malformed in HTTP/2 and
// HTTP/3. Content-Length is the writer's to set, from ResponseHead.
bool droppedResponseField(std::string_view name) {
  static constexpr std::string_view kDropped[] = {
      "connection",        "keep-alive", "proxy-connection",
      "transfer-encoding", "upgrade",    "content-length",
  };
  for (std::string_view d : kDropped) {
    if (equalsIgnoreCase(name, d)) return true;
  }
  return false;
}

}  // namespace

const ConfigSnapshot& MultiplexedStream::beginRequest(WorkerLoop& loop, const PeerInfo& peer,
                                                      StreamSnapshots& snapshots) {
  request_.id = loop.nextRequestId();
  request_.start_ns = uv_hrtime();
  request_.peer = &peer;
  request_.loop = &loop;
  const ConfigSnapshot& snap = snapshots.forNewStream(loop.snapshot());
  snapshot = &snap;
  server_header = snap.server().server_header;
  return snap;
}

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
    outputChanged();  // the window update, sent now
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
  data_ = DataState::kNone;
  response_fields_.clear();
  snapshot = nullptr;
  server_header = {};
}

void MultiplexedStream::addResponseField(std::string_view name, std::string_view value) {
  // RFC 9113 §8.2.1 and RFC 9114 §4.2: field names are lower-case.
  char* lower = arena_.allocate(name.size());
  for (size_t i = 0; i < name.size(); ++i) lower[i] = asciiLower(name[i]);
  response_fields_.push_back(HeaderField{std::string_view(lower, name.size()), arena_.copy(value)});
}

std::span<const HeaderField> MultiplexedStream::interimFields(
    uint16_t status, std::span<const HeaderField> headers) {
  response_fields_.clear();
  char digits[3] = {static_cast<char>('0' + status / 100 % 10),
                    static_cast<char>('0' + status / 10 % 10),
                    static_cast<char>('0' + status % 10)};
  addResponseField(":status", std::string_view(digits, 3));
  for (const HeaderField& h : headers) {
    if (!droppedResponseField(h.name)) addResponseField(h.name, h.value);
  }
  return response_fields_;
}

std::span<const HeaderField> MultiplexedStream::responseFields(
    uint16_t status, std::span<const HeaderField> headers, std::optional<uint64_t> content_length,
    std::string_view date) {
  interimFields(status, headers);
  if (statusHasBody(status) && content_length.has_value()) {
    char digits[20];
    size_t n = formatDecimal(*content_length, digits);
    addResponseField("content-length", std::string_view(digits, n));
  }
  addResponseField("date", date);
  if (!server_header.empty()) addResponseField("server", server_header);
  return response_fields_;
}

bool MultiplexedStream::startData(const ResponseHead& head, uint16_t status) {
  bool has_body = statusHasBody(status) && !request_.isHead();
  bool ends_here = !has_body || (head.content_length.has_value() && *head.content_length == 0);
  data_ = ends_here ? DataState::kNone : DataState::kFlowing;  // kNone: body calls dropped
  return ends_here;
}

void MultiplexedStream::resumeData() {
  if (data_ != DataState::kDeferred) return;
  data_ = DataState::kFlowing;
  resumeCodec();
}

void MultiplexedStream::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (!acceptsBody() || data_ == DataState::kNone || data.empty()) return;
  countBody(data.size());
  queueBody(data, lifetime);
  resumeData();
  outputChanged();
}

void MultiplexedStream::sendFile(const FileSlice& file) noexcept {
  if (!acceptsBody() || data_ == DataState::kNone || file.length == 0) return;
  countBody(file.length);
  queueFile(file);
  resumeData();
  outputChanged();
}

void MultiplexedStream::finish() noexcept {
  if (!endResponse()) return;
  setBodyReadPaused(false);  // the rest of the body, if any, is received and dropped
  responseEnded();
  resumeData();
  outputChanged();
}

}  // namespace scalws::worker
