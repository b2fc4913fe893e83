// One QUIC connection on the server side: ngtcp2's state machine plus its GnuTLS session,
// driven with datagrams and a clock, never touching a socket. The endpoint hands it the
// datagrams whose connection ID is one of its own; write() produces packets through a
// DatagramSender (GSO trains of equal-sized packets where the path allows); the owner
// calls handleExpiry() at expiry(). Stream events go to the Application above it.
//
// States (one enum, transitions in enterState()):
//   kHandshake → kOpen           handshake completed
//   kHandshake|kOpen → kClosing  an error, or close(): CONNECTION_CLOSE is sent (again for
//                                late packets, at a falling rate) until closeDeadline()
//   kHandshake|kOpen → kDraining the peer closed (RFC 9000 §10.2.2): silent until the deadline
//   any → kGone                  idle timeout, handshake timeout, a dropped connection, or
//                                the closing/draining period over: the owner frees it
// Closing and draining last three PTOs (RFC 9000 §10.2).
#pragma once

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "worker/quic/application.h"
#include "worker/quic/datagram.h"
#include "worker/quic/tls_context.h"

namespace scalws::worker::quic {

class Connection;

// The listener's limits, as ngtcp2 wants them (durations in nanoseconds).
struct ConnectionSettings {
  uint32_t max_streams = 100;
  uint64_t stream_window = 256 * 1024;
  uint64_t connection_window = 1024 * 1024;
  uint64_t idle_timeout = 30 * NGTCP2_SECONDS;
  uint64_t handshake_timeout = 10 * NGTCP2_SECONDS;
  // HTTP/3's unidirectional streams: control and two QPACK streams, with room for a
  // client's reserved "grease" streams (RFC 9114 §6.2.3).
  uint32_t max_uni_streams = 8;
  uint64_t uni_stream_window = 64 * 1024;
  size_t max_udp_payload = 2048;  // what our receive buffers hold
};

// Where connection IDs come from and go back to: the endpoint, which routes by them.
class ConnectionIdRegistry {
 public:
  // A new ID for `connection` (steered to this socket) and its stateless reset token
  // (NGTCP2_STATELESS_RESET_TOKENLEN bytes); false when none could be made.
  virtual bool issue(Connection& connection, ngtcp2_cid& cid, uint8_t* reset_token) noexcept = 0;
  virtual void retire(const ngtcp2_cid& cid) noexcept = 0;

 protected:
  ~ConnectionIdRegistry() = default;
};

struct ConnectionStats {
  uint64_t migrations = 0;    // moves of the connection to a new client address
  uint64_t lost_packets = 0;  // packets with stream data declared lost (counted per stream,
                              // when it closes or at noteStreamLosses())
  bool handshake_completed = false;
  bool early_data = false;  // 0-RTT was accepted
};

class Connection {
 public:
  enum class State { kNew, kHandshake, kOpen, kClosing, kDraining, kGone };

  // What the endpoint knows when it accepts a client's first Initial.
  struct Start {
    const ngtcp2_pkt_hd* initial = nullptr;     // the Initial's header
    const ngtcp2_cid* original_dcid = nullptr;  // after a Retry: the client's first DCID
    bool address_validated = false;             // a valid Retry or NEW_TOKEN token came
    ngtcp2_cid scid{};                          // our first connection ID
    const uint8_t* reset_token = nullptr;       // its stateless reset token
    const Datagram* datagram = nullptr;         // path of the Initial
    uint64_t now = 0;
  };

  Connection(Application& app, ConnectionIdRegistry& ids, std::shared_ptr<const TlsContext> tls,
             const ConnectionSettings& settings);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // False when ngtcp2 or GnuTLS could not set the connection up (the endpoint drops it).
  bool start(const Start& start);

  // Feeds one datagram. Afterwards state() says what follows.
  void receive(const Datagram& datagram, uint64_t now);
  // Sends what is ready: packets while open, the CONNECTION_CLOSE once when closing.
  // `buf`/`cap` is scratch space for a batch. Returns true when it stopped with more
  // ready to send (call again soon rather than at expiry()).
  bool write(uint64_t now, DatagramSender& out, uint8_t* buf, size_t cap);
  // Timers: loss detection, ACK delay, idle and handshake timeouts, pacing; the end of the
  // closing or draining period.
  uint64_t expiry() const;
  void handleExpiry(uint64_t now);

  // Graceful end with an application error code (HTTP/3: H3_NO_ERROR): CONNECTION_CLOSE.
  void close(uint64_t app_error_code);
  // The error the connection closes with when an Application call returns false.
  void failWith(uint64_t app_error_code);

  State state() const { return state_; }
  bool isDead() const { return state_ == State::kGone; }
  const ConnectionStats& stats() const { return stats_; }
  ngtcp2_conn* raw() const { return conn_; }
  // The peer's address on the current path (for logs and policy checks).
  const ngtcp2_path* path() const;

  // For the application.
  bool openUniStream(int64_t& stream_id);
  // `n` bytes of a stream were consumed: give the peer that much more flow-control credit.
  void consumed(int64_t stream_id, size_t n);
  // A request stream is done: the peer may open one more.
  void allowAnotherStream();
  void shutdownStreamRead(int64_t stream_id, uint64_t app_error_code);
  void shutdownStreamWrite(int64_t stream_id, uint64_t app_error_code);
  // A regular token (NEW_TOKEN) so the client may skip the Retry round trip next time.
  void offerToken(const uint8_t* token, size_t len);
  // Adds the losses of a stream that will not close before the connection goes (the
  // connection ends with it open); streams that close are counted then.
  void noteStreamLosses(int64_t stream_id);

 private:
  friend struct ConnectionCallbacks;

  void enterState(State next, uint64_t now);
  void onReadError(int rv, uint64_t now);
  void notePathChange();
  void enterClosing(uint64_t now);
  void sendClosePacket(DatagramSender& out);
  bool writePackets(uint64_t now, DatagramSender& out, uint8_t* buf, size_t cap);
  uint64_t periodAfter(uint64_t now) const;

  Application& app_;
  ConnectionIdRegistry& ids_;
  std::shared_ptr<const TlsContext> tls_;
  ConnectionSettings settings_;
  State state_ = State::kNew;
  ngtcp2_conn* conn_ = nullptr;
  gnutls_session_t session_ = nullptr;
  SessionRef session_ref_;
  ngtcp2_connection_close_error last_error_{};
  ConnectionStats stats_;
  bool app_ready_ = false;   // onSendKeysReady succeeded
  uint64_t period_end_ = 0;  // closing/draining deadline
  uint64_t last_now_ = 0;    // the latest time we were given (close() has none of its own)
  // The CONNECTION_CLOSE packet and its path, kept to answer late packets while closing.
  std::vector<uint8_t> close_packet_;
  ngtcp2_path_storage close_path_{};
  SocketAddress peer_;  // the client's address on the current path
  uint32_t close_packets_seen_ = 0;
  uint32_t close_resend_at_ = 1;
};

}  // namespace scalws::worker::quic
