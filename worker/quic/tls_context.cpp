#include "worker/quic/tls_context.h"

#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <cstring>

#include "common/log.h"
#include "worker/tls/ticket_keys.h"

namespace scalws::worker::quic {
namespace {

using common::config::TlsCertificateConfig;

constexpr const char* kPriority =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:%DISABLE_TLS13_COMPAT_MODE";
constexpr unsigned char kH3[] = {'h', '3'};
// RFC 9001 §4.6.1: a server that accepts 0-RTT says so with max_early_data_size 0xffffffff.
constexpr uint32_t kQuicEarlyData = 0xffffffffu;

std::string where(const TlsCertificateConfig& c, const char* key) {
  return c.where.toString() + ": listen.tls." + key + ": ";
}

// 0-RTT is only ever accepted for methods that are safe to replay (the HTTP/3 layer
// answers anything else 425), so GnuTLS's own window check is all the replay protection
// asked of it: every entry is accepted as new.
int acceptEarlyData(void*, time_t, const gnutls_datum_t*, const gnutls_datum_t*) {
  return 0;
}

}  // namespace

common::Result<std::shared_ptr<const TlsContext>> TlsContext::build(
    const common::config::ListenConfig& listen, std::shared_ptr<const tls::ServerContext> tcp) {
  const common::config::TlsConfig& tls = *listen.tls;
  std::shared_ptr<TlsContext> context(new TlsContext());
  context->tcp_ = std::move(tcp);
  context->early_data_ = listen.quic.early_data;

  std::string secret;
  if (!tls.ticket_key_file.empty()) {
    common::Result<std::string> file = tls::readTicketSecretFile(tls.ticket_key_file);
    if (!file.ok()) {
      return common::invalidArgument(tls.where.toString() +
                                     ": listen.tls.ticket_key_file: " + file.status().message());
    }
    secret = std::move(file).value();
  } else {
    secret = tls::processTicketSecret();
  }
  common::Result<QuicSecrets> secrets = deriveQuicSecrets(secret, listen.address);
  if (!secrets.ok()) return secrets.status();
  context->secrets_ = *secrets;
  if (tls.session_tickets) {
    context->ticket_key_.data = context->secrets_.ticket.data();
    context->ticket_key_.size = static_cast<unsigned>(context->secrets_.ticket.size());
  }

  const char* error_at = nullptr;
  if (int rv = gnutls_priority_init(&context->priority_, kPriority, &error_at); rv != 0) {
    return common::internalError(std::string("GnuTLS priority string: ") + gnutls_strerror(rv));
  }
  if (context->early_data_) {
    if (gnutls_anti_replay_init(&context->anti_replay_) != 0) {
      return common::internalError("gnutls_anti_replay_init failed");
    }
    gnutls_anti_replay_set_add_function(context->anti_replay_, &acceptEarlyData);
  }

  std::string errors;
  for (const TlsCertificateConfig& cert : tls.allCertificates()) {
    gnutls_certificate_credentials_t cred = nullptr;
    if (gnutls_certificate_allocate_credentials(&cred) != 0) {
      return common::internalError("gnutls_certificate_allocate_credentials failed");
    }
    context->credentials_.push_back(cred);
    int rv = gnutls_certificate_set_x509_key_file2(cred, cert.cert.c_str(), cert.key.c_str(),
                                                   GNUTLS_X509_FMT_PEM, nullptr, 0);
    if (rv < 0) {
      if (!errors.empty()) errors += '\n';
      errors += where(cert, "cert") + "GnuTLS cannot load " + cert.cert + " with " + cert.key +
                " for HTTP/3: " + gnutls_strerror(rv);
      continue;
    }
    if (!cert.ocsp.empty()) {
      rv = gnutls_certificate_set_ocsp_status_request_file2(cred, cert.ocsp.c_str(), 0,
                                                            GNUTLS_X509_FMT_DER);
      if (rv < 0) {
        if (!errors.empty()) errors += '\n';
        errors +=
            where(cert, "ocsp") + "GnuTLS cannot load " + cert.ocsp + ": " + gnutls_strerror(rv);
      }
    }
  }
  if (!errors.empty()) return common::invalidArgument(errors);
  return std::shared_ptr<const TlsContext>(std::move(context));
}

TlsContext::~TlsContext() {
  for (gnutls_certificate_credentials_t cred : credentials_) {
    gnutls_certificate_free_credentials(cred);
  }
  if (priority_ != nullptr) gnutls_priority_deinit(priority_);
  if (anti_replay_ != nullptr) gnutls_anti_replay_deinit(anti_replay_);
}

gnutls_session_t TlsContext::newSession(SessionRef& ref) const {
  ref.context = this;
  unsigned flags = GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET | GNUTLS_NO_END_OF_EARLY_DATA;
  if (early_data_) flags |= GNUTLS_ENABLE_EARLY_DATA;
  gnutls_session_t session = nullptr;
  if (gnutls_init(&session, flags) != 0) return nullptr;
  bool ok = gnutls_priority_set(session, priority_) == 0 &&
            gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, credentials_.front()) == 0 &&
            ngtcp2_crypto_gnutls_configure_server_session(session) == 0;
  if (ok && ticket_key_.size != 0) {
    ok = gnutls_session_ticket_enable_server(session, &ticket_key_) == 0;
  }
  if (!ok) {
    gnutls_deinit(session);
    return nullptr;
  }
  if (early_data_) {
    gnutls_anti_replay_enable(session, anti_replay_);
    gnutls_record_set_max_early_data_size(session, kQuicEarlyData);
  }
  gnutls_datum_t alpn{const_cast<unsigned char*>(kH3), sizeof(kH3)};
  gnutls_alpn_set_protocols(session, &alpn, 1, GNUTLS_ALPN_MANDATORY);
  gnutls_handshake_set_post_client_hello_function(session, &TlsContext::onClientHello);
  gnutls_session_set_ptr(session, &ref);
  return session;
}

int TlsContext::onClientHello(gnutls_session_t session) {
  auto* ref = static_cast<SessionRef*>(gnutls_session_get_ptr(session));
  const TlsContext& self = *ref->context;
  // RFC 9114 §3.1: HTTP/3 is "h3" in ALPN; a client that did not offer it gets
  // no_application_protocol (RFC 9001 §8.1).
  gnutls_datum_t selected{};
  if (gnutls_alpn_get_selected_protocol(session, &selected) != 0 || selected.size != sizeof(kH3) ||
      std::memcmp(selected.data, kH3, sizeof(kH3)) != 0) {
    return GNUTLS_E_NO_APPLICATION_PROTOCOL;
  }
  char name[256];
  size_t len = sizeof(name) - 1;
  unsigned type = 0;
  if (gnutls_server_name_get(session, name, &len, &type, 0) == 0 && type == GNUTLS_NAME_DNS) {
    size_t index = self.tcp_->sni().find(std::string_view(name, len));
    if (index != tls::SniMap::kDefault && index < self.credentials_.size()) {
      gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, self.credentials_[index]);
    }
  }
  // An unknown name gets the default certificate rather than an alert, as on TCP.
  return 0;
}

}  // namespace scalws::worker::quic
