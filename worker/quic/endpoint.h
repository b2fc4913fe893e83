// The QUIC side of one UDP socket of a listener, as a dispatcher that never touches the
// socket: datagrams in (onDatagram), datagrams out (the DatagramSender it was given).
//
// For every datagram it reads the connection IDs (RFC 9000 §17) and
//   - hands it to the connection that owns its destination ID (our IDs and, until the
//     client switches, the ID the client chose for its first Initial);
//   - for an Initial of a new connection: validates a token if one came (Retry or
//     NEW_TOKEN), sends a Retry first when the listener asks for address validation
//     (always, or past `retry_above` handshakes in progress: RFC 9000 §8.1.2), refuses
//     with CONNECTION_REFUSED when the loop takes no more connections, else creates the
//     connection through the ConnectionFactory;
//   - answers an unknown version with Version Negotiation (§6), an unknown short-header
//     destination with a Stateless Reset (§10.3: smaller than what triggered it, rate
//     limited), and drops everything else.
// It issues and retires the connections' IDs (ConnectionIdRegistry) so that every ID it
// routes by is one it made, carrying this socket's steering id (connection_id.h).
//
// Loop thread only. A connection is unregistered by remove() before it is freed.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "worker/http2/flood_guard.h"
#include "worker/quic/connection.h"
#include "worker/quic/connection_id.h"
#include "worker/quic/datagram.h"
#include "worker/quic/tls_context.h"
#include "worker/quic/token_issuer.h"

namespace scalws::worker::quic {

struct EndpointSettings {
  uint16_t steering_id = kNoSteering;
  // On an address several instances share, the front passes every datagram on, and only
  // an Initial it passed (flagged by the caller) may start a connection; the IDs issued
  // carry `route` instead of a steering id (common/net/quic_route.h).
  bool front_routed = false;
  common::net::QuicRoute route{};
  bool retry_always = false;
  uint32_t retry_above = 64;  // handshakes in progress past which new clients get a Retry
  ConnectionSettings connection;
};

struct EndpointCounters {
  uint64_t handshakes = 0;  // connections started (their first Initial accepted)
  uint64_t handshakes_completed = 0;
  uint64_t retries = 0;     // Retry packets sent
  uint64_t bad_tokens = 0;  // Initials refused for an invalid Retry token
  uint64_t refused = 0;     // Initials refused: no room for another connection
  uint64_t resets = 0;      // stateless resets sent
  uint64_t version_negotiations = 0;
  uint64_t dropped = 0;  // datagrams no one could use
};

// What the endpoint routes datagrams to: the object that owns a Connection and drives it.
class EndpointConnection {
 public:
  virtual Connection& transport() noexcept = 0;
  // A datagram whose destination ID is this connection's. Feed it; write later.
  virtual void onDatagram(const Datagram& datagram, uint64_t now) noexcept = 0;
  // Every datagram of a batch was delivered: write what they called for, re-arm timers.
  virtual void afterDatagrams(uint64_t now) noexcept = 0;

  bool endpoint_queued = false;  // the endpoint's bookkeeping: in this batch's list

 protected:
  ~EndpointConnection() = default;
};

class ConnectionFactory {
 public:
  // Whether a new connection may start now (not shutting down, below max_connections).
  virtual bool admitsConnection() noexcept = 0;
  // Builds the connection for a client's first Initial and starts its transport with
  // `start`; null when it could not (then nothing is left behind).
  virtual EndpointConnection* createConnection(const Connection::Start& start) noexcept = 0;

 protected:
  ~ConnectionFactory() = default;
};

class Endpoint final : public ConnectionIdRegistry {
 public:
  Endpoint(const EndpointSettings& settings, std::shared_ptr<const TlsContext> tls,
           DatagramSender& sender, ConnectionFactory& factory);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // `now`: monotonic nanoseconds (QUIC timers); `unix_ns`: wall clock (tokens, which
  // other processes check).
  // `from_front`: the shared address's front passed it on (see front_routed).
  void onDatagram(const Datagram& datagram, uint64_t now, uint64_t unix_ns,
                  bool from_front = false);
  // Ends a batch of onDatagram() calls: each connection that got datagrams writes once.
  void endBatch(uint64_t now);

  // The connection is going away: forget every ID that routes to it.
  void remove(EndpointConnection& connection);
  // The connection finished its handshake: it leaves the Retry-under-load count, and its
  // client gets a NEW_TOKEN token for its next connection (RFC 9000 §8.1.3).
  void onHandshakeCompleted(EndpointConnection& connection);

  // ConnectionIdRegistry
  bool issue(Connection& connection, ngtcp2_cid& cid, uint8_t* reset_token) noexcept override;
  void retire(const ngtcp2_cid& cid) noexcept override;

  // New settings for connections to come (a reload); connections keep theirs.
  void reconfigure(const EndpointSettings& settings) { settings_ = settings; }
  const EndpointSettings& settings() const { return settings_; }
  const TokenIssuer& tokens() const { return tokens_; }
  const EndpointCounters& counters() const { return counters_; }
  size_t connectionCount() const { return entries_.size(); }
  size_t handshakesInProgress() const { return handshaking_; }
  // Scratch space for a connection's packets (the largest GSO train and then some).
  uint8_t* sendBuffer() { return send_buffer_.get(); }
  static constexpr size_t kSendBuffer = 64 * 1024;

 private:
  struct Entry {
    EndpointConnection* connection = nullptr;
    std::vector<CidKey> ids;
    bool handshaking = true;
  };

  void acceptInitial(const Datagram& d, uint64_t now, uint64_t unix_ns);
  void deliver(EndpointConnection& connection, const Datagram& d, uint64_t now);
  void sendRetry(const ngtcp2_pkt_hd& hd, const Datagram& d, uint64_t unix_ns);
  void sendRefusal(const ngtcp2_pkt_hd& hd, const Datagram& d, uint64_t error_code, uint64_t now);
  void sendVersionNegotiation(const ngtcp2_version_cid& vc, const Datagram& d);
  void sendStatelessReset(const ngtcp2_version_cid& vc, const Datagram& d, uint64_t now);
  void sendBytes(const Datagram& d, const uint8_t* data, size_t len);
  bool newId(ngtcp2_cid& cid) const;

  EndpointSettings settings_;
  std::shared_ptr<const TlsContext> tls_;
  DatagramSender& sender_;
  ConnectionFactory& factory_;
  TokenIssuer tokens_;
  std::unordered_map<CidKey, EndpointConnection*, CidKeyHash> routes_;
  std::unordered_map<const Connection*, Entry> entries_;
  std::vector<EndpointConnection*> batch_;
  size_t handshaking_ = 0;
  uint64_t unix_now_ = 0;  // of the latest datagram
  // Stateless resets and refusals cost us a packet each for a packet of the peer's.
  http2::TokenBucket reply_budget_{200, 100};
  EndpointCounters counters_;
  std::unique_ptr<uint8_t[]> send_buffer_;
};

}  // namespace scalws::worker::quic
