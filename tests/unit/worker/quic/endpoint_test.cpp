// The Endpoint with real connections and a real client, through memory: handshakes,
// Retry, refusals, resets, version negotiation and what it drops.
#include "worker/quic/endpoint.h"

#include <gtest/gtest.h>

#include "tests/unit/worker/quic/quic_test_harness.h"

namespace scalws::worker::quic {
namespace {

using ::scalws::testing::QuicTestClient;
using testing::addressOf;
using testing::EndpointHarness;

const sockaddr_in kClient = addressOf("127.0.0.1", 50000);

std::vector<uint8_t> firstInitial(QuicTestClient& client, uint64_t now) {
  auto out = client.write(now);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? std::vector<uint8_t>() : out.front();
}

TEST(Endpoint, HandshakeCompletesWithoutASocket) {
  EndpointHarness h;
  QuicTestClient client(kClient, h.server);
  ASSERT_TRUE(client.valid());
  h.pump(client);
  EXPECT_TRUE(client.handshakeCompleted());
  ASSERT_EQ(h.factory.made.size(), 1u);
  EXPECT_TRUE(h.factory.made[0]->conn.stats().handshake_completed);
  EXPECT_EQ(h.endpoint->counters().handshakes, 1u);
  EXPECT_EQ(h.endpoint->counters().handshakes_completed, 1u);
  EXPECT_EQ(h.endpoint->handshakesInProgress(), 0u);
  // The client now talks to an ID of ours: it names this socket for the steering program.
  const ngtcp2_cid* dcid = ngtcp2_conn_get_dcid(client.raw());
  EXPECT_EQ(dcid->datalen, kCidLength);
  EXPECT_EQ(steeringIdOf(dcid->data, dcid->datalen), 3);
  EXPECT_FALSE(h.factory.starts[0].address_validated);
}

TEST(Endpoint, OnASharedAddressOnlyTheFrontStartsConnections) {
  EndpointSettings settings;
  settings.front_routed = true;
  settings.route = {1, 2, 3, 4, 5, 6, 7};
  EndpointHarness h(settings);
  QuicTestClient client(kClient, h.server);
  // Straight from the socket (the group's program sent it here by mistake): nothing starts.
  h.deliver(firstInitial(client, h.now), kClient);
  h.endBatch();
  EXPECT_TRUE(h.factory.made.empty());
  EXPECT_EQ(h.endpoint->counters().dropped, 1u);
  EXPECT_TRUE(h.recorder.take().empty());
  // Passed on by the front: served, and the IDs issued start with the route.
  h.from_front = true;
  QuicTestClient passed(kClient, h.server);
  h.pump(passed);
  EXPECT_TRUE(passed.handshakeCompleted());
  const ngtcp2_cid* dcid = ngtcp2_conn_get_dcid(passed.raw());
  ASSERT_EQ(dcid->datalen, kCidLength);
  EXPECT_EQ(std::vector<uint8_t>(dcid->data, dcid->data + 7),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(Endpoint, TheClientsServerNamePicksTheCertificateAsOnTcp) {
  EndpointHarness h;
  struct Case {
    const char* sni;
    const char* cn;
  };
  for (Case c : {Case{"site.test", "site.test"}, Case{"other.test", "other.test"},
                 Case{"unknown.test", "site.test"}}) {
    QuicTestClient client(kClient, h.server, NGTCP2_PROTO_VER_V1, {}, c.sni);
    ASSERT_TRUE(client.valid());
    h.pump(client);
    ASSERT_TRUE(client.handshakeCompleted()) << c.sni;
    EXPECT_EQ(client.peerCommonName(), c.cn) << c.sni;
  }
}

TEST(Endpoint, RetryAlwaysThenTheTokenIsAccepted) {
  EndpointSettings settings;
  settings.retry_always = true;
  EndpointHarness h(settings);
  QuicTestClient client(kClient, h.server);
  h.deliver(firstInitial(client, h.now), kClient);
  h.endBatch();
  EXPECT_TRUE(h.factory.made.empty());  // no state for an unvalidated address
  EXPECT_EQ(h.endpoint->counters().retries, 1u);
  auto retry = h.recorder.take();
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(client.read(retry[0].data, h.now), 0);
  EXPECT_TRUE(client.retried());
  h.pump(client);
  EXPECT_TRUE(client.handshakeCompleted());
  ASSERT_EQ(h.factory.made.size(), 1u);
  EXPECT_TRUE(h.factory.starts[0].address_validated);
  EXPECT_NE(h.factory.starts[0].original_dcid, nullptr);
  EXPECT_EQ(h.endpoint->counters().retries, 1u);
}

TEST(Endpoint, ANewTokenSparesTheNextConnectionItsRetry) {
  EndpointSettings settings;
  settings.retry_always = true;
  EndpointHarness h(settings);
  QuicTestClient first(kClient, h.server);
  h.pump(first);
  ASSERT_TRUE(first.handshakeCompleted());
  ASSERT_FALSE(first.newToken().empty());  // sent once the handshake was done
  EXPECT_EQ(first.newToken()[0], NGTCP2_CRYPTO_TOKEN_MAGIC_REGULAR);
  EXPECT_EQ(h.endpoint->counters().retries, 1u);

  // From another port of the same address, later: validated by the token alone.
  const sockaddr_in next_port = addressOf("127.0.0.1", 50003);
  QuicTestClient second(next_port, h.server, NGTCP2_PROTO_VER_V1, first.newToken());
  h.pump(second);
  EXPECT_TRUE(second.handshakeCompleted());
  EXPECT_FALSE(second.retried());
  EXPECT_EQ(h.endpoint->counters().retries, 1u);
  ASSERT_EQ(h.factory.starts.size(), 2u);
  EXPECT_TRUE(h.factory.starts[1].address_validated);
  EXPECT_EQ(h.factory.starts[1].original_dcid, nullptr);

  // From another address it is worth nothing: a Retry again.
  const sockaddr_in elsewhere = addressOf("127.0.0.2", 50004);
  QuicTestClient third(elsewhere, h.server, NGTCP2_PROTO_VER_V1, first.newToken());
  h.deliver(firstInitial(third, h.now), elsewhere);
  h.endBatch();
  EXPECT_EQ(h.endpoint->counters().retries, 2u);
}

TEST(Endpoint, RetryTokenFromAnotherAddressIsRefused) {
  EndpointSettings settings;
  settings.retry_always = true;
  EndpointHarness h(settings);
  QuicTestClient client(kClient, h.server);
  h.deliver(firstInitial(client, h.now), kClient);
  h.endBatch();
  auto retry = h.recorder.take();
  ASSERT_EQ(retry.size(), 1u);
  ASSERT_EQ(client.read(retry[0].data, h.now), 0);
  auto with_token = client.write(h.now + 1000);
  ASSERT_FALSE(with_token.empty());
  h.deliver(with_token[0], addressOf("127.0.0.1", 50001));
  h.endBatch();
  EXPECT_TRUE(h.factory.made.empty());
  EXPECT_EQ(h.endpoint->counters().bad_tokens, 1u);
  ASSERT_EQ(h.recorder.sent.size(), 1u);  // CONNECTION_CLOSE(INVALID_TOKEN)
}

TEST(Endpoint, RetryOnlyPastTheHandshakesInProgressLimit) {
  EndpointSettings settings;
  settings.retry_above = 1;
  EndpointHarness h(settings);
  QuicTestClient first(kClient, h.server);
  h.deliver(firstInitial(first, h.now), kClient);  // its handshake stays unfinished
  h.endBatch();
  h.recorder.take();
  EXPECT_EQ(h.factory.made.size(), 1u);
  EXPECT_EQ(h.endpoint->handshakesInProgress(), 1u);
  const sockaddr_in other = addressOf("127.0.0.1", 50002);
  QuicTestClient second(other, h.server);
  h.deliver(firstInitial(second, h.now), other);
  h.endBatch();
  EXPECT_EQ(h.factory.made.size(), 1u);
  EXPECT_EQ(h.endpoint->counters().retries, 1u);
}

TEST(Endpoint, RefusesWhenTheLoopTakesNoMoreConnections) {
  EndpointHarness h;
  h.factory.admit = false;
  QuicTestClient client(kClient, h.server);
  h.deliver(firstInitial(client, h.now), kClient);
  h.endBatch();
  EXPECT_TRUE(h.factory.made.empty());
  EXPECT_EQ(h.endpoint->counters().refused, 1u);
  auto sent = h.recorder.take();
  ASSERT_EQ(sent.size(), 1u);
  // CONNECTION_CLOSE(CONNECTION_REFUSED) in an Initial the client can read.
  EXPECT_EQ(client.read(sent[0].data, h.now), NGTCP2_ERR_DRAINING);
}

TEST(Endpoint, UnknownShortHeaderGetsASmallerStatelessReset) {
  EndpointHarness h;
  ngtcp2_cid cid;
  ASSERT_TRUE(makeConnectionId(3, cid));
  std::vector<uint8_t> packet(60, 0x5a);
  packet[0] = 0x41;
  std::memcpy(packet.data() + 1, cid.data, cid.datalen);
  h.deliver(packet, kClient);
  auto sent = h.recorder.take();
  ASSERT_EQ(sent.size(), 1u);
  const auto& reset = sent[0].data;
  EXPECT_LT(reset.size(), packet.size());
  EXPECT_GE(reset.size(), 21u);
  EXPECT_EQ(reset[0] & 0xc0, 0x40);  // looks like a short-header packet
  uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN];
  ASSERT_TRUE(h.endpoint->tokens().resetToken(cid, token));
  EXPECT_EQ(0, memcmp(reset.data() + reset.size() - sizeof(token), token, sizeof(token)));

  // Too short to answer with anything shorter: silence.
  packet.resize(21);
  h.deliver(packet, kClient);
  EXPECT_TRUE(h.recorder.take().empty());
}

TEST(Endpoint, StatelessResetsAreRateLimited) {
  EndpointHarness h;
  std::vector<uint8_t> packet(60, 0x11);
  packet[0] = 0x40;
  for (int i = 0; i < 2000; ++i) {
    packet[5] = static_cast<uint8_t>(i);
    h.deliver(packet, kClient);
  }
  size_t sent = h.recorder.take().size();
  EXPECT_GT(sent, 0u);
  EXPECT_LE(sent, 250u);
}

TEST(Endpoint, UnknownVersionGetsVersionNegotiation) {
  EndpointHarness h;
  QuicTestClient client(kClient, h.server);
  auto packet = firstInitial(client, h.now);
  ASSERT_GE(packet.size(), 1200u);
  packet[1] = 0x0a, packet[2] = 0x0b, packet[3] = 0x0c, packet[4] = 0x0d;
  h.deliver(packet, kClient);
  auto sent = h.recorder.take();
  ASSERT_EQ(sent.size(), 1u);
  const auto& vn = sent[0].data;
  ASSERT_GT(vn.size(), 7u);
  EXPECT_EQ(vn[0] & 0x80, 0x80);
  EXPECT_EQ(0, vn[1] | vn[2] | vn[3] | vn[4]);  // version 0: Version Negotiation
  bool lists_v1 = false;
  for (size_t i = vn.size() - 4; i + 4 <= vn.size() && i > 6; i -= 4) {
    lists_v1 = lists_v1 || (vn[i] == 0 && vn[i + 1] == 0 && vn[i + 2] == 0 && vn[i + 3] == 1);
  }
  EXPECT_TRUE(lists_v1);
  // Only for datagrams as large as a first Initial must be (no amplification).
  packet.resize(1000);
  h.deliver(packet, kClient);
  EXPECT_TRUE(h.recorder.take().empty());
}

TEST(Endpoint, TruncatedOrUndersizedInitialsAreDropped) {
  EndpointHarness h;
  QuicTestClient client(kClient, h.server);
  auto packet = firstInitial(client, h.now);
  for (size_t len : {1ul, 5ul, 40ul, 1000ul, 1199ul}) {
    h.deliver(std::vector<uint8_t>(packet.begin(), packet.begin() + len), kClient);
  }
  h.endBatch();
  EXPECT_TRUE(h.factory.made.empty());
  EXPECT_TRUE(h.recorder.take().empty());
  EXPECT_EQ(h.endpoint->counters().dropped, 5u);
  // The same Initial whole still opens a connection.
  h.deliver(packet, kClient);
  EXPECT_EQ(h.factory.made.size(), 1u);
}

TEST(Endpoint, RemovedConnectionsRouteNowhere) {
  EndpointHarness h;
  QuicTestClient client(kClient, h.server);
  h.pump(client);
  ASSERT_EQ(h.factory.made.size(), 1u);
  EXPECT_EQ(h.endpoint->connectionCount(), 1u);
  const ngtcp2_cid* ours = ngtcp2_conn_get_dcid(client.raw());
  std::vector<uint8_t> packet(60, 0x22);
  packet[0] = 0x40;
  std::memcpy(packet.data() + 1, ours->data, ours->datalen);
  h.endpoint->remove(*h.factory.made[0]);
  EXPECT_EQ(h.endpoint->connectionCount(), 0u);
  h.deliver(packet, kClient);
  EXPECT_EQ(h.recorder.take().size(), 1u);  // a stateless reset: nobody owns it now
}

}  // namespace
}  // namespace scalws::worker::quic
