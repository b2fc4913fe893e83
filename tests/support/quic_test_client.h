// A QUIC client for the transport's unit tests: ngtcp2's client with a GnuTLS session
// (ALPN h3, no certificate check), kept in memory. What it would send comes back from
// write() as datagrams; what the server sent goes in through read(). Enough to produce
// real Initial packets, follow a Retry and finish a handshake against an Endpoint with
// no socket in between.
#pragma once

#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace scalws::testing {

class QuicTestClient {
 public:
  // `client` and `server` are the addresses the datagrams travel between.
  // `token`: one a server gave an earlier connection (NEW_TOKEN), sent in the Initial.
  // `sni`: the server name the ClientHello asks for.
  QuicTestClient(const sockaddr_in& client, const sockaddr_in& server,
                 uint32_t version = NGTCP2_PROTO_VER_V1, std::vector<uint8_t> token = {},
                 const std::string& sni = "site.test");
  ~QuicTestClient();
  QuicTestClient(const QuicTestClient&) = delete;
  QuicTestClient& operator=(const QuicTestClient&) = delete;

  bool valid() const { return conn_ != nullptr; }
  // Every datagram ready to go now (the first call: the Initial, padded to 1200 bytes).
  std::vector<std::vector<uint8_t>> write(uint64_t now);
  // A datagram from the server; ngtcp2's return value (0 when accepted).
  int read(const std::vector<uint8_t>& datagram, uint64_t now);
  // Runs the client's timers that fell due by `now`.
  void expire(uint64_t now);

  // Raw stream I/O once the handshake is done (tests speak HTTP/3 by hand): open a
  // stream, queue bytes on it (sent by write()), and read what the server sent on each.
  int64_t openBidi();
  int64_t openUni();
  void send(int64_t stream_id, const std::string& bytes, bool fin);
  const std::string& received(int64_t stream_id) { return received_[stream_id]; }
  bool finished(int64_t stream_id) const { return fins_.count(stream_id) != 0; }
  bool handshakeCompleted() const { return handshake_completed_; }
  // The subject CN of the certificate the server presented; empty before the handshake.
  std::string peerCommonName() const;
  bool retried() const { return retried_; }
  // The NEW_TOKEN token the server sent, if any.
  const std::vector<uint8_t>& newToken() const { return new_token_; }
  ngtcp2_conn* raw() const { return conn_; }
  const sockaddr_in& address() const { return client_; }

 private:
  static ngtcp2_conn* getConn(ngtcp2_crypto_conn_ref* ref);

  sockaddr_in client_;
  sockaddr_in server_;
  ngtcp2_conn* conn_ = nullptr;
  gnutls_session_t session_ = nullptr;
  gnutls_certificate_credentials_t cred_ = nullptr;
  ngtcp2_crypto_conn_ref ref_{};
  bool handshake_completed_ = false;
  bool retried_ = false;
  std::vector<uint8_t> token_;
  std::vector<uint8_t> new_token_;
  struct Outgoing {
    std::string bytes;  // kept whole until the client goes: QUIC may resend any of it
    size_t sent = 0;
    bool fin = false;
    bool fin_sent = false;
  };
  std::map<int64_t, Outgoing> outgoing_;
  std::map<int64_t, std::string> received_;
  std::map<int64_t, bool> fins_;
};

}  // namespace scalws::testing
