// The protocol-neutral life of one request/response exchange: what an HTTP/1.1 connection
// (one exchange at a time) and an HTTP/2 stream (and later an HTTP/3 one) share between a
// request head and the end of its response. A protocol's adapter derives from it, frames
// the response its own way (sendHead, sendBody, sendFile and finish stay its own) and
// calls the steps below; RequestDispatcher takes it from a parsed head to the handler and,
// once the response is done, to the access log and the counters.
//
// The response state is one enum, changed only by moveTo() (its table is in the .cpp):
//
//   kNone ──sendHead──► kStarted ──finish──► kFinished
//     │                    │                    │
//     └──── die() (the client or the connection went away) ────► kDead
//   kStarted/kFinished ──rewind()──► kNone   (an answer replaced before a byte of it left)
//   any ──reset()──► kNone                    (the next request on a reused object)
//
// A request a route's `limit` counts in flight holds its slot of the limit table until
// the response finishes or dies (or the stream is reset or destroyed).
//
// Leaving for kFinished or kDead drops the handler's InFlight and WritableObserver; kDead
// calls InFlight::abort() first, so an asynchronous handler never touches a dead writer.
// The request body reaches the handler's BodySink through deliverBody(), only while the
// response is not finished (after that, what the client still sends is dropped).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "common/metrics/metrics_snapshot.h"
#include "worker/http/arena.h"
#include "worker/http/handler.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"

namespace scalws::worker {

class RequestDispatcher;
namespace limits {
class SharedLimits;
}

class HttpStream : public ResponseWriter {
 public:
  enum class ResponseState : uint8_t { kNone, kStarted, kFinished, kDead };

  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  Request& request() { return request_; }
  const Request& request() const { return request_; }
  // The route's handler once dispatched; null for answers the dispatcher gave itself.
  Handler* handler() const { return handler_; }
  ResponseState responseState() const { return response_; }
  bool responseStarted() const {
    return response_ == ResponseState::kStarted || response_ == ResponseState::kFinished;
  }
  bool responseFinished() const { return response_ == ResponseState::kFinished; }
  uint16_t status() const { return status_; }
  uint64_t bodyBytesSent() const { return body_bytes_; }
  // Request body bytes allowed (the route's max_body, else the server's); 413 past it.
  uint64_t bodyLimit() const { return body_limit_; }
  void setBodyLimit(uint64_t limit) { body_limit_ = limit; }

  // ResponseWriter: the same for every protocol.
  void notifyWhenWritable(WritableObserver* observer) noexcept final {
    writable_observer_ = observer;
  }
  void setInFlight(InFlight* in_flight) noexcept final { in_flight_ = in_flight; }

 protected:
  explicit HttpStream(size_t arena_block) : arena_(arena_block) { request_.arena = &arena_; }
  ~HttpStream() override { releaseLimit(); }

  // The request announced `Expect: 100-continue` (RFC 9110 §10.1.1). `will_read`: the
  // handler reads the body, so an interim 100 solicits it; otherwise the answer comes
  // without reading it (HTTP/1.1 cannot reuse the connection then). Called before the
  // handler runs, only for such requests.
  virtual void onExpectContinue(bool will_read) noexcept = 0;
  // Around the part of dispatch() that runs later, outside the protocol's own callbacks
  // (RequestDispatcher::resume, once an auth check on the thread pool is done): between
  // the two the protocol holds back what a finished response would set going (HTTP/1.1's
  // next request), and at the end it sends what was queued (a 100 Continue, the answer).
  virtual void beginResumedDispatch() noexcept {}
  virtual void endResumedDispatch() noexcept {}

  // sendHead: kNone → kStarted, recording the status. False when a response already
  // started or the stream is dead: the call must be ignored.
  bool beginResponse(uint16_t status) noexcept {
    if (response_ != ResponseState::kNone) return false;  // moveTo's table, inlined: hot
    response_ = ResponseState::kStarted;
    status_ = status;
    return true;
  }
  // Body calls are allowed while kStarted.
  bool acceptsBody() const { return response_ == ResponseState::kStarted; }
  void countBody(uint64_t n) { body_bytes_ += n; }
  // finish: kStarted → kFinished. False when the call must be ignored.
  bool endResponse() noexcept {
    if (response_ != ResponseState::kStarted) return false;  // moveTo's table, inlined: hot
    response_ = ResponseState::kFinished;
    in_flight_ = nullptr;
    writable_observer_ = nullptr;
    releaseLimit();
    return true;
  }
  // The stream ends before its response did: InFlight::abort(), then kDead.
  void die() noexcept;
  // Aborts the handler's in-flight work but keeps the state (a codec error is about to
  // replace the response).
  void abortInFlight() noexcept;
  // A started or finished response that has not left is replaced by another.
  void rewind() noexcept;
  // Ready for the next request: kNone, no handler, counts zeroed, arena emptied.
  void reset() noexcept;
  // The handler is done with the writer without the response having ended normally
  // (abortResponse): it gets no abort() and no writable call any more.
  void detachHandler() noexcept {
    in_flight_ = nullptr;
    writable_observer_ = nullptr;
  }
  // Takes the observer waiting for the output to drain (it is called once).
  WritableObserver* takeWritableObserver() noexcept {
    WritableObserver* o = writable_observer_;
    writable_observer_ = nullptr;
    return o;
  }
  WritableObserver* writableObserver() const { return writable_observer_; }
  InFlight* inFlight() const { return in_flight_; }
  // Request body to the handler's sink, unless the response is finished or dead.
  void deliverBody(std::string_view data) noexcept {
    if (BodySink* sink = request_.bodySink(); sink != nullptr && sinkOpen()) sink->onBodyData(data);
  }
  void deliverBodyEnd() noexcept {
    if (BodySink* sink = request_.bodySink(); sink != nullptr && sinkOpen()) sink->onBodyEnd();
  }
  bool sinkOpen() const {
    return response_ == ResponseState::kNone || response_ == ResponseState::kStarted;
  }

  Arena arena_;
  Request request_;

 private:
  friend class RequestDispatcher;
  // The one place the response state changes; false for a transition the table refuses.
  bool moveTo(ResponseState next) noexcept;
  // The request counts in `table`'s slot until it ends (RequestDispatcher, once admitted).
  void holdLimit(std::shared_ptr<limits::SharedLimits> table, uint32_t slot, uint64_t key) noexcept;
  void releaseLimit() noexcept {
    if (limit_slot_ != 0) releaseLimitSlot();
  }
  void releaseLimitSlot() noexcept;

  ResponseState response_ = ResponseState::kNone;
  Handler* handler_ = nullptr;
  InFlight* in_flight_ = nullptr;
  WritableObserver* writable_observer_ = nullptr;
  uint16_t status_ = 0;
  uint64_t body_bytes_ = 0;
  uint64_t body_limit_ = UINT64_MAX;
  common::metrics::Action action_ = common::metrics::Action::kOther;  // the handler's
  std::shared_ptr<limits::SharedLimits> limit_table_;                 // set while limit_slot_ != 0
  uint32_t limit_slot_ = 0;
  uint64_t limit_key_ = 0;
};

}  // namespace scalws::worker
