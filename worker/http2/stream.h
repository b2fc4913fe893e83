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

#include "worker/http/codec_stream.h"
#include "worker/http/stream_pool.h"
#include "worker/net/byte_queue.h"

namespace scalws::worker::http2 {

class Session;
class Stream;

// HTTP/2's side of CodecStream: nghttp2's buffers, a ByteQueue for the body.
struct Codec : RcbufCalls<nghttp2_rcbuf, nghttp2_nv, &nghttp2_rcbuf_get_buf,
                          &nghttp2_rcbuf_is_static, &nghttp2_rcbuf_incref, &nghttp2_rcbuf_decref,
                          NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE> {
  using Session = http2::Session;
  using Stream = http2::Stream;
  using Body = ByteQueue;
  using StreamId = int32_t;
  static constexpr StreamId kNoId = 0;
  static constexpr HttpVersion kVersion = HttpVersion::kHttp2;
};

class Stream final : public CodecStream<Codec> {
 public:
  explicit Stream(Session& session);

  // Set by the owner when the request arrives, beside `snapshot`.
  std::string_view alt_svc;  // "" for none (no HTTP/3 on this port); as `snapshot`

  // ResponseWriter
  void sendHead(const ResponseHead& head) noexcept override;
  void sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept override;
  size_t queuedBytes() const noexcept override { return body_.size(); }
  // An extended CONNECT (RFC 8441) whose handler accepted it: DATA both ways is a tunnel.
  bool tunnelled() const { return !request_.upgrade.empty() && responseStarted(); }

 private:
  friend class http2::Session;
  friend class StreamPool<Stream>;

  // HttpStream
  void onExpectContinue(bool will_read) noexcept override;
  // MultiplexedStream
  void reopenWindow(uint64_t n) noexcept override;
  void queueBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void resumeCodec() noexcept override;
  // The stream is over for us (closed by nghttp2, or the connection dies).
  void close() noexcept;

  void start(int32_t id);
  void recycle();
  // Request head, from nghttp2's header callbacks. The fields stay in nghttp2's reference-
  // counted buffers (held until the stream is recycled) instead of being copied.
  void addHeader(nghttp2_rcbuf* name, nghttp2_rcbuf* value);
};

}  // namespace scalws::worker::http2
