#include "worker/quic/connection_callbacks.h"

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <array>

#include "worker/quic/connection.h"

namespace scalws::worker::quic {
namespace {

Connection& self(void* user) {
  return *static_cast<Connection*>(user);
}

int result(bool ok) {
  return ok ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

}  // namespace

ngtcp2_callbacks ConnectionCallbacks::table() {
  ngtcp2_callbacks cb{};
  cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb.handshake_completed = &handshakeCompleted;
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.recv_stream_data = &recvStreamData;
  cb.acked_stream_data_offset = &ackedStreamData;
  cb.stream_close = &streamClose;
  cb.rand = &rand;
  cb.get_new_connection_id = &getNewConnectionId;
  cb.remove_connection_id = &removeConnectionId;
  cb.update_key = &updateKey;
  cb.path_validation = &pathValidation;
  cb.stream_reset = &streamReset;
  cb.extend_max_remote_streams_bidi = &extendMaxRemoteStreamsBidi;
  cb.extend_max_stream_data = &extendMaxStreamData;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.stream_stop_sending = &streamStopSending;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  cb.recv_tx_key = &recvTxKey;
  return cb;
}

ngtcp2_conn* ConnectionCallbacks::getConn(ngtcp2_crypto_conn_ref* ref) {
  return static_cast<Connection*>(ref->user_data)->conn_;
}

int ConnectionCallbacks::handshakeCompleted(ngtcp2_conn*, void* user) {
  Connection& c = self(user);
  c.stats_.handshake_completed = true;
  c.stats_.early_data = gnutls_session_get_flags(c.session_) & GNUTLS_SFLAGS_EARLY_DATA;
  // TLS 1.3 session tickets go out once the handshake is done (RFC 8446 §4.6.1); GnuTLS
  // was told not to send them by itself.
  gnutls_session_ticket_send(c.session_, 1, 0);
  c.enterState(Connection::State::kOpen, 0);
  c.app_.onHandshakeCompleted();
  return 0;
}

int ConnectionCallbacks::recvStreamData(ngtcp2_conn*, uint32_t flags, int64_t stream_id, uint64_t,
                                        const uint8_t* data, size_t len, void* user, void*) {
  Connection& c = self(user);
  // ngtcp2 flags whatever arrives before the handshake completes, 1-RTT packets that
  // overtook the client's Finished included; only data of an accepted 0-RTT is replayable.
  bool early = (flags & NGTCP2_STREAM_DATA_FLAG_EARLY) != 0 &&
               (gnutls_session_get_flags(c.session_) & GNUTLS_SFLAGS_EARLY_DATA) != 0;
  return result(
      c.app_.onStreamData(stream_id, data, len, (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0, early));
}

int ConnectionCallbacks::ackedStreamData(ngtcp2_conn*, int64_t stream_id, uint64_t, uint64_t len,
                                         void* user, void*) {
  return result(self(user).app_.onStreamAcked(stream_id, len));
}

int ConnectionCallbacks::streamClose(ngtcp2_conn* conn, uint32_t flags, int64_t stream_id,
                                     uint64_t app_error_code, void* user, void*) {
  Connection& c = self(user);
  // The stream still exists here: its loss count is the last word on it.
  c.stats_.lost_packets += ngtcp2_conn_get_stream_loss_count(conn, stream_id);
  if ((flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) == 0) app_error_code = 0;
  return result(c.app_.onStreamClosed(stream_id, app_error_code));
}

int ConnectionCallbacks::streamReset(ngtcp2_conn*, int64_t stream_id, uint64_t,
                                     uint64_t app_error_code, void* user, void*) {
  return result(self(user).app_.onStreamReset(stream_id, app_error_code));
}

int ConnectionCallbacks::streamStopSending(ngtcp2_conn*, int64_t stream_id, uint64_t app_error_code,
                                           void* user, void*) {
  return result(self(user).app_.onStreamStopSending(stream_id, app_error_code));
}

int ConnectionCallbacks::extendMaxRemoteStreamsBidi(ngtcp2_conn*, uint64_t max_streams,
                                                    void* user) {
  self(user).app_.onPeerStreamLimit(max_streams);
  return 0;
}

int ConnectionCallbacks::extendMaxStreamData(ngtcp2_conn*, int64_t stream_id, uint64_t, void* user,
                                             void*) {
  return result(self(user).app_.onStreamWritable(stream_id));
}

void ConnectionCallbacks::rand(uint8_t* dest, size_t len, const ngtcp2_rand_ctx*) {
  // Packet-number skips and the like: unpredictable, not secret.
  gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
}

int ConnectionCallbacks::getNewConnectionId(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token, size_t,
                                            void* user) {
  Connection& c = self(user);
  return result(c.ids_.issue(c, *cid, token));
}

int ConnectionCallbacks::removeConnectionId(ngtcp2_conn*, const ngtcp2_cid* cid, void* user) {
  self(user).ids_.retire(*cid);
  return 0;
}

int ConnectionCallbacks::updateKey(ngtcp2_conn* conn, uint8_t* rx_secret, uint8_t* tx_secret,
                                   ngtcp2_crypto_aead_ctx* rx_aead_ctx, uint8_t* rx_iv,
                                   ngtcp2_crypto_aead_ctx* tx_aead_ctx, uint8_t* tx_iv,
                                   const uint8_t* current_rx_secret,
                                   const uint8_t* current_tx_secret, size_t secretlen, void*) {
  // RFC 9001 §6: the peer started a key update; derive the next generation of keys.
  std::array<uint8_t, 64> rx_key;
  std::array<uint8_t, 64> tx_key;
  return result(ngtcp2_crypto_update_key(conn, rx_secret, tx_secret, rx_aead_ctx, rx_key.data(),
                                         rx_iv, tx_aead_ctx, tx_key.data(), tx_iv,
                                         current_rx_secret, current_tx_secret, secretlen) == 0);
}

int ConnectionCallbacks::pathValidation(ngtcp2_conn*, uint32_t, const ngtcp2_path*,
                                        ngtcp2_path_validation_result, void*) {
  // Migrations are counted where the current path changes (Connection::notePathChange).
  return 0;
}

int ConnectionCallbacks::recvTxKey(ngtcp2_conn*, ngtcp2_crypto_level level, void* user) {
  if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION) return 0;
  Connection& c = self(user);
  c.app_ready_ = c.app_.onSendKeysReady();
  return result(c.app_ready_);
}

}  // namespace scalws::worker::quic
