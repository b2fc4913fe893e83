// HTTPS to upstream servers: the client context of one [upstream] (built with the config
// snapshot, before the sandbox, so the CA bundle is read while it still can be) and the
// Transport one connection speaks TLS through.
//
// Verification (upstream.tls.verify, default on): the chain must lead to the CA bundle
// (upstream.tls.ca, else the system's bundle, read at build) and the certificate must name
// the server: the `sni` name when set, else the server's host name, else its IP address
// (RFC 6125, RFC 9110 §4.3.4). TLS 1.2 or 1.3 only. Sessions are resumed per server.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "common/config/proxy_config.h"
#include "common/status.h"
#include "worker/net/transport.h"

namespace scalws::worker::proxy {

class UpstreamTlsContext {
 public:
  static common::Result<std::shared_ptr<const UpstreamTlsContext>> build(
      const common::config::UpstreamTlsConfig& config, const std::string& upstream_name);
  ~UpstreamTlsContext();
  UpstreamTlsContext(const UpstreamTlsContext&) = delete;
  UpstreamTlsContext& operator=(const UpstreamTlsContext&) = delete;

  SSL_CTX* raw() const { return ctx_; }
  bool verify() const { return verify_; }
  const std::string& sni() const { return sni_; }

 private:
  UpstreamTlsContext() = default;
  SSL_CTX* ctx_ = nullptr;
  bool verify_ = true;
  std::string sni_;
};

// TLS over a connected non-blocking socket. The fd stays the caller's.
class ClientTlsTransport final : public Transport {
 public:
  enum class Handshake { kDone, kWantRead, kWantWrite, kFailed };

  // `name`: the host name to send (SNI) and verify, or an IP literal to verify; `session`:
  // one to resume (not owned; may be null).
  ClientTlsTransport(int fd, const UpstreamTlsContext& context, const std::string& name,
                     SSL_SESSION* session);
  ~ClientTlsTransport() override;
  ClientTlsTransport(const ClientTlsTransport&) = delete;
  ClientTlsTransport& operator=(const ClientTlsTransport&) = delete;

  bool valid() const { return ssl_ != nullptr; }
  Handshake handshake() noexcept;
  // Why the handshake failed (certificate verification or OpenSSL's reason).
  const std::string& failure() const { return failure_; }
  // The session to resume next time (a new reference; the caller frees it), or null.
  SSL_SESSION* takeSession() const;

  ssize_t read(char* buf, size_t len) noexcept override;
  ssize_t writev(const iovec* iov, int count) noexcept override;
  ssize_t sendFile(int, uint64_t, size_t) noexcept override {
    errno = EOPNOTSUPP;
    return -1;
  }
  bool zeroCopyFiles() const noexcept override { return false; }
  int fd() const noexcept override { return fd_; }
  bool hasBufferedInput() const noexcept override { return SSL_pending(ssl_) > 0; }
  void shutdownWrite() noexcept override;

 private:
  int fd_;
  SSL* ssl_ = nullptr;
  std::string failure_;
};

}  // namespace scalws::worker::proxy
