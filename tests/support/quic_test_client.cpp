#include "tests/support/quic_test_client.h"

#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

namespace scalws::testing {
namespace {

constexpr const char* kPriority =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "%DISABLE_TLS13_COMPAT_MODE";

QuicTestClient& self(void* user) {
  return *static_cast<QuicTestClient*>(user);
}

void randomBytes(uint8_t* dest, size_t len, const ngtcp2_rand_ctx*) {
  gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
}

int newConnectionId(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token, size_t cidlen, void*) {
  cid->datalen = cidlen;
  gnutls_rnd(GNUTLS_RND_NONCE, cid->data, cidlen);
  gnutls_rnd(GNUTLS_RND_NONCE, token, NGTCP2_STATELESS_RESET_TOKENLEN);
  return 0;
}

}  // namespace

std::string QuicTestClient::peerCommonName() const {
  unsigned int count = 0;
  const gnutls_datum_t* certs =
      session_ != nullptr ? gnutls_certificate_get_peers(session_, &count) : nullptr;
  if (certs == nullptr || count == 0) return {};
  gnutls_x509_crt_t crt = nullptr;
  if (gnutls_x509_crt_init(&crt) != 0) return {};
  std::string cn;
  if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) == 0) {
    char buf[256];
    size_t size = sizeof(buf);
    if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf, &size) == 0) {
      cn.assign(buf, size);
    }
  }
  gnutls_x509_crt_deinit(crt);
  return cn;
}

ngtcp2_conn* QuicTestClient::getConn(ngtcp2_crypto_conn_ref* ref) {
  return static_cast<QuicTestClient*>(ref->user_data)->conn_;
}

QuicTestClient::QuicTestClient(const sockaddr_in& client, const sockaddr_in& server,
                               uint32_t version, std::vector<uint8_t> token, const std::string& sni)
    : client_(client), server_(server), token_(std::move(token)) {
  ref_.get_conn = &QuicTestClient::getConn;
  ref_.user_data = this;
  if (gnutls_certificate_allocate_credentials(&cred_) != 0 ||
      gnutls_init(&session_, GNUTLS_CLIENT) != 0 ||
      ngtcp2_crypto_gnutls_configure_client_session(session_) != 0 ||
      gnutls_priority_set_direct(session_, kPriority, nullptr) != 0 ||
      gnutls_credentials_set(session_, GNUTLS_CRD_CERTIFICATE, cred_) != 0) {
    return;
  }
  gnutls_session_set_ptr(session_, &ref_);
  static unsigned char h3[] = {'h', '3'};
  gnutls_datum_t alpn{h3, sizeof(h3)};
  gnutls_alpn_set_protocols(session_, &alpn, 1, GNUTLS_ALPN_MANDATORY);
  gnutls_server_name_set(session_, GNUTLS_NAME_DNS, sni.data(), sni.size());

  ngtcp2_callbacks cb{};
  cb.client_initial = ngtcp2_crypto_client_initial_cb;
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb.handshake_completed = [](ngtcp2_conn*, void* user) {
    self(user).handshake_completed_ = true;
    return 0;
  };
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.recv_retry = [](ngtcp2_conn* conn, const ngtcp2_pkt_hd* hd, void* user) {
    self(user).retried_ = true;
    return ngtcp2_crypto_recv_retry_cb(conn, hd, user);
  };
  cb.recv_new_token = [](ngtcp2_conn*, const ngtcp2_vec* given, void* user) {
    self(user).new_token_.assign(given->base, given->base + given->len);
    return 0;
  };
  cb.recv_stream_data = [](ngtcp2_conn* conn, uint32_t flags, int64_t id, uint64_t,
                           const uint8_t* data, size_t len, void* user, void*) {
    QuicTestClient& c = self(user);
    c.received_[id].append(reinterpret_cast<const char*>(data), len);
    if ((flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0) c.fins_[id] = true;
    ngtcp2_conn_extend_max_stream_offset(conn, id, len);
    ngtcp2_conn_extend_max_offset(conn, len);
    return 0;
  };
  cb.rand = &randomBytes;
  cb.get_new_connection_id = &newConnectionId;
  cb.update_key = ngtcp2_crypto_update_key_cb;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;

  ngtcp2_cid dcid;
  ngtcp2_cid scid;
  dcid.datalen = 18;
  scid.datalen = 8;
  gnutls_rnd(GNUTLS_RND_NONCE, dcid.data, dcid.datalen);
  gnutls_rnd(GNUTLS_RND_NONCE, scid.data, scid.datalen);
  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = 1;
  if (!token_.empty()) settings.token = ngtcp2_vec{token_.data(), token_.size()};
  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  params.initial_max_streams_uni = 3;
  params.initial_max_stream_data_bidi_local = 256 * 1024;
  params.initial_max_stream_data_uni = 256 * 1024;
  params.initial_max_data = 1024 * 1024;
  ngtcp2_path path{{reinterpret_cast<sockaddr*>(&client_), sizeof(client_)},
                   {reinterpret_cast<sockaddr*>(&server_), sizeof(server_)},
                   nullptr};
  if (ngtcp2_conn_client_new(&conn_, &dcid, &scid, &path, version, &cb, &settings, &params, nullptr,
                             this) != 0) {
    conn_ = nullptr;
    return;
  }
  ngtcp2_conn_set_tls_native_handle(conn_, session_);
}

QuicTestClient::~QuicTestClient() {
  if (conn_ != nullptr) ngtcp2_conn_del(conn_);
  if (session_ != nullptr) gnutls_deinit(session_);
  if (cred_ != nullptr) gnutls_certificate_free_credentials(cred_);
}

int64_t QuicTestClient::openBidi() {
  int64_t id = -1;
  return ngtcp2_conn_open_bidi_stream(conn_, &id, nullptr) == 0 ? id : -1;
}

int64_t QuicTestClient::openUni() {
  int64_t id = -1;
  return ngtcp2_conn_open_uni_stream(conn_, &id, nullptr) == 0 ? id : -1;
}

void QuicTestClient::send(int64_t stream_id, const std::string& bytes, bool fin) {
  Outgoing& o = outgoing_[stream_id];
  o.bytes += bytes;
  o.fin = o.fin || fin;
}

std::vector<std::vector<uint8_t>> QuicTestClient::write(uint64_t now) {
  std::vector<std::vector<uint8_t>> out;
  for (int i = 0; i < 64; ++i) {
    std::vector<uint8_t> buf(1452);
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi;
    // The first stream with bytes (or a FIN) left to send, if any.
    int64_t stream_id = -1;
    Outgoing* o = nullptr;
    for (auto& [id, pending] : outgoing_) {
      if (pending.sent < pending.bytes.size() || (pending.fin && !pending.fin_sent)) {
        stream_id = id;
        o = &pending;
        break;
      }
    }
    ngtcp2_vec vec{};
    uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_NONE;
    if (o != nullptr) {
      vec.base = reinterpret_cast<uint8_t*>(o->bytes.data()) + o->sent;
      vec.len = o->bytes.size() - o->sent;
      if (o->fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
    }
    ngtcp2_ssize written = -1;
    ngtcp2_ssize n =
        ngtcp2_conn_writev_stream(conn_, &ps.path, &pi, buf.data(), buf.size(), &written, flags,
                                  stream_id, &vec, o != nullptr ? 1 : 0, now);
    if (o != nullptr && written >= 0) {
      o->sent += static_cast<size_t>(written);
      if (o->fin && o->sent == o->bytes.size()) o->fin_sent = true;
    }
    if (n <= 0) break;
    buf.resize(static_cast<size_t>(n));
    out.push_back(std::move(buf));
  }
  return out;
}

void QuicTestClient::expire(uint64_t now) {
  if (conn_ != nullptr && ngtcp2_conn_get_expiry(conn_) <= now) {
    ngtcp2_conn_handle_expiry(conn_, now);
  }
}

int QuicTestClient::read(const std::vector<uint8_t>& datagram, uint64_t now) {
  ngtcp2_path path{{reinterpret_cast<sockaddr*>(&client_), sizeof(client_)},
                   {reinterpret_cast<sockaddr*>(&server_), sizeof(server_)},
                   nullptr};
  ngtcp2_pkt_info pi{};
  return ngtcp2_conn_read_pkt(conn_, &path, &pi, datagram.data(), datagram.size(), now);
}

}  // namespace scalws::testing
