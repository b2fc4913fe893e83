// The TLS side of a QUIC listener, on GnuTLS (Debian's OpenSSL 3.0 has no QUIC API): the
// listener's certificates and keys loaded once more into GnuTLS credentials, one per
// certificate, chosen by SNI through the TCP side's SniMap so both answer a name with the
// same certificate; ALPN "h3" only (RFC 9114 §3.1); session tickets sealed with a key
// derived from the site's shared secret (secrets.h), so any process resumes them.
//
// Policy (fixed, RFC 9001 §4.2: QUIC is TLS 1.3 only): AES-128-GCM, AES-256-GCM and
// ChaCha20-Poly1305 (the suites QUIC packet protection defines); groups X25519, P-256,
// P-384; 0-RTT only when the listener's quic.early_data asks for it.
//
// Built with the config snapshot, before the sandbox (the files are read here), immutable
// and shared by every loop afterwards. A connection keeps a reference to the context its
// handshake started on.
#pragma once

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <memory>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/quic/secrets.h"
#include "worker/tls/server_context.h"

namespace scalws::worker::quic {

class TlsContext;

// What a GnuTLS session of ours points at (gnutls_session_set_ptr): ngtcp2's crypto layer
// reads the conn_ref part, our client-hello hook the context.
struct SessionRef {
  ngtcp2_crypto_conn_ref conn_ref{};  // first: ngtcp2 casts the pointer to this
  const TlsContext* context = nullptr;
};

class TlsContext {
 public:
  // `tcp` is the same listener's OpenSSL context: its SNI map picks the certificate here.
  static common::Result<std::shared_ptr<const TlsContext>> build(
      const common::config::ListenConfig& listen, std::shared_ptr<const tls::ServerContext> tcp);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A server session set up for QUIC and pointing at `ref` (which must outlive it); null
  // when GnuTLS refuses (out of memory).
  gnutls_session_t newSession(SessionRef& ref) const;

  const QuicSecrets& secrets() const { return secrets_; }
  bool earlyData() const { return early_data_; }
  size_t certificateCount() const { return credentials_.size(); }

 private:
  TlsContext() = default;
  static int onClientHello(gnutls_session_t session);

  std::shared_ptr<const tls::ServerContext> tcp_;
  std::vector<gnutls_certificate_credentials_t> credentials_;  // in allCertificates() order
  gnutls_priority_t priority_ = nullptr;
  gnutls_anti_replay_t anti_replay_ = nullptr;
  QuicSecrets secrets_;
  gnutls_datum_t ticket_key_{};  // points into secrets_.ticket; size 0: no tickets
  bool early_data_ = false;
};

}  // namespace scalws::worker::quic
