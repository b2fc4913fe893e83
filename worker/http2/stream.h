// One HTTP/2 stream as handlers see it: an HttpStream (the protocol-neutral Request, views
// into the stream's own arena, and the ResponseWriter they answer through), so every
// action works unchanged over HTTP/2. The response's life (started, finished, dead) is
// HttpStream's; this class adds the request side and the DATA framing.
//
// Owned and recycled by its Session: created for a request's HEADERS, closed by nghttp2
// (response sent, or reset), and reused for a later stream once its owner was told
// (SessionOwner::onStreamClosed) and the session collected it. An asynchronous handler
// that still holds the writer when the stream is reset gets InFlight::abort() first and
// must not use the writer afterwards.
//
// The response: sendHead submits HEADERS; body bytes, stable views and file slices queue
// in a per-stream ByteQueue that nghttp2 drains as flow-control windows allow (files are
// read only when their DATA frame is written); finish ends the stream.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "worker/http/http_stream.h"
#include "worker/net/byte_queue.h"

namespace scalws::worker {
class ConfigSnapshot;
}

namespace scalws::worker::http2 {

class Session;

class Stream final : public HttpStream {
 public:
  // The request side: the head is being received, then the body (DATA until END_STREAM),
  // then nothing more. A stream leaves kHead when its head is dispatched. kBodyPaused: the
  // handler asked for no more body (setBodyReadPaused), so what arrives is not consumed
  // and the client's window does not reopen.
  enum class RequestState : uint8_t { kHead, kBody, kBodyPaused, kComplete };
  // The response's DATA: none (no body, or not started), flowing, or deferred (nghttp2
  // asked for bytes the handler has not given yet; resumed by the next body call).
  enum class DataState : uint8_t { kNone, kFlowing, kDeferred };

  explicit Stream(Session& session);

  int32_t id() const { return id_; }
  // Not 0 when the request head cannot be served (431 headers too large, 400 bad
  // authority): the owner answers it with sendError.
  uint16_t requestError() const { return request_error_; }
  RequestState requestState() const { return request_state_; }
  bool requestComplete() const { return request_state_ == RequestState::kComplete; }

  // Set by the owner when the request arrives.
  const ConfigSnapshot* snapshot = nullptr;
  std::string_view server_header;  // "" for none; lives as long as `snapshot`
  std::string_view alt_svc;        // "" for none (no HTTP/3 on this port); as `snapshot`

  // ResponseWriter
  void sendHead(const ResponseHead& head) noexcept override;
  void sendBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void sendFile(const FileSlice& file) noexcept override;
  void finish() noexcept override;
  size_t queuedBytes() const noexcept override { return body_.size(); }
  // Request-body flow control (RFC 9113 §5.2): body bytes are consumed — the client's
  // window reopened — as the handler takes them; while paused they are not, so the client
  // can send at most its stream window (and all streams together the connection window)
  // before it must wait.
  void setBodyReadPaused(bool paused) noexcept override;
  // Body bytes received but not consumed yet (held back by a pause).
  uint64_t unconsumedBytes() const { return unconsumed_; }
  // An extended CONNECT (RFC 8441) whose handler accepted it: DATA both ways is a tunnel.
  bool tunnelled() const { return !request_.upgrade.empty() && responseStarted(); }

 private:
  friend class Session;

  // HttpStream
  void onExpectContinue(bool will_read) noexcept override;
  void endResumedDispatch() noexcept override;
  // The stream is over for us (closed by nghttp2, or the connection dies).
  void close() noexcept;
  bool closed() const { return responseState() == ResponseState::kDead; }
  void resumeData();

  void start(int32_t id);
  void recycle();
  // Request head, from nghttp2's header callbacks. The fields stay in nghttp2's reference-
  // counted buffers (held until the stream is recycled) instead of being copied.
  void addHeader(nghttp2_rcbuf* name, nghttp2_rcbuf* value);
  void finishHead(bool end_stream);
  void onBodyData(std::string_view data);
  void onBodyEnd();
  // Gives the client window for `n` body bytes back (now, or once unpaused).
  void consumeBody(uint64_t n);
  void addResponseHeader(std::string_view name, std::string_view value);

  Session& session_;
  int32_t id_ = 0;
  std::vector<HeaderField> headers_;
  std::vector<nghttp2_rcbuf*> held_;  // buffers the request's views point into
  std::string_view method_, path_, authority_, protocol_;
  size_t header_bytes_ = 0;
  uint32_t header_count_ = 0;
  uint16_t request_error_ = 0;
  RequestState request_state_ = RequestState::kHead;
  uint64_t body_received_ = 0;
  uint64_t unconsumed_ = 0;

  DataState data_ = DataState::kNone;
  ByteQueue body_;
  std::vector<nghttp2_nv> nva_;

  Stream* prev_ = nullptr;  // the session's active or closed list
  Stream* next_ = nullptr;
};

}  // namespace scalws::worker::http2
