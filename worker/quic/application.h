// The protocol on top of a QUIC connection (HTTP/3) as the connection sees it: stream
// events in, stream data out. The connection calls these from inside ngtcp2, during
// Connection::receive(), write() or handleExpiry(); a call returning false makes the
// connection fail with the error code the application set (Connection::failWith).
#pragma once

#include <ngtcp2/ngtcp2.h>

#include <cstddef>
#include <cstdint>

namespace scalws::worker::quic {

class Application {
 public:
  // Up to 16 slices of one stream, as ngtcp2 wants them for a packet.
  struct Outgoing {
    static constexpr size_t kMaxVecs = 16;
    int64_t stream_id = -1;  // -1: no stream data, only what QUIC itself needs to send
    bool fin = false;
    size_t count = 0;
    ngtcp2_vec vecs[kMaxVecs];
  };

  // 1-RTT keys to send with are in place (the handshake may still be finishing): open the
  // application's own streams (HTTP/3: control and QPACK streams).
  virtual bool onSendKeysReady() noexcept = 0;
  virtual void onHandshakeCompleted() noexcept = 0;

  // Bytes of a stream the peer opened; `early` when they came in 0-RTT packets.
  virtual bool onStreamData(int64_t stream_id, const uint8_t* data, size_t len, bool fin,
                            bool early) noexcept = 0;
  // The peer acknowledged `len` more bytes of what we sent on the stream (they may be freed).
  virtual bool onStreamAcked(int64_t stream_id, uint64_t len) noexcept = 0;
  // The stream is gone at the QUIC level (both directions done or reset).
  virtual bool onStreamClosed(int64_t stream_id, uint64_t app_error_code) noexcept = 0;
  // The peer reset its sending side (RESET_STREAM) / asked us to stop ours (STOP_SENDING).
  virtual bool onStreamReset(int64_t stream_id, uint64_t app_error_code) noexcept = 0;
  virtual bool onStreamStopSending(int64_t stream_id, uint64_t app_error_code) noexcept = 0;
  // The peer's flow-control window of a stream grew: data held back may go.
  virtual bool onStreamWritable(int64_t stream_id) noexcept = 0;
  // The peer may now open this many bidirectional streams in all.
  virtual void onPeerStreamLimit(uint64_t max_bidi_streams) noexcept = 0;

  // The next stream data to send; false: a fatal error.
  virtual bool nextOutgoing(Outgoing& out) noexcept = 0;
  // `bytes` of the stream data last handed out went into a packet.
  virtual bool onOutgoingWritten(int64_t stream_id, size_t bytes) noexcept = 0;
  // The stream's flow-control window is full: ask again after onStreamWritable.
  virtual void onOutgoingBlocked(int64_t stream_id) noexcept = 0;
  // The stream cannot be written any more (reset): drop what is queued for it.
  virtual void onOutgoingShut(int64_t stream_id) noexcept = 0;

 protected:
  ~Application() = default;
};

}  // namespace scalws::worker::quic
