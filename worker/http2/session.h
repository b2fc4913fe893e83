// The HTTP/2 codec of a server connection: nghttp2's server session plus our streams,
// settings and flood limits. It never touches a socket: receive() takes bytes
// the connection read, send() appends frames to a queue the connection owns, and
// SessionOwner callbacks say when a request is ready, a response finished or a stream
// went away. That is what lets the unit tests and the fuzz target drive it with bytes.
//
// Settings sent (RFC 9113 §6.5.2): 128 concurrent streams, a 256 KiB stream window and a
// 1 MiB connection window for request bodies (window updates as handlers take the bytes:
// a paused body holds at most its stream window, all paused bodies of a connection
// together at most the connection window), a header
// list limit of the server's max_header_size, no RFC 7540 priorities (RFC 9218 instead).
//
// Defences: nghttp2 validates frames and HTTP semantics and answers protocol errors with
// GOAWAY PROTOCOL_ERROR (or RST_STREAM); at most 8 CONTINUATION frames per header block
// (CVE-2024-27316 class); a decoded header list past max_header_size gets 431, past 4× it
// (an HPACK bomb) the connection ends; FloodGuard limits resets, SETTINGS/PING and empty
// frames (GOAWAY ENHANCE_YOUR_CALM); at most 64 unanswered SETTINGS/PING acks queue.
// FrameChecker enforces the stream-state and PRIORITY rules nghttp2 leaves to us (frames
// on closed streams, stream ids going back, self-dependent or stream-0 PRIORITY).
//
// Streams closed during a receive() or send() are recycled by collect(), which the owner
// calls where no stream method can be on the stack (receive() calls it itself).
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/http_date.h"
#include "worker/http/stream_owner.h"
#include "worker/http/stream_pool.h"
#include "worker/http2/flood_guard.h"
#include "worker/http2/frame_checker.h"
#include "worker/http2/stream.h"
#include "worker/net/byte_queue.h"
#include "worker/net/codec_memory.h"

namespace scalws::worker::http2 {

struct SessionSettings {
  uint32_t max_concurrent_streams = 128;
  uint32_t stream_window = 256 * 1024;
  uint32_t connection_window = 1024 * 1024;
  uint32_t max_header_list = 32 * 1024;  // decoded: names + values + 32 per field
  uint32_t max_headers = 100;
  size_t output_high_water = 64 * 1024;  // send() stops once the caller's queue holds this
  FloodLimits flood;
};

using SessionOwner = StreamOwner<Stream>;

class Session {
 public:
  // `pool`: the loop's blocks, for the streams' response bodies. `memory`: what nghttp2
  // allocates from (the loop's; null: malloc).
  Session(SessionOwner& owner, const SessionSettings& settings, common::DateCache& date,
          BufferPool& pool, CodecMemory* memory = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // False when nghttp2 could not be set up (out of memory).
  bool valid() const { return session_ != nullptr; }

  // Feeds bytes from the peer. False when the connection is in error: what send() still
  // produces (a GOAWAY) should go out, then the connection closes.
  bool receive(const char* data, size_t len, uint64_t now_ms);
  // Appends ready frames to `out` until nothing is ready or `out` holds the high-water
  // mark. False on a fatal error.
  bool send(ByteQueue& out);

  // nghttp2's view: false for both once a GOAWAY went out and no stream is left.
  bool wantsRead() const;
  bool wantsWrite() const;
  // Graceful end: GOAWAY naming the last stream taken; those finish, no new ones start.
  void shutdown();
  // Immediate end: GOAWAY with `error_code` (RFC 9113 §7).
  void terminate(uint32_t error_code);

  size_t activeStreams() const { return streams_.active().size(); }
  // A response has bytes queued that the peer's flow-control window holds back.
  bool hasBlockedData() const;
  // A routed request whose body has not fully arrived.
  bool awaitsRequestBody() const;
  // DATA payload bytes serialised so far (progress for the send timeout).
  uint64_t dataBytesSent() const { return data_bytes_sent_; }
  // The peer's GOAWAY or our own error code, for logs and tests.
  uint32_t goawayErrorSent() const { return goaway_error_; }

  // The connection dies: every stream still answering gets InFlight::abort().
  void abortAll();
  // Recycles the streams closed since the last call.
  void collect();

  // For streams.
  common::DateCache& date() { return date_; }
  nghttp2_session* raw() { return session_; }
  void streamOutputChanged();
  void streamFinished(Stream& stream);
  void streamBodyTooLarge(Stream& stream) { owner_.onBodyTooLarge(stream); }
  // Request body bytes of `stream_id` taken: their window may reopen.
  void consume(int32_t stream_id, uint64_t n);

 private:
  static ssize_t onReadData(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t len,
                            uint32_t* flags, nghttp2_data_source* source, void* self);
  static ssize_t onSend(nghttp2_session*, const uint8_t* data, size_t len, int flags, void* self);
  static int onSendData(nghttp2_session*, nghttp2_frame* frame, const uint8_t* header, size_t len,
                        nghttp2_data_source* source, void* self);
  static int onBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int onHeader(nghttp2_session*, const nghttp2_frame* frame, nghttp2_rcbuf* name,
                      nghttp2_rcbuf* value, uint8_t flags, void* self);
  static int onBeginFrame(nghttp2_session*, const nghttp2_frame_hd* hd, void* self);
  static int onFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int onDataChunk(nghttp2_session*, uint8_t flags, int32_t stream_id, const uint8_t* data,
                         size_t len, void* self);
  static int onStreamClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* self);
  static int onFrameNotSent(nghttp2_session*, const nghttp2_frame* frame, int error, void* self);
  static int onInvalidFrame(nghttp2_session*, const nghttp2_frame* frame, int error, void* self);
  static int onFrameSent(nghttp2_session*, const nghttp2_frame* frame, void* self);

  friend class Stream;
  Stream* streamFor(int32_t id) const;
  Stream* acquire(int32_t id);
  int readData(Stream& stream, size_t max, uint32_t* flags);
  bool overFlood(bool allowed);
  // nghttp2_session_mem_recv and its error handling; false once the session failed.
  bool feed(const uint8_t* data, size_t len);
  void notifyWritable();

  SessionOwner& owner_;
  SessionSettings settings_;
  common::DateCache& date_;
  BufferPool& pool_;
  nghttp2_session* session_ = nullptr;
  FloodGuard flood_;
  FrameChecker checker_;
  uint64_t now_ms_ = 0;
  ByteQueue* out_ = nullptr;  // during send()
  bool in_receive_ = false;
  bool sending_ = false;
  bool resend_ = false;
  bool failed_ = false;
  uint32_t goaway_error_ = 0;
  uint64_t data_bytes_sent_ = 0;

  StreamPool<Stream> streams_;
  std::vector<Stream*> writable_;  // streams whose queue drained during send()
};

}  // namespace scalws::worker::http2
