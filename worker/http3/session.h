// The HTTP/3 codec of a server connection: nghttp3's server connection plus our request
// streams, on top of a quic::Connection it is the Application of. It never touches a
// socket: QUIC hands it stream bytes and asks it for the next stream data to send; the
// SessionOwner hears when a request is ready, a response finished or a stream went away.
//
// Settings sent (RFC 9114 §7.2.4.1, RFC 9204 §5): SETTINGS_MAX_FIELD_SECTION_SIZE of the
// server's max_header_size, a 4 KiB QPACK dynamic table and at most 100 blocked streams.
// nghttp3 checks frames and messages (RFC 9114 §4.1.2: a malformed request resets its
// stream with H3_MESSAGE_ERROR; a connection-level error closes the connection).
//
// Defences: a decoded header section past max_header_size gets 431, past 4× it the stream
// is reset; requests the peer resets or asks us to stop (RESET_STREAM, STOP_SENDING) are
// rate limited as HTTP/2's rapid reset is (http2/flood_guard.h), past which the
// connection closes with H3_EXCESSIVE_LOAD; stream count and flow-control windows are
// QUIC's (listen.quic).
//
// Streams closed while QUIC or nghttp3 is on the stack are recycled by collect(), which
// the owner calls where no stream method can be running.
#pragma once

#include <nghttp3/nghttp3.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/http_date.h"
#include "worker/http/stream_owner.h"
#include "worker/http/stream_pool.h"
#include "worker/http2/flood_guard.h"
#include "worker/http3/stream.h"
#include "worker/net/buffer_pool.h"
#include "worker/net/codec_memory.h"
#include "worker/quic/application.h"
#include "worker/quic/connection.h"

namespace scalws::worker::http3 {

struct SessionSettings {
  uint64_t max_field_section = 32 * 1024;  // names + values + 32 per field
  uint32_t max_headers = 100;
  size_t qpack_dtable = 4096;
  size_t qpack_blocked_streams = 100;
  uint32_t reset_burst = 200;
  uint32_t resets_per_second = 50;
};

using SessionOwner = StreamOwner<Stream>;

class Session final : public quic::Application {
 public:
  // `memory`: what nghttp3 allocates from (the loop's; null: malloc).
  Session(SessionOwner& owner, quic::Connection& transport, const SessionSettings& settings,
          common::DateCache& date, BufferPool& buffers, CodecMemory* memory = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Milliseconds for the flood limits; the owner sets it before feeding the connection.
  void setNow(uint64_t now_ms) { now_ms_ = now_ms; }
  // Graceful end (RFC 9114 §5.2): GOAWAY; requests already taken finish, no new ones start.
  void shutdown();
  bool goingAway() const { return going_away_; }
  bool started() const { return conn_ != nullptr; }
  size_t activeStreams() const { return streams_.active().size(); }
  // The connection dies: every stream still answering gets InFlight::abort(), and the
  // losses of streams still open are counted.
  void abortAll();
  // Recycles the streams closed since the last call.
  void collect();

  // For streams.
  common::DateCache& date() { return date_; }
  BufferPool& buffers() { return buffers_; }
  nghttp3_conn* raw() { return conn_; }
  const SessionSettings& settings() const { return settings_; }
  quic::Connection& transport() { return transport_; }
  void streamOutputChanged();
  void streamFinished(Stream& stream);
  void streamBodyTooLarge(Stream& stream) { owner_.onBodyTooLarge(stream); }
  // How nghttp3 reads a response body: from the stream's BodyBuffer.
  static const nghttp3_data_reader* bodyReader();

  // quic::Application
  bool onSendKeysReady() noexcept override;
  void onHandshakeCompleted() noexcept override {}
  bool onStreamData(int64_t stream_id, const uint8_t* data, size_t len, bool fin,
                    bool early) noexcept override;
  bool onStreamAcked(int64_t stream_id, uint64_t len) noexcept override;
  bool onStreamClosed(int64_t stream_id, uint64_t app_error_code) noexcept override;
  bool onStreamReset(int64_t stream_id, uint64_t app_error_code) noexcept override;
  bool onStreamStopSending(int64_t stream_id, uint64_t app_error_code) noexcept override;
  bool onStreamWritable(int64_t stream_id) noexcept override;
  void onPeerStreamLimit(uint64_t max_bidi_streams) noexcept override;
  bool nextOutgoing(Outgoing& out) noexcept override;
  bool onOutgoingWritten(int64_t stream_id, size_t bytes) noexcept override;
  void onOutgoingBlocked(int64_t stream_id) noexcept override;
  void onOutgoingShut(int64_t stream_id) noexcept override;

 private:
  friend class Stream;
  struct Callbacks;

  Stream* acquire(int64_t id);
  void onHttpStreamClose(Stream& stream);
  bool fail(int nghttp3_error);
  bool overFlood();
  void notifyWritable(Stream& stream);

  SessionOwner& owner_;
  quic::Connection& transport_;
  SessionSettings settings_;
  common::DateCache& date_;
  BufferPool& buffers_;
  nghttp3_mem memory_{};  // nghttp3 keeps a pointer to it
  nghttp3_conn* conn_ = nullptr;
  http2::TokenBucket resets_;
  uint64_t now_ms_ = 0;
  bool going_away_ = false;
  bool in_early_data_ = false;  // the bytes being read came in 0-RTT

  StreamPool<Stream> streams_;
};

}  // namespace scalws::worker::http3
