#include "bench/h3load/client_connection.h"

#include <gnutls/crypto.h>
#include <netinet/udp.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace scalws::bench {
namespace {

constexpr const char* kPriority =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "%DISABLE_TLS13_COMPAT_MODE";
constexpr size_t kMaxPayload = 1452;
constexpr size_t kTrain = 10;

ClientConnection& self(void* user) {
  return *static_cast<ClientConnection*>(user);
}

int ok(bool b) {
  return b ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

nghttp3_nv header(const char* name, const std::string& value) {
  return nghttp3_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name)),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), std::strlen(name),
                    value.size(), NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE};
}

}  // namespace

struct ClientCallbacks {
  // QUIC
  static int handshakeCompleted(ngtcp2_conn*, void* user) {
    self(user).handshake_completed_ = true;
    return 0;
  }
  static int recvStreamData(ngtcp2_conn* conn, uint32_t flags, int64_t id, uint64_t,
                            const uint8_t* data, size_t len, void* user, void*) {
    ClientConnection& c = self(user);
    if (c.http_ == nullptr) return 0;
    nghttp3_ssize n =
        nghttp3_conn_read_stream(c.http_, id, data, len, (flags & NGTCP2_STREAM_DATA_FLAG_FIN));
    if (n < 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    ngtcp2_conn_extend_max_stream_offset(conn, id, static_cast<uint64_t>(n));
    ngtcp2_conn_extend_max_offset(conn, static_cast<uint64_t>(n));
    return 0;
  }
  static int ackedStreamData(ngtcp2_conn*, int64_t id, uint64_t, uint64_t len, void* user, void*) {
    ClientConnection& c = self(user);
    return ok(c.http_ == nullptr || nghttp3_conn_add_ack_offset(c.http_, id, len) == 0);
  }
  static int streamClose(ngtcp2_conn*, uint32_t flags, int64_t id, uint64_t code, void* user,
                         void*) {
    ClientConnection& c = self(user);
    if ((flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) == 0) code = NGHTTP3_H3_NO_ERROR;
    if (c.http_ != nullptr) {
      int rv = nghttp3_conn_close_stream(c.http_, id, code);
      if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND) return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    c.finishRequest(id, false);  // a no-op when nghttp3 already finished it
    return 0;
  }
  static int streamReset(ngtcp2_conn*, int64_t id, uint64_t, uint64_t, void* user, void*) {
    ClientConnection& c = self(user);
    return ok(c.http_ == nullptr || nghttp3_conn_shutdown_stream_read(c.http_, id) == 0);
  }
  static int extendMaxLocalStreamsBidi(ngtcp2_conn*, uint64_t, void* user) {
    ClientConnection& c = self(user);
    if (c.http_ != nullptr) c.fillRequests(c.now_);
    return 0;
  }
  static int extendMaxStreamData(ngtcp2_conn*, int64_t id, uint64_t, void* user, void*) {
    ClientConnection& c = self(user);
    return ok(c.http_ == nullptr || nghttp3_conn_unblock_stream(c.http_, id) == 0);
  }
  static void rand(uint8_t* dest, size_t len, const ngtcp2_rand_ctx*) {
    gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
  }
  static int newConnectionId(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token, size_t len, void*) {
    cid->datalen = len;
    gnutls_rnd(GNUTLS_RND_NONCE, cid->data, len);
    gnutls_rnd(GNUTLS_RND_NONCE, token, NGTCP2_STATELESS_RESET_TOKENLEN);
    return 0;
  }
  static int recvRxKey(ngtcp2_conn*, ngtcp2_crypto_level level, void* user) {
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION) return 0;
    return ok(self(user).setupHttp());
  }

  // HTTP/3
  static int httpStreamClose(nghttp3_conn*, int64_t id, uint64_t, void* user, void*) {
    self(user).finishRequest(id, true);
    return 0;
  }
  static int httpRecvData(nghttp3_conn*, int64_t id, const uint8_t*, size_t len, void* user,
                          void*) {
    ClientConnection& c = self(user);
    auto it = c.requests_.find(id);
    if (it != c.requests_.end()) it->second.bytes += len;
    ngtcp2_conn_extend_max_stream_offset(c.conn_, id, len);
    ngtcp2_conn_extend_max_offset(c.conn_, len);
    return 0;
  }
  static int httpDeferredConsume(nghttp3_conn*, int64_t id, size_t n, void* user, void*) {
    ClientConnection& c = self(user);
    ngtcp2_conn_extend_max_stream_offset(c.conn_, id, n);
    ngtcp2_conn_extend_max_offset(c.conn_, n);
    return 0;
  }
  static int httpRecvHeader(nghttp3_conn*, int64_t id, int32_t token, nghttp3_rcbuf*,
                            nghttp3_rcbuf* value, uint8_t, void* user, void*) {
    if (token != NGHTTP3_QPACK_TOKEN__STATUS) return 0;
    ClientConnection& c = self(user);
    auto it = c.requests_.find(id);
    if (it == c.requests_.end()) return 0;
    nghttp3_vec v = nghttp3_rcbuf_get_buf(value);
    int status = 0;
    for (size_t i = 0; i < v.len; ++i) status = status * 10 + (v.base[i] - '0');
    if (status >= 200) it->second.status = status;  // not a 1xx interim response
    return 0;
  }
  static int httpStopSending(nghttp3_conn*, int64_t id, uint64_t code, void* user, void*) {
    return ok(ngtcp2_conn_shutdown_stream_read(self(user).conn_, id, code) == 0);
  }
  static int httpResetStream(nghttp3_conn*, int64_t id, uint64_t code, void* user, void*) {
    return ok(ngtcp2_conn_shutdown_stream_write(self(user).conn_, id, code) == 0);
  }
};

ClientConnection::ClientConnection(const Target& target, size_t streams, bool reset_after_send,
                                   OnDone on_done, WantMore want_more)
    : target_(target),
      streams_(streams),
      reset_after_send_(reset_after_send),
      on_done_(std::move(on_done)),
      want_more_(std::move(want_more)),
      tx_(kMaxPayload * kTrain) {
  ref_.get_conn = &ClientConnection::getConn;
  ref_.user_data = this;
}

ClientConnection::~ClientConnection() {
  if (http_ != nullptr) nghttp3_conn_del(http_);
  if (conn_ != nullptr) ngtcp2_conn_del(conn_);
  if (session_ != nullptr) gnutls_deinit(session_);
  if (cred_ != nullptr) gnutls_certificate_free_credentials(cred_);
  if (fd_ >= 0) ::close(fd_);
}

ngtcp2_conn* ClientConnection::getConn(ngtcp2_crypto_conn_ref* ref) {
  return static_cast<ClientConnection*>(ref->user_data)->conn_;
}

bool ClientConnection::start(uint64_t now) {
  now_ = now;
  fd_ = ::socket(target_.address.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&target_.address),
                           target_.address_len) != 0) {
    fail(std::string("socket/connect: ") + strerror(errno));
    return false;
  }
  local_len_ = sizeof(local_);
  getsockname(fd_, reinterpret_cast<sockaddr*>(&local_), &local_len_);
  if (target_.gro) {
    int one = 1;
    gro_ = ::setsockopt(fd_, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
  }
  if (gnutls_certificate_allocate_credentials(&cred_) != 0 ||
      gnutls_init(&session_, GNUTLS_CLIENT) != 0 ||
      ngtcp2_crypto_gnutls_configure_client_session(session_) != 0 ||
      gnutls_priority_set_direct(session_, kPriority, nullptr) != 0 ||
      gnutls_credentials_set(session_, GNUTLS_CRD_CERTIFICATE, cred_) != 0) {
    fail("GnuTLS setup failed");
    return false;
  }
  gnutls_session_set_ptr(session_, &ref_);
  static unsigned char h3[] = {'h', '3'};
  gnutls_datum_t alpn{h3, sizeof(h3)};
  gnutls_alpn_set_protocols(session_, &alpn, 1, GNUTLS_ALPN_MANDATORY);
  if (!target_.sni.empty()) {
    gnutls_server_name_set(session_, GNUTLS_NAME_DNS, target_.sni.data(), target_.sni.size());
  }

  ngtcp2_callbacks cb{};
  cb.client_initial = ngtcp2_crypto_client_initial_cb;
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb.handshake_completed = &ClientCallbacks::handshakeCompleted;
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.recv_stream_data = &ClientCallbacks::recvStreamData;
  cb.acked_stream_data_offset = &ClientCallbacks::ackedStreamData;
  cb.stream_close = &ClientCallbacks::streamClose;
  cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
  cb.extend_max_local_streams_bidi = &ClientCallbacks::extendMaxLocalStreamsBidi;
  cb.rand = &ClientCallbacks::rand;
  cb.get_new_connection_id = &ClientCallbacks::newConnectionId;
  cb.update_key = ngtcp2_crypto_update_key_cb;
  cb.stream_reset = &ClientCallbacks::streamReset;
  cb.extend_max_stream_data = &ClientCallbacks::extendMaxStreamData;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  cb.recv_rx_key = &ClientCallbacks::recvRxKey;

  ngtcp2_cid dcid;
  ngtcp2_cid scid;
  dcid.datalen = 18;
  scid.datalen = 8;
  gnutls_rnd(GNUTLS_RND_NONCE, dcid.data, dcid.datalen);
  gnutls_rnd(GNUTLS_RND_NONCE, scid.data, scid.datalen);
  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = now;
  settings.max_tx_udp_payload_size = kMaxPayload;
  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  params.initial_max_streams_uni = 3;
  params.initial_max_stream_data_bidi_local = 6 * 1024 * 1024;
  params.initial_max_stream_data_uni = 1024 * 1024;
  params.initial_max_data = 16 * 1024 * 1024;
  params.max_idle_timeout = 30 * NGTCP2_SECONDS;
  ngtcp2_path path{{reinterpret_cast<sockaddr*>(&local_), local_len_},
                   {reinterpret_cast<sockaddr*>(&target_.address), target_.address_len},
                   nullptr};
  if (ngtcp2_conn_client_new(&conn_, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &settings,
                             &params, nullptr, this) != 0) {
    conn_ = nullptr;
    fail("ngtcp2_conn_client_new failed");
    return false;
  }
  ngtcp2_conn_set_tls_native_handle(conn_, session_);
  write(now);
  return true;
}

bool ClientConnection::setupHttp() {
  if (http_ != nullptr) return true;
  nghttp3_callbacks cb{};
  cb.stream_close = &ClientCallbacks::httpStreamClose;
  cb.recv_data = &ClientCallbacks::httpRecvData;
  cb.deferred_consume = &ClientCallbacks::httpDeferredConsume;
  cb.recv_header = &ClientCallbacks::httpRecvHeader;
  cb.stop_sending = &ClientCallbacks::httpStopSending;
  cb.reset_stream = &ClientCallbacks::httpResetStream;
  nghttp3_settings settings;
  nghttp3_settings_default(&settings);
  settings.qpack_max_dtable_capacity = 4096;
  settings.qpack_blocked_streams = 100;
  if (nghttp3_conn_client_new(&http_, &cb, &settings, nullptr, this) != 0) return false;
  int64_t control = -1;
  int64_t encoder = -1;
  int64_t decoder = -1;
  return ngtcp2_conn_open_uni_stream(conn_, &control, nullptr) == 0 &&
         ngtcp2_conn_open_uni_stream(conn_, &encoder, nullptr) == 0 &&
         ngtcp2_conn_open_uni_stream(conn_, &decoder, nullptr) == 0 &&
         nghttp3_conn_bind_control_stream(http_, control) == 0 &&
         nghttp3_conn_bind_qpack_streams(http_, encoder, decoder) == 0;
}

void ClientConnection::fillRequests(uint64_t now) {
  if (http_ == nullptr || closed_) return;
  static const std::string kMethod = "GET";
  static const std::string kScheme = "https";
  static const std::string kAgent = "scalws-h3load";
  // Past the server's stream limit, wait for it to grow (extend_max_local_streams_bidi).
  while (requests_.size() < streams_ && ngtcp2_conn_get_streams_bidi_left(conn_) > 0 &&
         want_more_()) {
    int64_t id = -1;
    if (ngtcp2_conn_open_bidi_stream(conn_, &id, nullptr) != 0) {
      fail("ngtcp2_conn_open_bidi_stream failed");
      return;
    }
    const std::string& path = target_.paths[next_path_++ % target_.paths.size()];
    nghttp3_nv nva[] = {header(":method", kMethod), header(":scheme", kScheme),
                        header(":authority", target_.authority), header(":path", path),
                        header("user-agent", kAgent)};
    if (nghttp3_conn_submit_request(http_, id, nva, 5, nullptr, nullptr) != 0) {
      fail("nghttp3_conn_submit_request failed");
      return;
    }
    requests_[id] = Request{now, 0, 0};
    if (reset_after_send_) to_reset_.push_back(id);
  }
}

void ClientConnection::finishRequest(int64_t stream_id, bool complete) {
  auto it = requests_.find(stream_id);
  if (it == requests_.end()) return;
  RequestResult r;
  r.status = complete ? it->second.status : 0;
  r.bytes = it->second.bytes;
  r.latency_ns = now_ - it->second.started_ns;
  requests_.erase(it);
  on_done_(r);
}

void ClientConnection::fail(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  close_reason_ = why;
  std::vector<int64_t> ids;
  for (auto& [id, r] : requests_) ids.push_back(id);
  for (int64_t id : ids) finishRequest(id, false);
}

void ClientConnection::onReadable(uint64_t now) {
  now_ = now;
  uint8_t buf[65536];
  for (int i = 0; i < 64 && !closed_; ++i) {
    iovec iov{buf, sizeof(buf)};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = gro_ ? control : nullptr;
    msg.msg_controllen = gro_ ? sizeof(control) : 0;
    ssize_t n = ::recvmsg(fd_, &msg, MSG_DONTWAIT);
    if (n < 0) break;
    // With UDP_GRO, one read may hold a train of datagrams of `segment` bytes each (the
    // last may be shorter).
    size_t segment = static_cast<size_t>(n);
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
        int size = 0;
        std::memcpy(&size, CMSG_DATA(c), sizeof(size));
        if (size > 0) segment = static_cast<size_t>(size);
      }
    }
    for (size_t off = 0; off < static_cast<size_t>(n) && !closed_; off += segment) {
      size_t len = std::min(segment, static_cast<size_t>(n) - off);
      if (!readPacket(buf + off, len, now)) return;
    }
  }
  fillRequests(now);
  write(now);
}

bool ClientConnection::readPacket(const uint8_t* data, size_t len, uint64_t now) {
  ngtcp2_path path{{reinterpret_cast<sockaddr*>(&local_), local_len_},
                   {reinterpret_cast<sockaddr*>(&target_.address), target_.address_len},
                   nullptr};
  ngtcp2_pkt_info pi{};
  int rv = ngtcp2_conn_read_pkt(conn_, &path, &pi, data, len, now);
  if (rv == 0) return true;
  ngtcp2_connection_close_error err;
  ngtcp2_conn_get_connection_close_error(conn_, &err);
  char code[32];
  std::snprintf(code, sizeof(code), "0x%llx", static_cast<unsigned long long>(err.error_code));
  fail(rv == NGTCP2_ERR_DRAINING ? std::string("closed by the server (error ") + code + ")"
                                 : std::string("read: ") + ngtcp2_strerror(rv));
  return false;
}

void ClientConnection::onTimer(uint64_t now) {
  now_ = now;
  if (closed_) return;
  int rv = ngtcp2_conn_handle_expiry(conn_, now);
  if (rv != 0) {
    fail(std::string("expiry: ") + ngtcp2_strerror(rv));
    return;
  }
  write(now);
}

void ClientConnection::close(uint64_t now) {
  if (closed_ || conn_ == nullptr || !handshake_completed_) return;
  ngtcp2_connection_close_error err;
  ngtcp2_connection_close_error_set_application_error(&err, NGHTTP3_H3_NO_ERROR, nullptr, 0);
  ngtcp2_ssize n = ngtcp2_conn_write_connection_close(conn_, nullptr, nullptr, tx_.data(),
                                                      kMaxPayload, &err, now);
  if (n > 0) sendBatch(tx_.data(), static_cast<size_t>(n), static_cast<size_t>(n));
  closed_ = true;
}

uint64_t ClientConnection::expiry() const {
  return closed_ || conn_ == nullptr ? UINT64_MAX : ngtcp2_conn_get_expiry(conn_);
}

void ClientConnection::sendBatch(const uint8_t* data, size_t len, size_t segment) {
  if (len == 0) return;
  iovec iov{const_cast<uint8_t*>(data), len};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) uint8_t control[CMSG_SPACE(sizeof(uint16_t))] = {};
  if (len > segment) {
    m.msg_control = control;
    m.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t size = static_cast<uint16_t>(segment);
    std::memcpy(CMSG_DATA(c), &size, sizeof(size));
  }
  ssize_t n;
  do {
    n = ::sendmsg(fd_, &m, 0);
  } while (n < 0 && errno == EINTR);
  // A full socket buffer loses the packets: QUIC's recovery resends them.
}

void ClientConnection::write(uint64_t now) {
  if (closed_) return;
  for (int round = 0; round < 16; ++round) {
    size_t used = 0;
    size_t segment = 0;
    size_t packets = 0;
    bool done = false;
    while (packets < kTrain) {
      int64_t stream_id = -1;
      int fin = 0;
      nghttp3_vec vec[16];
      nghttp3_ssize count = 0;
      if (http_ != nullptr && ngtcp2_conn_get_max_data_left(conn_) > 0) {
        count = nghttp3_conn_writev_stream(http_, &stream_id, &fin, vec, 16);
        if (count < 0) {
          fail("nghttp3_conn_writev_stream failed");
          return;
        }
      }
      ngtcp2_ssize written = -1;
      uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
      ngtcp2_ssize n = ngtcp2_conn_writev_stream(
          conn_, nullptr, nullptr, tx_.data() + used, kMaxPayload, &written, flags, stream_id,
          reinterpret_cast<const ngtcp2_vec*>(vec), static_cast<size_t>(count), now);
      if (n < 0) {
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
          nghttp3_conn_block_stream(http_, stream_id);
          continue;
        }
        if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
          nghttp3_conn_shutdown_stream_write(http_, stream_id);
          continue;
        }
        if (n == NGTCP2_ERR_WRITE_MORE) {
          nghttp3_conn_add_write_offset(http_, stream_id, static_cast<size_t>(written));
          continue;
        }
        fail(std::string("write: ") + ngtcp2_strerror(static_cast<int>(n)));
        return;
      }
      if (written >= 0 && stream_id >= 0) {
        nghttp3_conn_add_write_offset(http_, stream_id, static_cast<size_t>(written));
      }
      if (n == 0) {
        done = true;
        break;
      }
      size_t size = static_cast<size_t>(n);
      if (packets > 0 && size > segment) {
        // Larger than the train's packets: send the train, then this one alone.
        sendBatch(tx_.data(), used, segment);
        sendBatch(tx_.data() + used, size, size);
        used = 0;
        packets = 0;
        continue;
      }
      if (packets == 0) segment = size;
      used += size;
      ++packets;
      if (size < segment) break;
    }
    sendBatch(tx_.data(), used, segment == 0 ? used : segment);
    ngtcp2_conn_update_pkt_tx_time(conn_, now);
    if (done) break;
  }
  if (!to_reset_.empty()) {
    // The rapid-reset pattern: a request, then at once its cancellation (both directions).
    std::vector<int64_t> ids;
    ids.swap(to_reset_);
    // Counted as done at once: the point is how fast requests can be opened and dropped.
    for (int64_t id : ids) {
      ngtcp2_conn_shutdown_stream(conn_, id, NGHTTP3_H3_REQUEST_CANCELLED);
      finishRequest(id, false);
    }
    write(now);
  }
}

}  // namespace scalws::bench
