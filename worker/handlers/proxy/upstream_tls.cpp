#include "worker/handlers/proxy/upstream_tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <cerrno>

#include "worker/tls/openssl_errors.h"

namespace scalws::worker::proxy {
namespace {

bool isIpLiteral(const std::string& name) {
  unsigned char bytes[16];
  return inet_pton(AF_INET, name.c_str(), bytes) == 1 ||
         inet_pton(AF_INET6, name.c_str(), bytes) == 1;
}

}  // namespace

common::Result<std::shared_ptr<const UpstreamTlsContext>> UpstreamTlsContext::build(
    const common::config::UpstreamTlsConfig& config, const std::string& upstream_name) {
  std::shared_ptr<UpstreamTlsContext> c(new UpstreamTlsContext());
  const std::string what = "upstream." + upstream_name + ".tls: ";
  ERR_clear_error();
  c->ctx_ = SSL_CTX_new(TLS_client_method());
  if (c->ctx_ == nullptr) return common::internalError(what + tls::takeOpensslErrors());
  SSL_CTX_set_min_proto_version(c->ctx_, TLS1_2_VERSION);
  SSL_CTX_set_mode(c->ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_session_cache_mode(c->ctx_, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
  c->verify_ = config.verify;
  c->sni_ = config.sni;
  if (config.verify) {
    // Loaded now: once sandboxed, the worker cannot read the certificate directories.
    const std::string ca = config.ca.empty() ? X509_get_default_cert_file() : config.ca;
    if (SSL_CTX_load_verify_locations(c->ctx_, ca.c_str(), nullptr) != 1) {
      return common::invalidArgument(what + "cannot load the CA bundle \"" + ca +
                                     "\": " + tls::takeOpensslErrors());
    }
    SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_NONE, nullptr);
  }
  return std::shared_ptr<const UpstreamTlsContext>(std::move(c));
}

UpstreamTlsContext::~UpstreamTlsContext() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

ClientTlsTransport::ClientTlsTransport(int fd, const UpstreamTlsContext& context,
                                       const std::string& name, SSL_SESSION* session)
    : fd_(fd) {
  ssl_ = SSL_new(context.raw());
  if (ssl_ == nullptr) return;
  SSL_set_fd(ssl_, fd);
  SSL_set_connect_state(ssl_);
  bool ip = isIpLiteral(name);
  // RFC 6066 §3: SNI carries host names only, never literal addresses.
  if (!ip && !name.empty()) SSL_set_tlsext_host_name(ssl_, name.c_str());
  if (context.verify() && !name.empty()) {
    if (ip) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str());
    } else {
      SSL_set_hostflags(ssl_, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      SSL_set1_host(ssl_, name.c_str());
    }
  }
  if (session != nullptr) SSL_set_session(ssl_, session);
}

ClientTlsTransport::~ClientTlsTransport() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

ClientTlsTransport::Handshake ClientTlsTransport::handshake() noexcept {
  ERR_clear_error();
  int rc = SSL_do_handshake(ssl_);
  if (rc == 1) return Handshake::kDone;
  int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ) return Handshake::kWantRead;
  if (err == SSL_ERROR_WANT_WRITE) return Handshake::kWantWrite;
  long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK) {
    failure_ =
        std::string("certificate verification failed: ") + X509_verify_cert_error_string(verify);
  } else if (err == SSL_ERROR_SYSCALL) {
    failure_ = errno != 0 ? strerror(errno) : "connection closed during the handshake";
  } else {
    failure_ = tls::takeOpensslErrors();
  }
  return Handshake::kFailed;
}

SSL_SESSION* ClientTlsTransport::takeSession() const {
  return SSL_get1_session(ssl_);
}

ssize_t ClientTlsTransport::read(char* buf, size_t len) noexcept {
  ERR_clear_error();
  size_t n = 0;
  if (SSL_read_ex(ssl_, buf, len, &n) == 1) return static_cast<ssize_t>(n);
  int err = SSL_get_error(ssl_, 0);
  switch (err) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      return 0;  // close_notify
    case SSL_ERROR_SYSCALL:
      // OpenSSL 3 reports an EOF without close_notify as SSL_R_UNEXPECTED_EOF_WHILE_READING
      // (SSL_ERROR_SSL); either way the upstream is gone.
      if (errno == 0) return 0;
      return -1;
    default:
      if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return 0;
      errno = EIO;
      return -1;
  }
}

ssize_t ClientTlsTransport::writev(const iovec* iov, int count) noexcept {
  size_t total = 0;
  for (int i = 0; i < count; ++i) {
    if (iov[i].iov_len == 0) continue;
    ERR_clear_error();
    size_t n = 0;
    if (SSL_write_ex(ssl_, iov[i].iov_base, iov[i].iov_len, &n) == 1) {
      total += n;
      if (n < iov[i].iov_len) break;
      continue;
    }
    int err = SSL_get_error(ssl_, 0);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (total > 0) break;
      errno = EAGAIN;
      return -1;
    }
    if (total > 0) break;
    if (err != SSL_ERROR_SYSCALL || errno == 0) errno = EPIPE;
    return -1;
  }
  return static_cast<ssize_t>(total);
}

void ClientTlsTransport::shutdownWrite() noexcept {
  ERR_clear_error();
  SSL_shutdown(ssl_);
}

}  // namespace scalws::worker::proxy
