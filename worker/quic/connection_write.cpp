// Connection::writePackets: stream data from the Application into packets, packets into
// GSO trains. Adapted from the shape of ngtcp2's example server: ask the application for
// the next stream data, let ngtcp2 pack it (WRITE_MORE coalesces frames of several
// streams into one packet), and send a train when the path, the ECN mark or the packet
// size changes, or when the send quantum is reached.
#include <algorithm>

#include "common/log.h"
#include "worker/quic/connection.h"

namespace scalws::worker::quic {
namespace {

// Trains per write() call: enough to fill a congestion window burst, few enough that one
// connection cannot keep the loop from the others.
constexpr int kTrainsPerWrite = 4;
// The kernel takes at most 64 segments per GSO send.
constexpr size_t kMaxSegments = 64;

}  // namespace

bool Connection::writePackets(uint64_t now, DatagramSender& out, uint8_t* buf, size_t cap) {
  const size_t max_payload = ngtcp2_conn_get_max_tx_udp_payload_size(conn_);
  const size_t path_max = ngtcp2_conn_get_path_max_tx_udp_payload_size(conn_);
  size_t quantum = ngtcp2_conn_get_send_quantum(conn_) / max_payload;

  for (int train = 0; train < kTrainsPerWrite; ++train) {
    // Packets straight into the sender's queue where it has one (no copy), else into buf.
    uint8_t* base = buf;
    size_t room = cap;
    if (std::span<uint8_t> space = out.sendSpace(); space.size() >= max_payload) {
      base = space.data();
      room = space.size();
    }
    const size_t max_packets =
        std::max<size_t>(1, std::min({quantum, room / max_payload, kMaxSegments}));
    ngtcp2_path_storage ps;
    ngtcp2_path_storage first_path;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_path_storage_zero(&first_path);
    uint8_t* pos = base;
    size_t packets = 0;
    size_t segment = 0;
    uint32_t first_ecn = 0;
    ngtcp2_pkt_info info{};
    auto sendTrain = [&](size_t len) {
      if (len > 0)
        out.send(first_path.path.local, first_path.path.remote, static_cast<uint8_t>(first_ecn),
                 base, len, segment);
    };
    for (;;) {
      Application::Outgoing o;
      if (app_ready_ && ngtcp2_conn_get_max_data_left(conn_) > 0 && !app_.nextOutgoing(o)) {
        enterClosing(now);
        return false;
      }
      ngtcp2_ssize written = -1;
      uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
      if (o.fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
      ngtcp2_ssize n = ngtcp2_conn_writev_stream(conn_, &ps.path, &info, pos, max_payload, &written,
                                                 flags, o.stream_id, o.vecs, o.count, now);
      if (n < 0) {
        switch (n) {
          case NGTCP2_ERR_STREAM_DATA_BLOCKED:
            app_.onOutgoingBlocked(o.stream_id);
            continue;
          case NGTCP2_ERR_STREAM_SHUT_WR:
            app_.onOutgoingShut(o.stream_id);
            continue;
          case NGTCP2_ERR_WRITE_MORE:
            if (!app_.onOutgoingWritten(o.stream_id, static_cast<size_t>(written))) {
              enterClosing(now);
              return false;
            }
            continue;
          default:
            LOG_DEBUG("QUIC write: %s", ngtcp2_strerror(static_cast<int>(n)));
            ngtcp2_connection_close_error_set_transport_error_liberr(
                &last_error_, static_cast<int>(n), nullptr, 0);
            enterClosing(now);
            return false;
        }
      }
      if (written >= 0 && !app_.onOutgoingWritten(o.stream_id, static_cast<size_t>(written))) {
        enterClosing(now);
        return false;
      }
      if (n == 0) {
        // Nothing more now (or congestion-limited): send what the train holds.
        sendTrain(static_cast<size_t>(pos - base));
        ngtcp2_conn_update_pkt_tx_time(conn_, now);
        return false;
      }
      size_t size = static_cast<size_t>(n);
      if (packets == 0) {
        ngtcp2_path_copy(&first_path.path, &ps.path);
        first_ecn = info.ecn;
        segment = size;
      } else if (!ngtcp2_path_eq(&first_path.path, &ps.path) || first_ecn != info.ecn ||
                 size > segment || (segment > path_max && size != segment)) {
        // This packet cannot ride in the train: send the train, then it alone.
        sendTrain(static_cast<size_t>(pos - base));
        out.send(ps.path.local, ps.path.remote, static_cast<uint8_t>(info.ecn), pos, size, size);
        ngtcp2_conn_update_pkt_tx_time(conn_, now);
        break;
      }
      pos += size;
      if (++packets == max_packets || size < segment) {
        // Full, or a short packet that can only be a train's last.
        sendTrain(static_cast<size_t>(pos - base));
        ngtcp2_conn_update_pkt_tx_time(conn_, now);
        break;
      }
    }
  }
  return true;  // stopped with trains left to send
}

}  // namespace scalws::worker::quic
