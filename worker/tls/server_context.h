// The TLS side of one listener (keys are read before it): an SSL_CTX
// per certificate, so the SNI callback can switch the whole context, plus what every
// handshake on the listener shares — ALPN (h2 and http/1.1, server preference), session
// tickets from a TicketKeyRing, a per-process session cache, OCSP responses to staple.
//
// Policy (fixed, the same for every listener): TLS 1.2 and 1.3 only; for 1.2 only ECDHE
// with AEAD ciphers (AES-GCM, ChaCha20-Poly1305) in the server's order; no compression,
// no renegotiation, no 0-RTT.
//
// Built with the config snapshot — in the supervising parent, before fork, so workers
// inherit it — and immutable afterwards. Shared by every loop and thread (OpenSSL's
// SSL_CTX is safe for concurrent SSL_new; the session cache takes its own lock). A reload
// builds a new ServerContext; each TlsTransport holds a reference to the one it started
// with, since OpenSSL calls back into it during that connection's handshake.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/tls/sni_map.h"
#include "worker/tls/ticket_keys.h"

namespace scalws::worker::tls {

class ServerContext {
 public:
  // Loads every certificate, key and OCSP file of `listen.tls`. An error names the file,
  // the config location and OpenSSL's reason.
  static common::Result<std::shared_ptr<const ServerContext>> build(
      const common::config::ListenConfig& listen);
  ~ServerContext();
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  // A server-side SSL on the default certificate's context; null when out of memory.
  SSL* newSsl() const;

  size_t certificateCount() const { return certs_.size(); }
  // The SNI names certificate `i` answers (from the config, else from the certificate).
  const std::vector<std::string>& namesOf(size_t i) const { return certs_[i]->names; }
  const SniMap& sni() const { return sni_; }
  bool offersH2() const { return offer_h2_; }
  const TicketKeyRing* ticketKeys() const { return tickets_.get(); }

 private:
  struct Certificate {
    SSL_CTX* ctx = nullptr;
    std::string ocsp_der;  // empty: nothing to staple
    std::vector<std::string> names;
  };

  ServerContext() = default;
  common::Status addCertificate(const common::config::TlsCertificateConfig& config,
                                const common::config::TlsConfig& tls, const std::string& sid_ctx);
  void configure(SSL_CTX* ctx, const common::config::TlsConfig& tls,
                 const std::string& sid_ctx) const;

  static int onServerName(SSL* ssl, int* alert, void* arg);
  static int onAlpn(SSL* ssl, const unsigned char** out, unsigned char* out_len,
                    const unsigned char* in, unsigned int in_len, void* arg);
  static int onTicketKey(SSL* ssl, unsigned char* name, unsigned char* iv, EVP_CIPHER_CTX* cipher,
                         EVP_MAC_CTX* mac, int encrypt);
  static int onOcspStatus(SSL* ssl, void* arg);

  std::vector<std::unique_ptr<Certificate>> certs_;
  SniMap sni_;
  bool offer_h2_ = true;
  std::unique_ptr<TicketKeyRing> tickets_;
};

}  // namespace scalws::worker::tls
