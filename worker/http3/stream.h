// One HTTP/3 request stream as handlers see it: the protocol-neutral Request (views into
// the stream's own arena and nghttp3's header buffers) and the ResponseWriter they answer
// through, so every action works unchanged over HTTP/3.
//
// Owned and recycled by its Session: taken for a request's first HEADERS, closed by
// nghttp3 (response acknowledged, or reset), and reused for a later stream once its owner
// was told (SessionOwner::onStreamClosed) and the session collected it. An asynchronous
// handler still holding the writer when the stream is reset gets InFlight::abort() first
// and must not use the writer afterwards.
//
// The response: sendHead submits HEADERS; the body queues in a BodyBuffer that nghttp3
// reads as QUIC's flow control allows and frees as the peer acknowledges it; finish()
// ends the stream.
#pragma once

#include <nghttp3/nghttp3.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "worker/http/arena.h"
#include "worker/http/handler.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/http3/body_buffer.h"

namespace scalws::worker {
class ConfigSnapshot;
}

namespace scalws::worker::http3 {

class Session;

class Stream final : public ResponseWriter {
 public:
  explicit Stream(Session& session);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int64_t id() const { return id_; }
  Request& request() { return request_; }
  // Not 0 when the request head cannot be served (431 headers too large, 400 bad
  // authority): the owner answers it with sendError.
  uint16_t requestError() const { return request_error_; }
  // The head arrived in 0-RTT data (replayable: RFC 9001 §9.2).
  bool early() const { return early_; }
  bool requestComplete() const { return request_complete_; }
  bool responseStarted() const { return response_started_; }
  bool responseFinished() const { return finished_; }
  uint16_t status() const { return status_; }
  uint64_t bodyBytesSent() const { return body_bytes_; }
  void setBodyLimit(uint64_t limit) { body_limit_ = limit; }
  // Sends an interim response (100 Continue).
  void sendInterim(uint16_t status);

  // Set by the owner when it routes the request.
  Handler* handler = nullptr;
  const ConfigSnapshot* snapshot = nullptr;
  std::string_view server_header;  // "" for none; lives as long as `snapshot`

  // ResponseWriter
  void sendHead(const ResponseHead& head) noexcept override;
  void sendBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void sendFile(const FileSlice& file) noexcept override;
  void finish() noexcept override;
  size_t queuedBytes() const noexcept override { return body_.held(); }
  void notifyWhenWritable(WritableObserver* observer) noexcept override {
    writable_observer_ = observer;
  }
  void setInFlight(InFlight* in_flight) noexcept override { in_flight_ = in_flight; }
  void abortResponse() noexcept override;

 private:
  friend class Session;

  void start(int64_t id, bool early);
  void recycle();
  void addHeader(int32_t token, nghttp3_rcbuf* name, nghttp3_rcbuf* value);
  void finishHead(bool end_stream);
  void onBodyData(std::string_view data);
  void onBodyEnd();
  void onAcked(uint64_t n);
  void abortInFlight();
  void addResponseHeader(std::string_view name, std::string_view value);
  nghttp3_ssize readData(nghttp3_vec* vec, size_t count, uint32_t* flags);
  void resume();

  Session& session_;
  int64_t id_ = -1;
  Arena arena_;
  Request request_;
  std::vector<HeaderField> headers_;
  std::vector<nghttp3_rcbuf*> held_;  // buffers the request's views point into
  std::string_view method_, path_, authority_;
  size_t header_bytes_ = 0;
  uint32_t header_count_ = 0;
  uint16_t request_error_ = 0;
  bool early_ = false;
  bool dispatched_ = false;
  bool request_complete_ = false;
  uint64_t body_received_ = 0;
  uint64_t body_limit_ = UINT64_MAX;

  bool response_started_ = false;
  bool has_body_ = false;  // the response carries DATA frames
  bool deferred_ = false;  // nghttp3 waits for resume
  bool finished_ = false;  // finish() was called
  bool closed_ = false;    // nghttp3 closed the stream
  uint16_t status_ = 0;
  uint64_t body_bytes_ = 0;
  BodyBuffer body_;
  std::vector<nghttp3_nv> nva_;
  InFlight* in_flight_ = nullptr;
  WritableObserver* writable_observer_ = nullptr;

  Stream* prev_ = nullptr;  // the session's active or closed list
  Stream* next_ = nullptr;
};

}  // namespace scalws::worker::http3
