// What an HTTP/2 or HTTP/3 session tells the connection that owns it about its streams.
// The owner routes each request through the dispatcher and keeps the access log; the
// session keeps the codec.
#pragma once

namespace scalws::worker {

template <class StreamT>
class StreamOwner {
 public:
  // A request head arrived. Route it and answer through the stream, now or later; when
  // stream.requestError() is not 0, answer that error.
  virtual void onRequest(StreamT& stream) noexcept = 0;
  // finish() was called on the stream's response (for the access log).
  virtual void onResponseFinished(StreamT& stream) noexcept = 0;
  // The stream is closed (response sent and, over QUIC, acknowledged; or reset); any
  // InFlight was aborted before.
  virtual void onStreamClosed(StreamT& stream) noexcept = 0;
  // A writer call made outside the connection's own events queued output: write soon.
  virtual void onOutputPending() noexcept = 0;
  // The request body outgrew the limit the owner set before the handler answered: answer
  // 413 (the handler's InFlight, if any, was aborted and its body sink dropped).
  virtual void onBodyTooLarge(StreamT& stream) noexcept = 0;

 protected:
  ~StreamOwner() = default;
};

}  // namespace scalws::worker
