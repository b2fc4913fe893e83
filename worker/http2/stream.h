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

#include "worker/http/multiplexed_stream.h"
#include "worker/http/stream_list.h"
#include "worker/net/byte_queue.h"

namespace scalws::worker::http2 {

class Session;

class Stream final : public MultiplexedStream {
 public:
  explicit Stream(Session& session);

  int32_t id() const { return id_; }

  // Set by the owner when the request arrives, beside `snapshot`.
  std::string_view alt_svc;  // "" for none (no HTTP/3 on this port); as `snapshot`

  // ResponseWriter
  void sendHead(const ResponseHead& head) noexcept override;
  void sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept override;
  size_t queuedBytes() const noexcept override { return body_.size(); }
  // An extended CONNECT (RFC 8441) whose handler accepted it: DATA both ways is a tunnel.
  bool tunnelled() const { return !request_.upgrade.empty() && responseStarted(); }

 private:
  friend class Session;
  friend class StreamList<Stream>;

  // HttpStream
  void onExpectContinue(bool will_read) noexcept override;
  // MultiplexedStream
  void reopenWindow(uint64_t n) noexcept override;
  void outputChanged() noexcept override;
  void bodyTooLarge() noexcept override;
  bool open() const noexcept override { return !closed(); }
  void queueBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void queueFile(const FileSlice& file) noexcept override;
  void resumeCodec() noexcept override;
  void responseEnded() noexcept override;
  // The stream is over for us (closed by nghttp2, or the connection dies).
  void close() noexcept;
  bool closed() const { return responseState() == ResponseState::kDead; }

  void start(int32_t id);
  void recycle();
  // Request head, from nghttp2's header callbacks. The fields stay in nghttp2's reference-
  // counted buffers (held until the stream is recycled) instead of being copied.
  void addHeader(nghttp2_rcbuf* name, nghttp2_rcbuf* value);
  void finishHead(bool end_stream);
  // The codec's array for `fields` (views into the arena: nghttp2 need not copy them).
  void setNva(std::span<const HeaderField> fields);

  Session& session_;
  int32_t id_ = 0;
  std::vector<nghttp2_rcbuf*> held_;  // buffers the request's views point into
  PseudoHeaders pseudo_;

  ByteQueue body_;
  std::vector<nghttp2_nv> nva_;

  Stream* prev_ = nullptr;  // the session's active or closed list
  Stream* next_ = nullptr;
};

}  // namespace scalws::worker::http2
