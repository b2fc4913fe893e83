#include "worker/tls/server_context.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ocsp.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "common/log.h"
#include "worker/tls/openssl_errors.h"

namespace scalws::worker::tls {
namespace {

using common::config::TlsCertificateConfig;
using common::config::TlsConfig;

// TLS 1.2: forward secrecy and AEAD only (no CBC: Lucky13, no RSA key exchange: ROBOT).
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr const char* kTls13Suites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr const char* kGroups = "X25519:P-256:P-384";

// ALPN in wire format, in the server's order of preference (RFC 7301 §3.2).
constexpr unsigned char kAlpnH2[] = "\x02h2\x08http/1.1";
constexpr unsigned char kAlpnHttp1[] = "\x08http/1.1";

int contextIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

const ServerContext* contextOf(SSL* ssl) {
  return static_cast<const ServerContext*>(
      SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), contextIndex()));
}

int refusePassphrase(char*, int, int, void*) {
  return 0;  // never prompt on a terminal: an encrypted key is a config error
}

std::string where(const TlsCertificateConfig& c, const char* key) {
  return c.where.toString() + ": listen.tls." + key + ": ";
}

common::Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return common::errnoStatus(errno, "cannot open " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return data;
}

std::string lower(std::string s) {
  for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  return s;
}

// RFC 6125 §6.4.4: the DNS names of the subjectAltName, and only without any the CN.
std::vector<std::string> namesInCertificate(X509* cert) {
  std::vector<std::string> names;
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
      if (name->type != GEN_DNS) continue;
      const ASN1_IA5STRING* dns = name->d.dNSName;
      names.push_back(lower(std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                        static_cast<size_t>(ASN1_STRING_length(dns)))));
    }
    GENERAL_NAMES_free(sans);
  }
  if (names.empty()) {
    char cn[256];
    int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
    if (n > 0) names.push_back(lower(std::string(cn, static_cast<size_t>(n))));
  }
  return names;
}

// The OCSP file must be a successful response that, when the issuer is in the chain,
// speaks about this very certificate: stapling someone else's status would break clients.
common::Status checkOcsp(const std::string& der, SSL_CTX* ctx, const std::string& path) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  OCSP_RESPONSE* response = d2i_OCSP_RESPONSE(nullptr, &p, static_cast<long>(der.size()));
  if (response == nullptr) {
    takeOpensslErrors();
    return common::invalidArgument("OCSP response " + path + " is not a DER OCSP response");
  }
  common::Status status = common::okStatus();
  OCSP_BASICRESP* basic = nullptr;
  if (OCSP_response_status(response) != OCSP_RESPONSE_STATUS_SUCCESSFUL ||
      (basic = OCSP_response_get1_basic(response)) == nullptr) {
    status = common::invalidArgument("OCSP response " + path + " is not a successful response");
  } else {
    X509* leaf = SSL_CTX_get0_certificate(ctx);
    STACK_OF(X509)* chain = nullptr;
    SSL_CTX_get0_chain_certs(ctx, &chain);
    X509* issuer = nullptr;
    for (int i = 0; chain != nullptr && i < sk_X509_num(chain); ++i) {
      X509* c = sk_X509_value(chain, i);
      if (X509_check_issued(c, leaf) == X509_V_OK) issuer = c;
    }
    if (issuer != nullptr) {
      OCSP_CERTID* id = OCSP_cert_to_id(nullptr, leaf, issuer);
      int cert_status = -1;
      if (id == nullptr ||
          OCSP_resp_find_status(basic, id, &cert_status, nullptr, nullptr, nullptr, nullptr) != 1) {
        status = common::invalidArgument("OCSP response " + path +
                                         " does not cover the certificate it is given with");
      }
      OCSP_CERTID_free(id);
    }
    OCSP_BASICRESP_free(basic);
  }
  OCSP_RESPONSE_free(response);
  takeOpensslErrors();
  return status;
}

}  // namespace

common::Result<std::shared_ptr<const ServerContext>> ServerContext::build(
    const common::config::ListenConfig& listen) {
  const TlsConfig& tls = *listen.tls;
  std::shared_ptr<ServerContext> context(new ServerContext());
  context->offer_h2_ = listen.http2;

  // A session made on one listener resumes only there (RFC 5077 §4 leaves it to us).
  unsigned char digest[32];
  unsigned int digest_len = 0;
  EVP_Digest(listen.address.data(), listen.address.size(), digest, &digest_len, EVP_sha256(),
             nullptr);
  std::string sid_ctx(reinterpret_cast<char*>(digest), SSL_MAX_SID_CTX_LENGTH);

  if (tls.session_tickets) {
    std::string secret;
    if (!tls.ticket_key_file.empty()) {
      common::Result<std::string> file = readTicketSecretFile(tls.ticket_key_file);
      if (!file.ok()) {
        return common::invalidArgument(tls.where.toString() +
                                       ": listen.tls.ticket_key_file: " + file.status().message());
      }
      secret = std::move(file).value();
    } else {
      secret = processTicketSecret();
    }
    context->tickets_ =
        std::make_unique<TicketKeyRing>(std::move(secret), listen.address, tls.ticket_rotation);
  }

  std::string errors;
  for (const TlsCertificateConfig& cert : tls.allCertificates()) {
    common::Status added = context->addCertificate(cert, tls, sid_ctx);
    if (!added.ok()) {
      if (!errors.empty()) errors += '\n';
      errors += added.message();
    }
  }
  if (!errors.empty()) return common::invalidArgument(errors);
  return std::shared_ptr<const ServerContext>(std::move(context));
}

ServerContext::~ServerContext() {
  for (auto& c : certs_) SSL_CTX_free(c->ctx);
}

void ServerContext::configure(SSL_CTX* ctx, const TlsConfig& tls,
                              const std::string& sid_ctx) const {
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_cipher_list(ctx, kTls12Ciphers);
  SSL_CTX_set_ciphersuites(ctx, kTls13Suites);
  SSL_CTX_set1_groups_list(ctx, kGroups);
  uint64_t options = SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION |
                     SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF;
  if (!tls.session_tickets) options |= SSL_OP_NO_TICKET;
  SSL_CTX_set_options(ctx, options);
  // Read every record the kernel has in one read(); the transport tells its connection
  // when decrypted bytes wait (TlsTransport::hasBufferedInput()).
  SSL_CTX_set_read_ahead(ctx, 1);
  // Idle connections give their 34 KiB of record buffers back (as nginx does).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);

  SSL_CTX_set_session_id_context(ctx, reinterpret_cast<const unsigned char*>(sid_ctx.data()),
                                 static_cast<unsigned int>(sid_ctx.size()));
  if (tls.session_cache > 0) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, tls.session_cache);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  // A ticket is only good while its key is the current or the previous one: never promise
  // clients a longer life than one rotation period.
  uint64_t timeout_ms = tls.session_timeout;
  if (tls.session_tickets && tls.ticket_rotation < timeout_ms) timeout_ms = tls.ticket_rotation;
  SSL_CTX_set_timeout(ctx, static_cast<long>(timeout_ms / 1000));
  // TLS 1.3: one ticket per full handshake is what a browser uses per connection.
  SSL_CTX_set_num_tickets(ctx, (tls.session_tickets || tls.session_cache > 0) ? 1 : 0);
  if (tickets_) SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, &ServerContext::onTicketKey);

  SSL_CTX_set_tlsext_servername_callback(ctx, &ServerContext::onServerName);
  SSL_CTX_set_tlsext_servername_arg(ctx, const_cast<ServerContext*>(this));
  SSL_CTX_set_alpn_select_cb(ctx, &ServerContext::onAlpn, const_cast<ServerContext*>(this));
  SSL_CTX_set_ex_data(ctx, contextIndex(), const_cast<ServerContext*>(this));
  SSL_CTX_set_default_passwd_cb(ctx, &refusePassphrase);
}

common::Status ServerContext::addCertificate(const TlsCertificateConfig& config,
                                             const TlsConfig& tls, const std::string& sid_ctx) {
  ERR_clear_error();
  auto cert = std::make_unique<Certificate>();
  cert->ctx = SSL_CTX_new(TLS_server_method());
  if (cert->ctx == nullptr) return common::internalError("SSL_CTX_new: " + takeOpensslErrors());
  SSL_CTX* ctx = cert->ctx;
  certs_.push_back(std::move(cert));  // freed with the context, even on error
  configure(ctx, tls, sid_ctx);

  if (SSL_CTX_use_certificate_chain_file(ctx, config.cert.c_str()) != 1) {
    return common::invalidArgument(where(config, "cert") + "cannot load certificate " +
                                   config.cert + ": " + takeOpensslErrors());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, config.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      takeOpensslErrors();
      return common::invalidArgument(where(config, "key") + "private key " + config.key +
                                     " does not match certificate " + config.cert);
    }
    return common::invalidArgument(where(config, "key") + "cannot load private key " + config.key +
                                   ": " + takeOpensslErrors());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    takeOpensslErrors();
    return common::invalidArgument(where(config, "key") + "private key " + config.key +
                                   " does not match certificate " + config.cert);
  }
  X509* leaf = SSL_CTX_get0_certificate(ctx);
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0) {
    LOG_WARN("certificate %s has expired", config.cert.c_str());
  }
  Certificate& added = *certs_.back();
  if (!config.ocsp.empty()) {
    common::Result<std::string> der = readFile(config.ocsp);
    if (!der.ok()) {
      return common::invalidArgument(where(config, "ocsp") + der.status().message());
    }
    common::Status ok = checkOcsp(*der, ctx, config.ocsp);
    if (!ok.ok()) return common::invalidArgument(where(config, "ocsp") + ok.message());
    added.ocsp_der = std::move(der).value();
    SSL_CTX_set_tlsext_status_cb(ctx, &ServerContext::onOcspStatus);
    SSL_CTX_set_tlsext_status_arg(ctx, &added);
  }
  added.names = config.names.empty() ? namesInCertificate(leaf) : config.names;
  size_t index = certs_.size() - 1;
  for (const std::string& name : added.names) {
    if (!sni_.add(name, index) && index != 0) {
      LOG_DEBUG("%s: server name %s is already served by an earlier certificate",
                config.cert.c_str(), name.c_str());
    }
  }
  ERR_clear_error();
  return common::okStatus();
}

SSL* ServerContext::newSsl() const {
  return SSL_new(certs_.front()->ctx);
}

int ServerContext::onServerName(SSL* ssl, int* alert, void* arg) {
  (void)alert;
  auto* self = static_cast<const ServerContext*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (name == nullptr) return SSL_TLSEXT_ERR_NOACK;
  size_t index = self->sni_.find(name);
  if (index != SniMap::kDefault) SSL_set_SSL_CTX(ssl, self->certs_[index]->ctx);
  // An unknown name gets the default certificate rather than an alert, as nginx does.
  return SSL_TLSEXT_ERR_OK;
}

int ServerContext::onAlpn(SSL* ssl, const unsigned char** out, unsigned char* out_len,
                          const unsigned char* in, unsigned int in_len, void* arg) {
  (void)ssl;
  auto* self = static_cast<const ServerContext*>(arg);
  const unsigned char* ours = self->offer_h2_ ? kAlpnH2 : kAlpnHttp1;
  unsigned int ours_len =
      static_cast<unsigned int>(self->offer_h2_ ? sizeof(kAlpnH2) - 1 : sizeof(kAlpnHttp1) - 1);
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_len, ours, ours_len, in, in_len) !=
      OPENSSL_NPN_NEGOTIATED) {
    // Nothing in common: go on without ALPN (the client then speaks HTTP/1.1) rather than
    // fail clients that offer only protocols we do not know.
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

int ServerContext::onTicketKey(SSL* ssl, unsigned char* name, unsigned char* iv,
                               EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int encrypt) {
  const ServerContext* self = contextOf(ssl);
  if (self == nullptr || !self->tickets_) return encrypt ? -1 : 0;
  TicketKey key;
  int result = 1;
  if (encrypt) {
    if (!self->tickets_->encryptionKey(unixTimeMs(), key)) return -1;
    std::memcpy(name, key.name.data(), key.name.size());
    if (RAND_bytes(iv, 16) != 1) return -1;
    if (EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes.data(), iv) != 1) {
      return -1;
    }
  } else {
    result = self->tickets_->decryptionKey(name, unixTimeMs(), key);
    if (result == 0) return 0;  // unknown or expired: a full handshake
    if (EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes.data(), iv) != 1) {
      return -1;
    }
  }
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key.hmac.data(), key.hmac.size()),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  if (EVP_MAC_CTX_set_params(mac, params) != 1) return -1;
  return result;  // 2: the previous window's key, so OpenSSL issues a fresh ticket
}

int ServerContext::onOcspStatus(SSL* ssl, void* arg) {
  const auto* cert = static_cast<const Certificate*>(arg);
  if (cert == nullptr || cert->ocsp_der.empty()) return SSL_TLSEXT_ERR_NOACK;
  // OpenSSL takes ownership of the copy.
  auto* copy = static_cast<unsigned char*>(OPENSSL_malloc(cert->ocsp_der.size()));
  if (copy == nullptr) return SSL_TLSEXT_ERR_NOACK;
  std::memcpy(copy, cert->ocsp_der.data(), cert->ocsp_der.size());
  SSL_set_tlsext_status_ocsp_resp(ssl, copy, static_cast<long>(cert->ocsp_der.size()));
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace scalws::worker::tls
