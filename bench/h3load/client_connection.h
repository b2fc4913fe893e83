// One HTTP/3 client connection of the load tool: a connected UDP socket, ngtcp2's client
// with a GnuTLS session (no certificate check: the bench's certificate is self-signed),
// and nghttp3 issuing GET requests. The tool's loop calls onReadable() when the socket
// has datagrams and onTimer() at expiry(); the connection reports each finished request.
#pragma once

#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace scalws::bench {

struct Target {
  sockaddr_storage address{};
  socklen_t address_len = 0;
  std::string authority;  // host:port as the :authority
  std::string sni;
  std::vector<std::string> paths;
  // Receive with UDP_GRO: a train of datagrams in one read, as QUIC clients that care about
  // their own CPU do (on loopback it also spares the server the split into datagrams).
  bool gro = true;
};

struct RequestResult {
  int status = 0;  // 0: no response (reset, connection lost)
  uint64_t bytes = 0;
  uint64_t latency_ns = 0;
};

class ClientConnection {
 public:
  using OnDone = std::function<void(const RequestResult&)>;
  // `want` is asked for each new request: false when the run has issued enough.
  using WantMore = std::function<bool()>;

  ClientConnection(const Target& target, size_t streams, bool reset_after_send, OnDone on_done,
                   WantMore want_more);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  bool start(uint64_t now);
  void onReadable(uint64_t now);
  void onTimer(uint64_t now);
  uint64_t expiry() const;
  // Ends the connection with CONNECTION_CLOSE(NO_ERROR), so the server frees it now
  // rather than at its idle timeout.
  void close(uint64_t now);
  int fd() const { return fd_; }
  bool closed() const { return closed_; }
  bool handshakeCompleted() const { return handshake_completed_; }
  size_t inFlight() const { return requests_.size(); }
  std::string closeReason() const { return close_reason_; }

 private:
  struct Request {
    uint64_t started_ns = 0;
    int status = 0;
    uint64_t bytes = 0;
  };

  static ngtcp2_conn* getConn(ngtcp2_crypto_conn_ref* ref);
  bool setupHttp();
  void fillRequests(uint64_t now);
  void write(uint64_t now);
  void sendBatch(const uint8_t* data, size_t len, size_t segment);
  // One datagram to ngtcp2; false when the connection failed.
  bool readPacket(const uint8_t* data, size_t len, uint64_t now);
  void finishRequest(int64_t stream_id, bool complete);
  void fail(const std::string& why);

  friend struct ClientCallbacks;

  Target target_;
  size_t streams_;
  bool reset_after_send_;
  OnDone on_done_;
  WantMore want_more_;
  int fd_ = -1;
  ngtcp2_conn* conn_ = nullptr;
  nghttp3_conn* http_ = nullptr;
  gnutls_session_t session_ = nullptr;
  gnutls_certificate_credentials_t cred_ = nullptr;
  ngtcp2_crypto_conn_ref ref_{};
  sockaddr_storage local_{};
  socklen_t local_len_ = 0;
  bool gro_ = false;
  bool handshake_completed_ = false;
  bool closed_ = false;
  std::string close_reason_;
  size_t next_path_ = 0;
  uint64_t now_ = 0;
  std::unordered_map<int64_t, Request> requests_;
  std::vector<int64_t> to_reset_;
  std::vector<uint8_t> tx_;
};

}  // namespace scalws::bench
