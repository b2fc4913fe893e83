// One HTTP/3 request stream as handlers see it: an HttpStream (the protocol-neutral
// Request, views into the stream's own arena and nghttp3's header buffers, and the
// ResponseWriter they answer through), so every action works unchanged over HTTP/3. The
// response's life (started, finished, dead) is HttpStream's; this class adds the request
// side, the body's flow control and the framing nghttp3 does.
//
// Owned and recycled by its Session: taken for a request's first HEADERS, closed when QUIC
// closes the stream (response acknowledged, or reset), and reused for a later stream once
// its owner was told (SessionOwner::onStreamClosed) and the session collected it. An
// asynchronous handler still holding the writer when the stream is reset gets
// InFlight::abort() first and must not use the writer afterwards.
//
// The response: sendHead submits HEADERS; the body queues in a BodyBuffer that nghttp3
// reads as QUIC's flow control allows and frees as the peer acknowledges it (unlike
// HTTP/2's ByteQueue, a byte sent may have to be sent again until then); finish() ends
// the stream.
#pragma once

#include <nghttp3/nghttp3.h>

#include <cstdint>
#include <string_view>

#include "worker/http/codec_stream.h"
#include "worker/http/stream_pool.h"
#include "worker/http3/body_buffer.h"

namespace scalws::worker::http3 {

class Session;
class Stream;

// HTTP/3's side of CodecStream: nghttp3's buffers, a BodyBuffer (kept until acknowledged).
struct Codec : RcbufCalls<nghttp3_rcbuf, nghttp3_nv, &nghttp3_rcbuf_get_buf,
                          &nghttp3_rcbuf_is_static, &nghttp3_rcbuf_incref, &nghttp3_rcbuf_decref,
                          NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE> {
  using Session = http3::Session;
  using Stream = http3::Stream;
  using Body = BodyBuffer;
  using StreamId = int64_t;
  static constexpr StreamId kNoId = -1;
  static constexpr HttpVersion kVersion = HttpVersion::kHttp3;
};

class Stream final : public CodecStream<Codec> {
 public:
  explicit Stream(Session& session);
  // The head arrived in 0-RTT data (replayable: RFC 9001 §9.2).
  bool early() const { return early_; }

  // ResponseWriter
  void sendHead(const ResponseHead& head) noexcept override;
  void sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept override;
  size_t queuedBytes() const noexcept override { return body_.held(); }
  void abortResponse() noexcept override;

 private:
  friend class http3::Session;
  friend class StreamPool<Stream>;

  // HttpStream
  void onExpectContinue(bool will_read) noexcept override;
  // MultiplexedStream
  void reopenWindow(uint64_t n) noexcept override;
  void queueBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void resumeCodec() noexcept override;
  // The stream is over for us (QUIC closed it, or the connection dies).
  void close() noexcept;

  void start(int64_t id, bool early);
  void recycle();
  void addHeader(int32_t token, nghttp3_rcbuf* name, nghttp3_rcbuf* value);
  void onAcked(uint64_t n);
  nghttp3_ssize readData(nghttp3_vec* vec, size_t count, uint32_t* flags);
  // A response that cannot be completed is cut with a stream reset (RFC 9114 §4.1.1).
  void cut();

  bool early_ = false;
};

}  // namespace scalws::worker::http3
