#include "worker/quic/endpoint.h"

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <algorithm>

#include "common/log.h"

namespace scalws::worker::quic {
namespace {

// RFC 9000 §14.1: a client's Initial travels in a datagram of at least 1200 bytes; smaller
// ones are dropped, and nothing larger than what came is ever sent back before the address
// is validated.
constexpr size_t kMinInitialDatagram = 1200;
// RFC 9000 §10.3: a Stateless Reset is at least 21 bytes (5 unpredictable + 16 of token)
// and must be shorter than the packet that triggered it.
constexpr size_t kMinReset = NGTCP2_MIN_STATELESS_RESET_RANDLEN + NGTCP2_STATELESS_RESET_TOKENLEN;
constexpr size_t kMaxReset = 41;

uint64_t toMs(uint64_t ns) {
  return ns / 1'000'000;
}

}  // namespace

Endpoint::Endpoint(const EndpointSettings& settings, std::shared_ptr<const TlsContext> tls,
                   DatagramSender& sender, ConnectionFactory& factory)
    : settings_(settings),
      tls_(std::move(tls)),
      sender_(sender),
      factory_(factory),
      tokens_(tls_->secrets().token),
      send_buffer_(new uint8_t[kSendBuffer]) {}

Endpoint::~Endpoint() = default;

bool Endpoint::newId(ngtcp2_cid& cid) const {
  // Random IDs of 14 bytes do not collide in practice; checking costs one lookup.
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool made = settings_.front_routed ? makeRoutedConnectionId(settings_.route, cid)
                                       : makeConnectionId(settings_.steering_id, cid);
    if (!made) return false;
    if (routes_.find(CidKey(cid)) == routes_.end()) return true;
  }
  return false;
}

void Endpoint::onDatagram(const Datagram& d, uint64_t now, uint64_t unix_ns, bool from_front) {
  unix_now_ = unix_ns;
  ngtcp2_version_cid vc;
  int rv = ngtcp2_pkt_decode_version_cid(&vc, d.data, d.len, kCidLength);
  if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
    sendVersionNegotiation(vc, d);
    return;
  }
  if (rv != 0) {
    ++counters_.dropped;
    return;
  }
  auto route = routes_.find(CidKey(vc.dcid, vc.dcidlen));
  if (route != routes_.end()) {
    deliver(*route->second, d, now);
    return;
  }
  if (settings_.front_routed && !from_front) {
    // Our socket of a shared group got what the front should have: no connection starts
    // here without the front having read its name.
    ++counters_.dropped;
    return;
  }
  if ((d.data[0] & 0x80) != 0) {
    acceptInitial(d, now, unix_ns);
  } else {
    sendStatelessReset(vc, d, now);
  }
}

void Endpoint::deliver(EndpointConnection& connection, const Datagram& d, uint64_t now) {
  connection.onDatagram(d, now);
  if (!connection.endpoint_queued) {
    connection.endpoint_queued = true;
    batch_.push_back(&connection);
  }
}

void Endpoint::endBatch(uint64_t now) {
  // A connection's afterDatagrams() may end it (remove() takes it out of batch_ first).
  for (size_t i = 0; i < batch_.size(); ++i) {
    EndpointConnection* c = batch_[i];
    if (c == nullptr) continue;
    c->endpoint_queued = false;
    c->afterDatagrams(now);
  }
  batch_.clear();
}

void Endpoint::acceptInitial(const Datagram& d, uint64_t now, uint64_t unix_ns) {
  if (d.len < kMinInitialDatagram) {
    ++counters_.dropped;
    return;
  }
  ngtcp2_pkt_hd hd;
  int rv = ngtcp2_accept(&hd, d.data, d.len);
  if (rv == NGTCP2_ERR_RETRY) {
    // 0-RTT for a connection we do not know: make the client start over, validated.
    sendRetry(hd, d, unix_ns);
    return;
  }
  if (rv != 0) {
    ++counters_.dropped;
    return;
  }
  if (!factory_.admitsConnection()) {
    sendRefusal(hd, d, NGTCP2_CONNECTION_REFUSED, now);
    return;
  }
  const sockaddr* client = d.remote.get();
  ngtcp2_cid original_dcid;
  const ngtcp2_cid* odcid = nullptr;
  bool validated = false;
  if (hd.token.len > 0) {
    if (hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
      // RFC 9000 §8.1.2: a Retry token we cannot accept ends the attempt with INVALID_TOKEN.
      if (!tokens_.checkRetryToken(hd.token.base, hd.token.len, hd.version, client, d.remote.len,
                                   hd.dcid, unix_ns, original_dcid)) {
        ++counters_.bad_tokens;
        sendRefusal(hd, d, NGTCP2_INVALID_TOKEN, now);
        return;
      }
      odcid = &original_dcid;
      validated = true;
    } else if (tokens_.checkRegularToken(hd.token.base, hd.token.len, client, d.remote.len,
                                         unix_ns)) {
      validated = true;
    }
  }
  if (!validated && (settings_.retry_always || handshaking_ >= settings_.retry_above)) {
    sendRetry(hd, d, unix_ns);
    return;
  }
  if (!validated) hd.token = ngtcp2_vec{nullptr, 0};

  ngtcp2_cid scid;
  uint8_t reset_token[NGTCP2_STATELESS_RESET_TOKENLEN];
  if (!newId(scid) || !tokens_.resetToken(scid, reset_token)) {
    ++counters_.dropped;
    return;
  }
  Connection::Start start;
  start.initial = &hd;
  start.original_dcid = odcid;
  start.address_validated = validated;
  start.scid = scid;
  start.reset_token = reset_token;
  start.datagram = &d;
  start.now = now;
  EndpointConnection* connection = factory_.createConnection(start);
  if (connection == nullptr) {
    ++counters_.dropped;
    return;
  }
  Entry& entry = entries_[&connection->transport()];
  entry.connection = connection;
  // Our ID, and the one the client chose: its Initials (and 0-RTT) keep using that until
  // our first packet reaches it.
  for (const CidKey& key : {CidKey(scid), CidKey(hd.dcid)}) {
    if (routes_.emplace(key, connection).second) entry.ids.push_back(key);
  }
  ++handshaking_;
  ++counters_.handshakes;
  deliver(*connection, d, now);
}

void Endpoint::remove(EndpointConnection& connection) {
  auto it = entries_.find(&connection.transport());
  if (it == entries_.end()) return;
  for (const CidKey& key : it->second.ids) routes_.erase(key);
  if (it->second.handshaking) --handshaking_;
  entries_.erase(it);
  if (connection.endpoint_queued) {
    std::replace(batch_.begin(), batch_.end(), &connection,
                 static_cast<EndpointConnection*>(nullptr));
    connection.endpoint_queued = false;
  }
}

void Endpoint::onHandshakeCompleted(EndpointConnection& connection) {
  auto it = entries_.find(&connection.transport());
  if (it == entries_.end() || !it->second.handshaking) return;
  it->second.handshaking = false;
  --handshaking_;
  ++counters_.handshakes_completed;
  // A listener that asks for address validation need not send this client a Retry again
  // for an hour (TokenIssuer::kRegularTokenLifetime).
  Connection& transport = connection.transport();
  const ngtcp2_path* path = transport.path();
  uint8_t token[TokenIssuer::kMaxRegularToken];
  size_t len = tokens_.makeRegularToken(token, path->remote.addr,
                                        static_cast<socklen_t>(path->remote.addrlen), unix_now_);
  if (len > 0) transport.offerToken(token, len);
}

bool Endpoint::issue(Connection& connection, ngtcp2_cid& cid, uint8_t* reset_token) noexcept {
  auto it = entries_.find(&connection);
  if (it == entries_.end() || !newId(cid) || !tokens_.resetToken(cid, reset_token)) return false;
  CidKey key(cid);
  routes_.emplace(key, it->second.connection);
  it->second.ids.push_back(key);
  return true;
}

void Endpoint::retire(const ngtcp2_cid& cid) noexcept {
  auto route = routes_.find(CidKey(cid));
  if (route == routes_.end()) return;
  auto it = entries_.find(&route->second->transport());
  if (it != entries_.end()) {
    auto& ids = it->second.ids;
    ids.erase(std::remove(ids.begin(), ids.end(), CidKey(cid)), ids.end());
  }
  routes_.erase(route);
}

void Endpoint::sendBytes(const Datagram& d, const uint8_t* data, size_t len) {
  SocketAddress local = d.local;
  SocketAddress remote = d.remote;
  sender_.send(ngtcpAddr(local), ngtcpAddr(remote), 0, data, len, len);
}

void Endpoint::sendRetry(const ngtcp2_pkt_hd& hd, const Datagram& d, uint64_t unix_ns) {
  ngtcp2_cid scid;
  if (!newId(scid)) return;
  uint8_t token[TokenIssuer::kMaxRetryToken];
  size_t token_len = tokens_.makeRetryToken(token, hd.version, d.remote.get(), d.remote.len, scid,
                                            hd.dcid, unix_ns);
  if (token_len == 0) return;
  uint8_t* buf = send_buffer_.get();
  ngtcp2_ssize n =
      ngtcp2_crypto_write_retry(buf, std::min<size_t>(kSendBuffer, d.len * 3), hd.version, &hd.scid,
                                &scid, &hd.dcid, token, token_len);
  if (n <= 0) return;
  ++counters_.retries;
  sendBytes(d, buf, static_cast<size_t>(n));
}

void Endpoint::sendRefusal(const ngtcp2_pkt_hd& hd, const Datagram& d, uint64_t error_code,
                           uint64_t now) {
  if (!reply_budget_.take(toMs(now))) return;
  if (error_code == NGTCP2_CONNECTION_REFUSED) ++counters_.refused;
  uint8_t* buf = send_buffer_.get();
  ngtcp2_ssize n = ngtcp2_crypto_write_connection_close(
      buf, NGTCP2_MAX_UDP_PAYLOAD_SIZE, hd.version, &hd.scid, &hd.dcid, error_code, nullptr, 0);
  if (n > 0) sendBytes(d, buf, static_cast<size_t>(n));
}

void Endpoint::sendVersionNegotiation(const ngtcp2_version_cid& vc, const Datagram& d) {
  // RFC 9000 §6.1: only for a datagram large enough to be a client's first Initial.
  if (d.len < kMinInitialDatagram) {
    ++counters_.dropped;
    return;
  }
  uint8_t unused = 0;
  gnutls_rnd(GNUTLS_RND_NONCE, &unused, 1);
  // A reserved version (RFC 9000 §15: 0x?a?a?a?a) keeps clients from relying on the list.
  const uint32_t versions[] = {0x1a2a3a4au, NGTCP2_PROTO_VER_V1};
  uint8_t* buf = send_buffer_.get();
  ngtcp2_ssize n =
      ngtcp2_pkt_write_version_negotiation(buf, NGTCP2_MAX_UDP_PAYLOAD_SIZE, unused, vc.scid,
                                           vc.scidlen, vc.dcid, vc.dcidlen, versions, 2);
  if (n <= 0) return;
  ++counters_.version_negotiations;
  sendBytes(d, buf, static_cast<size_t>(n));
}

void Endpoint::sendStatelessReset(const ngtcp2_version_cid& vc, const Datagram& d, uint64_t now) {
  // Smaller than the trigger, so two endpoints can never reset each other in a loop.
  if (d.len <= kMinReset || vc.dcidlen == 0 || !reply_budget_.take(toMs(now))) {
    ++counters_.dropped;
    return;
  }
  size_t len = std::min(d.len - 1, kMaxReset);
  ngtcp2_cid cid;
  ngtcp2_cid_init(&cid, vc.dcid, vc.dcidlen);
  uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN];
  uint8_t unpredictable[kMaxReset];
  size_t rand_len = len - NGTCP2_STATELESS_RESET_TOKENLEN;
  if (!tokens_.resetToken(cid, token) ||
      gnutls_rnd(GNUTLS_RND_NONCE, unpredictable, rand_len) != 0) {
    return;
  }
  uint8_t* buf = send_buffer_.get();
  ngtcp2_ssize n =
      ngtcp2_pkt_write_stateless_reset(buf, kSendBuffer, token, unpredictable, rand_len);
  if (n <= 0) return;
  ++counters_.resets;
  sendBytes(d, buf, static_cast<size_t>(n));
}

}  // namespace scalws::worker::quic
