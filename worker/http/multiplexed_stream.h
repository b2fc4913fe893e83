// What HTTP/2 and HTTP/3 streams share. The request side: both receive a head as fields
// (pseudo-headers first) from their codec's callbacks, then body bytes under a
// flow-control window that they reopen only as the handler takes the bytes; this class
// counts and stores the fields, builds the Request, enforces the body limit and holds back
// the window while the handler paused the body. The response side: both send the same
// fields in the same order and queue the body for a codec that pulls it as flow control
// allows; this class builds the fields and runs the writer's body calls, and a protocol's
// stream keeps its codec's buffers alive, queues bytes in its own buffer and frames them.
//
// The request side is one enum: the head is being received, then the body (until the
// client ends the stream), then nothing more. kBodyPaused: the handler asked for no more
// body (setBodyReadPaused), so what arrives is not consumed and the client's window does
// not reopen; a stream leaves kHead when its head is dispatched.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "worker/http/http_stream.h"
#include "worker/http/pseudo_header_request.h"

namespace scalws::worker {

class ConfigSnapshot;
class StreamSnapshots;
class WorkerLoop;

class MultiplexedStream : public HttpStream {
 public:
  enum class RequestState : uint8_t { kHead, kBody, kBodyPaused, kComplete };
  // The response's DATA: none (no body, or not started), flowing, or deferred (the codec
  // asked for bytes the handler has not given yet; resumed by the next body call).
  enum class DataState : uint8_t { kNone, kFlowing, kDeferred };

  // Not 0 when the request head cannot be served (431 headers too large, 400 bad
  // authority): the owner answers it with sendError.
  uint16_t requestError() const { return request_error_; }
  RequestState requestState() const { return request_state_; }
  bool requestComplete() const { return request_state_ == RequestState::kComplete; }
  // Body bytes received but not consumed yet (held back by a pause).
  uint64_t unconsumedBytes() const { return unconsumed_; }

  // Set by the owner when the request arrives.
  const ConfigSnapshot* snapshot = nullptr;
  std::string_view server_header;  // "" for none; lives as long as `snapshot`

  // Before the owner dispatches the head: the request's id, start time, peer and loop,
  // and the config the stream runs under (`snapshot`, `server_header`).
  const ConfigSnapshot& beginRequest(WorkerLoop& loop, const PeerInfo& peer,
                                     StreamSnapshots& snapshots);

  // Request-body flow control (RFC 9113 §5.2, RFC 9000 §4): body bytes are consumed — the
  // client's window reopened — as the handler takes them; while paused they are not, so
  // the client can send at most its stream window (and all streams together the
  // connection window) before it must wait.
  void setBodyReadPaused(bool paused) noexcept final;

  // ResponseWriter: the body side, the same for both protocols.
  void sendBody(std::string_view data, BodyLifetime lifetime) noexcept final;
  void sendFile(const FileSlice& file) noexcept final;
  void finish() noexcept final;

 protected:
  explicit MultiplexedStream(size_t arena_block) : HttpStream(arena_block) { fields_.reserve(16); }
  ~MultiplexedStream() override = default;

  // Gives the client window back for `n` body bytes (the codec's consume call).
  virtual void reopenWindow(uint64_t n) noexcept = 0;
  // Output was queued outside the codec's own callbacks (a window update, a head, body
  // bytes): the session must write soon.
  virtual void outputChanged() noexcept = 0;
  // The body went past the limit before the handler answered: the owner answers 413.
  virtual void bodyTooLarge() noexcept = 0;
  // False when the stream is over for us (what a pause would still do is moot).
  virtual bool open() const noexcept = 0;
  // The response body into the protocol's own buffer, which its codec drains.
  virtual void queueBody(std::string_view data, BodyLifetime lifetime) noexcept = 0;
  virtual void queueFile(const FileSlice& file) noexcept = 0;
  // The codec stopped asking for DATA (kDeferred): ask it to ask again.
  virtual void resumeCodec() noexcept = 0;
  // finish() ended the response: the session tells its owner (the access log).
  virtual void responseEnded() noexcept = 0;

  // HttpStream: the interim 100 or the answer of a resumed dispatch go out now.
  void endResumedDispatch() noexcept final { outputChanged(); }

  // The response head's fields, lower-cased in the arena (they live until the stream is
  // recycled, past the codec's encoding, so the codec need not copy them), in wire order:
  // ":status", the handler's fields minus those neither protocol carries, then
  // content-length (when given and the status has a body), date and server. A protocol
  // turns them into its codec's name/value array and may add its own after.
  std::span<const HeaderField> responseFields(uint16_t status, std::span<const HeaderField> headers,
                                              std::optional<uint64_t> content_length,
                                              std::string_view date);
  // The same for an interim (1xx) head: ":status" and the handler's fields.
  std::span<const HeaderField> interimFields(uint16_t status, std::span<const HeaderField> headers);
  // Whether the head just built ends the stream (no body to follow); sets the DATA state.
  bool startData(const ResponseHead& head, uint16_t status);
  void resumeData();
  // One field of the head, `size` as the codec's limit counts it (RFC 9113 §6.5.2,
  // RFC 9204 §3.2.1: name, value and 32 bytes). False when it must not be stored: the
  // head is already too large (431; the bytes are still counted, for the codec's bomb
  // check) or unservable.
  bool countField(uint64_t size, uint64_t max_bytes, uint32_t max_fields);
  void addField(std::string_view name, std::string_view value) {
    fields_.push_back(HeaderField{name, value});
  }
  void finishHead(HttpVersion version, const PseudoHeaders& pseudo, bool end_stream);
  void onBodyData(std::string_view data);
  void onBodyEnd();
  // What a pause held back still counts against the connection's window: given back
  // when the stream closes.
  void releaseUnconsumed();
  // Ready for the next request (the HttpStream and Request resets are the caller's).
  void resetRequestSide();

  uint64_t header_bytes_ = 0;
  RequestState request_state_ = RequestState::kHead;
  DataState data_ = DataState::kNone;

 private:
  void consumeBody(uint64_t n);
  void addResponseField(std::string_view name, std::string_view value);

  std::vector<HeaderField> fields_;
  std::vector<HeaderField> response_fields_;
  uint32_t field_count_ = 0;
  uint16_t request_error_ = 0;
  uint64_t body_received_ = 0;
  uint64_t unconsumed_ = 0;
};

}  // namespace scalws::worker
