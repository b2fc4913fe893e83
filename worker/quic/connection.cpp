#include "worker/quic/connection.h"

#include <ngtcp2/ngtcp2_crypto.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "worker/quic/connection_callbacks.h"

namespace scalws::worker::quic {
namespace {

constexpr size_t kClosePacketMax = NGTCP2_MAX_UDP_PAYLOAD_SIZE;

}  // namespace

Connection::Connection(Application& app, ConnectionIdRegistry& ids,
                       std::shared_ptr<const TlsContext> tls, const ConnectionSettings& settings)
    : app_(app), ids_(ids), tls_(std::move(tls)), settings_(settings) {
  ngtcp2_connection_close_error_default(&last_error_);
  session_ref_.conn_ref.get_conn = &ConnectionCallbacks::getConn;
  session_ref_.conn_ref.user_data = this;
}

Connection::~Connection() {
  if (conn_ != nullptr) ngtcp2_conn_del(conn_);
  if (session_ != nullptr) gnutls_deinit(session_);
}

bool Connection::start(const Start& s) {
  const ngtcp2_pkt_hd& hd = *s.initial;
  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = s.now;
  settings.cc_algo = NGTCP2_CC_ALGO_CUBIC;
  settings.handshake_timeout = settings_.handshake_timeout;
  // The configured windows are limits, not starting points: no auto-tuning beyond them.
  settings.max_window = settings_.connection_window;
  settings.max_stream_window = settings_.stream_window;
  if (s.address_validated) settings.token = hd.token;

  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  params.initial_max_streams_bidi = settings_.max_streams;
  params.initial_max_streams_uni = settings_.max_uni_streams;
  params.initial_max_stream_data_bidi_remote = settings_.stream_window;
  params.initial_max_stream_data_bidi_local = 0;  // we open no bidirectional streams
  params.initial_max_stream_data_uni = settings_.uni_stream_window;
  params.initial_max_data = settings_.connection_window;
  params.max_idle_timeout = settings_.idle_timeout;
  params.max_udp_payload_size = settings_.max_udp_payload;
  params.active_connection_id_limit = 7;
  params.stateless_reset_token_present = 1;
  std::memcpy(params.stateless_reset_token, s.reset_token, NGTCP2_STATELESS_RESET_TOKENLEN);
  // RFC 9000 §7.3: after a Retry the original DCID is the one the client first chose and
  // retry_source_connection_id the one our Retry gave it.
  if (s.original_dcid != nullptr) {
    params.original_dcid = *s.original_dcid;
    params.retry_scid = hd.dcid;
    params.retry_scid_present = 1;
  } else {
    params.original_dcid = hd.dcid;
  }

  SocketAddress local = s.datagram->local;
  SocketAddress remote = s.datagram->remote;
  peer_ = remote;
  ngtcp2_path path{ngtcpAddr(local), ngtcpAddr(remote), nullptr};
  ngtcp2_callbacks callbacks = ConnectionCallbacks::table();
  if (ngtcp2_conn_server_new(&conn_, &hd.scid, &s.scid, &path, hd.version, &callbacks, &settings,
                             &params, nullptr, this) != 0) {
    conn_ = nullptr;
    return false;
  }
  session_ = tls_->newSession(session_ref_);
  if (session_ == nullptr) return false;
  ngtcp2_conn_set_tls_native_handle(conn_, session_);
  last_now_ = s.now;
  enterState(State::kHandshake, s.now);
  return true;
}

const ngtcp2_path* Connection::path() const {
  return ngtcp2_conn_get_path(conn_);
}

void Connection::enterState(State next, uint64_t now) {
  if (state_ == next || state_ == State::kGone) return;
  switch (next) {
    case State::kClosing:
    case State::kDraining:
      period_end_ = periodAfter(now);
      break;
    default:
      break;
  }
  state_ = next;
}

uint64_t Connection::periodAfter(uint64_t now) const {
  // RFC 9000 §10.2: the closing and draining periods last at least three PTOs.
  return now + 3 * ngtcp2_conn_get_pto(conn_);
}

void Connection::receive(const Datagram& d, uint64_t now) {
  switch (state_) {
    case State::kHandshake:
    case State::kOpen:
      break;
    case State::kClosing:
      // Late packets get our CONNECTION_CLOSE again, at a falling rate (RFC 9000 §10.2.1).
      ++close_packets_seen_;
      return;
    case State::kNew:
    case State::kDraining:
    case State::kGone:
      return;
  }
  last_now_ = now;
  SocketAddress local = d.local;
  SocketAddress remote = d.remote;
  ngtcp2_path path{ngtcpAddr(local), ngtcpAddr(remote), nullptr};
  ngtcp2_pkt_info info{d.ecn};
  int rv = ngtcp2_conn_read_pkt(conn_, &path, &info, d.data, d.len, now);
  if (rv != 0) {
    onReadError(rv, now);
    return;
  }
  notePathChange();
}

void Connection::notePathChange() {
  // RFC 9000 §9: a client that sends from a new address moves the connection there (ngtcp2
  // validates the path and switches); each move is one migration, NAT rebindings included.
  const ngtcp2_path* path = ngtcp2_conn_get_path(conn_);
  if (path->remote.addrlen == peer_.len &&
      std::memcmp(path->remote.addr, &peer_.storage, peer_.len) == 0) {
    return;
  }
  std::memcpy(&peer_.storage, path->remote.addr, path->remote.addrlen);
  peer_.len = path->remote.addrlen;
  ++stats_.migrations;
}

void Connection::onReadError(int rv, uint64_t now) {
  switch (rv) {
    case NGTCP2_ERR_DRAINING:
      enterState(State::kDraining, now);
      return;
    case NGTCP2_ERR_RETRY:
    case NGTCP2_ERR_DROP_CONN:
      enterState(State::kGone, now);
      return;
    case NGTCP2_ERR_CRYPTO:
      if (last_error_.error_code == 0) {
        ngtcp2_connection_close_error_set_transport_error_tls_alert(
            &last_error_, ngtcp2_conn_get_tls_alert(conn_), nullptr, 0);
      }
      break;
    case NGTCP2_ERR_CALLBACK_FAILURE:
      // failWith() set the application's code, or a TLS callback failed.
      if (last_error_.error_code == 0 &&
          last_error_.type != NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION) {
        ngtcp2_connection_close_error_set_transport_error_liberr(&last_error_, rv, nullptr, 0);
      }
      break;
    default:
      if (last_error_.error_code == 0) {
        ngtcp2_connection_close_error_set_transport_error_liberr(&last_error_, rv, nullptr, 0);
      }
      break;
  }
  LOG_DEBUG("QUIC connection error: %s", ngtcp2_strerror(rv));
  enterClosing(now);
}

void Connection::failWith(uint64_t app_error_code) {
  ngtcp2_connection_close_error_set_application_error(&last_error_, app_error_code, nullptr, 0);
}

void Connection::close(uint64_t app_error_code) {
  if (state_ != State::kHandshake && state_ != State::kOpen) return;
  failWith(app_error_code);
  enterClosing(last_now_);
}

void Connection::enterClosing(uint64_t now) {
  if (state_ == State::kClosing || state_ == State::kDraining || state_ == State::kGone) return;
  if (ngtcp2_conn_is_in_draining_period(conn_)) {
    enterState(State::kDraining, now);
    return;
  }
  close_packet_.resize(kClosePacketMax);
  ngtcp2_path_storage_zero(&close_path_);
  ngtcp2_pkt_info info{};
  ngtcp2_ssize n =
      ngtcp2_conn_write_connection_close(conn_, &close_path_.path, &info, close_packet_.data(),
                                         close_packet_.size(), &last_error_, now);
  if (n <= 0) {
    // Nothing to say it with (no keys yet, or the handshake never started): just go.
    close_packet_.clear();
    enterState(State::kGone, now);
    return;
  }
  close_packet_.resize(static_cast<size_t>(n));
  close_packets_seen_ = 1;  // the first write() sends it
  close_resend_at_ = 1;
  enterState(State::kClosing, now);
}

void Connection::sendClosePacket(DatagramSender& out) {
  if (close_packet_.empty() || close_packets_seen_ < close_resend_at_) return;
  out.send(close_path_.path.local, close_path_.path.remote, 0, close_packet_.data(),
           close_packet_.size(), close_packet_.size());
  close_resend_at_ *= 2;  // then after 2, 4, 8, ... more packets
}

uint64_t Connection::expiry() const {
  switch (state_) {
    case State::kHandshake:
    case State::kOpen:
      return ngtcp2_conn_get_expiry(conn_);
    case State::kClosing:
    case State::kDraining:
      return period_end_;
    case State::kNew:
    case State::kGone:
      break;
  }
  return UINT64_MAX;
}

void Connection::handleExpiry(uint64_t now) {
  last_now_ = now;
  switch (state_) {
    case State::kHandshake:
    case State::kOpen:
      break;
    case State::kClosing:
    case State::kDraining:
      if (now >= period_end_) enterState(State::kGone, now);
      return;
    case State::kNew:
    case State::kGone:
      return;
  }
  int rv = ngtcp2_conn_handle_expiry(conn_, now);
  if (rv == 0) return;
  if (rv == NGTCP2_ERR_IDLE_CLOSE || rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
    // RFC 9000 §10.1: an idle timeout closes silently.
    enterState(State::kGone, now);
    return;
  }
  ngtcp2_connection_close_error_set_transport_error_liberr(&last_error_, rv, nullptr, 0);
  enterClosing(now);
}

bool Connection::write(uint64_t now, DatagramSender& out, uint8_t* buf, size_t cap) {
  last_now_ = now;
  switch (state_) {
    case State::kHandshake:
    case State::kOpen:
      return writePackets(now, out, buf, cap);
    case State::kClosing:
      sendClosePacket(out);
      return false;
    case State::kNew:
    case State::kDraining:
    case State::kGone:
      return false;
  }
  return false;
}

bool Connection::openUniStream(int64_t& stream_id) {
  return ngtcp2_conn_open_uni_stream(conn_, &stream_id, nullptr) == 0;
}

void Connection::consumed(int64_t stream_id, size_t n) {
  ngtcp2_conn_extend_max_stream_offset(conn_, stream_id, n);
  ngtcp2_conn_extend_max_offset(conn_, n);
}

void Connection::allowAnotherStream() {
  ngtcp2_conn_extend_max_streams_bidi(conn_, 1);
}

void Connection::shutdownStreamRead(int64_t stream_id, uint64_t app_error_code) {
  ngtcp2_conn_shutdown_stream_read(conn_, stream_id, app_error_code);
}

void Connection::shutdownStreamWrite(int64_t stream_id, uint64_t app_error_code) {
  ngtcp2_conn_shutdown_stream_write(conn_, stream_id, app_error_code);
}

void Connection::noteStreamLosses(int64_t stream_id) {
  if (conn_ != nullptr) stats_.lost_packets += ngtcp2_conn_get_stream_loss_count(conn_, stream_id);
}

void Connection::offerToken(const uint8_t* token, size_t len) {
  ngtcp2_conn_submit_new_token(conn_, token, len);
}

}  // namespace scalws::worker::quic
