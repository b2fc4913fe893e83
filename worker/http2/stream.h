// One HTTP/2 stream as handlers see it: the protocol-neutral Request (views into the
// stream's own arena) and the ResponseWriter they answer through, so every
// action works unchanged over HTTP/2.
//
// Owned and recycled by its Session: created for a request's HEADERS, closed by nghttp2
// (response sent, or reset), and reused for a later stream once its owner was told
// (SessionOwner::onStreamClosed) and the session collected it. An asynchronous handler
// that still holds the writer when the stream is reset gets InFlight::abort() first and
// must not use the writer afterwards.
//
// The response: sendHead submits HEADERS; body bytes, stable views and file slices queue
// in a per-stream BodyQueue that nghttp2 drains as flow-control windows allow (files are
// read only when their DATA frame is written); finish ends the stream.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "worker/http/arena.h"
#include "worker/http/handler.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/http2/body_queue.h"

namespace scalws::worker {
class ConfigSnapshot;
}

namespace scalws::worker::http2 {

class Session;

class Stream final : public ResponseWriter {
 public:
  explicit Stream(Session& session);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int32_t id() const { return id_; }
  Request& request() { return request_; }
  // Not 0 when the request head cannot be served (431 headers too large, 400 bad
  // authority): the owner answers it with sendError.
  uint16_t requestError() const { return request_error_; }
  bool requestComplete() const { return request_complete_; }
  bool responseStarted() const { return response_started_; }
  bool responseFinished() const { return finished_; }
  uint16_t status() const { return status_; }
  uint64_t bodyBytesSent() const { return body_bytes_; }
  // 413 past it (the route decides; set by the owner when it routes).
  void setBodyLimit(uint64_t limit) { body_limit_ = limit; }

  // Set by the owner when it routes the request.
  Handler* handler = nullptr;
  const ConfigSnapshot* snapshot = nullptr;
  std::string_view server_header;  // "" for none; lives as long as `snapshot`
  std::string_view alt_svc;        // "" for none (no HTTP/3 on this port); as `snapshot`

  // ResponseWriter
  void sendHead(const ResponseHead& head) noexcept override;
  void sendBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void sendFile(const FileSlice& file) noexcept override;
  void finish() noexcept override;
  size_t queuedBytes() const noexcept override { return body_.size(); }
  void notifyWhenWritable(WritableObserver* observer) noexcept override {
    writable_observer_ = observer;
  }
  void setInFlight(InFlight* in_flight) noexcept override { in_flight_ = in_flight; }

 private:
  friend class Session;

  void start(int32_t id);
  void recycle();
  // Request head, from nghttp2's header callbacks. The fields stay in nghttp2's reference-
  // counted buffers (held until the stream is recycled) instead of being copied.
  void addHeader(nghttp2_rcbuf* name, nghttp2_rcbuf* value);
  void finishHead(bool end_stream);
  void onBodyData(std::string_view data);
  void onBodyEnd();
  void addResponseHeader(std::string_view name, std::string_view value);

  Session& session_;
  int32_t id_ = 0;
  Arena arena_;
  Request request_;
  std::vector<HeaderField> headers_;
  std::vector<nghttp2_rcbuf*> held_;  // buffers the request's views point into
  std::string_view method_, path_, authority_;
  size_t header_bytes_ = 0;
  uint32_t header_count_ = 0;
  uint16_t request_error_ = 0;
  bool dispatched_ = false;
  bool request_complete_ = false;
  uint64_t body_received_ = 0;
  uint64_t body_limit_ = UINT64_MAX;

  bool response_started_ = false;
  bool has_body_ = false;  // the response carries DATA frames
  bool deferred_ = false;  // nghttp2 waits for resume_data
  bool finished_ = false;  // finish() was called
  bool closed_ = false;    // nghttp2 closed the stream
  uint16_t status_ = 0;
  uint64_t body_bytes_ = 0;
  BodyQueue body_;
  std::vector<nghttp2_nv> nva_;
  InFlight* in_flight_ = nullptr;
  WritableObserver* writable_observer_ = nullptr;

  Stream* prev_ = nullptr;  // the session's active or closed list
  Stream* next_ = nullptr;
};

}  // namespace scalws::worker::http2
