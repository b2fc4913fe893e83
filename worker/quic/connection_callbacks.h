// ngtcp2's callbacks of a server Connection: each a static function that finds the
// Connection in user_data and forwards to it or to its Application. Internal to
// connection.cpp and connection_callbacks.cpp.
#pragma once

#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

namespace scalws::worker::quic {

struct ConnectionCallbacks {
  static ngtcp2_callbacks table();
  static ngtcp2_conn* getConn(ngtcp2_crypto_conn_ref* ref);

  static int handshakeCompleted(ngtcp2_conn*, void* user);
  static int recvStreamData(ngtcp2_conn*, uint32_t flags, int64_t stream_id, uint64_t offset,
                            const uint8_t* data, size_t len, void* user, void* stream_user);
  static int ackedStreamData(ngtcp2_conn*, int64_t stream_id, uint64_t offset, uint64_t len,
                             void* user, void* stream_user);
  static int streamClose(ngtcp2_conn*, uint32_t flags, int64_t stream_id, uint64_t app_error_code,
                         void* user, void* stream_user);
  static int streamReset(ngtcp2_conn*, int64_t stream_id, uint64_t final_size,
                         uint64_t app_error_code, void* user, void* stream_user);
  static int streamStopSending(ngtcp2_conn*, int64_t stream_id, uint64_t app_error_code, void* user,
                               void* stream_user);
  static int extendMaxRemoteStreamsBidi(ngtcp2_conn*, uint64_t max_streams, void* user);
  static int extendMaxStreamData(ngtcp2_conn*, int64_t stream_id, uint64_t max_data, void* user,
                                 void* stream_user);
  static void rand(uint8_t* dest, size_t len, const ngtcp2_rand_ctx* ctx);
  static int getNewConnectionId(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token, size_t cidlen,
                                void* user);
  static int removeConnectionId(ngtcp2_conn*, const ngtcp2_cid* cid, void* user);
  static int updateKey(ngtcp2_conn*, uint8_t* rx_secret, uint8_t* tx_secret,
                       ngtcp2_crypto_aead_ctx* rx_aead_ctx, uint8_t* rx_iv,
                       ngtcp2_crypto_aead_ctx* tx_aead_ctx, uint8_t* tx_iv,
                       const uint8_t* current_rx_secret, const uint8_t* current_tx_secret,
                       size_t secretlen, void* user);
  static int pathValidation(ngtcp2_conn*, uint32_t flags, const ngtcp2_path* path,
                            ngtcp2_path_validation_result result, void* user);
  static int recvTxKey(ngtcp2_conn*, ngtcp2_crypto_level level, void* user);
};

}  // namespace scalws::worker::quic
