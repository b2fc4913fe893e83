#include "worker/quic/token_issuer.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "worker/quic/connection_id.h"

namespace scalws::worker::quic {
namespace {

constexpr uint64_t kNow = 1'700'000'000ull * NGTCP2_SECONDS;

sockaddr_in client(const char* ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

std::array<uint8_t, 32> secret(uint8_t fill) {
  std::array<uint8_t, 32> s;
  s.fill(fill);
  return s;
}

const sockaddr* sa(const sockaddr_in& a) {
  return reinterpret_cast<const sockaddr*>(&a);
}

TEST(TokenIssuer, RetryTokenComesBackWithTheOriginalDcid) {
  TokenIssuer tokens(secret(1));
  sockaddr_in from = client("192.0.2.7", 4433);
  ngtcp2_cid retry_scid;
  ngtcp2_cid odcid;
  ASSERT_TRUE(makeConnectionId(0, retry_scid));
  ASSERT_TRUE(makeConnectionId(9, odcid));
  uint8_t token[TokenIssuer::kMaxRetryToken];
  size_t len = tokens.makeRetryToken(token, NGTCP2_PROTO_VER_V1, sa(from), sizeof(from), retry_scid,
                                     odcid, kNow);
  ASSERT_GT(len, 0u);
  ngtcp2_cid got;
  ASSERT_TRUE(tokens.checkRetryToken(token, len, NGTCP2_PROTO_VER_V1, sa(from), sizeof(from),
                                     retry_scid, kNow + NGTCP2_SECONDS, got));
  EXPECT_TRUE(ngtcp2_cid_eq(&got, &odcid));

  // Another port, another DCID, another secret, or too late: refused.
  sockaddr_in moved = client("192.0.2.7", 4434);
  EXPECT_FALSE(tokens.checkRetryToken(token, len, NGTCP2_PROTO_VER_V1, sa(moved), sizeof(moved),
                                      retry_scid, kNow, got));
  EXPECT_FALSE(tokens.checkRetryToken(token, len, NGTCP2_PROTO_VER_V1, sa(from), sizeof(from),
                                      odcid, kNow, got));
  EXPECT_FALSE(TokenIssuer(secret(2)).checkRetryToken(token, len, NGTCP2_PROTO_VER_V1, sa(from),
                                                      sizeof(from), retry_scid, kNow, got));
  EXPECT_FALSE(tokens.checkRetryToken(token, len, NGTCP2_PROTO_VER_V1, sa(from), sizeof(from),
                                      retry_scid, kNow + TokenIssuer::kRetryTokenLifetime + 1,
                                      got));
  EXPECT_FALSE(tokens.checkRetryToken(token, len - 1, NGTCP2_PROTO_VER_V1, sa(from), sizeof(from),
                                      retry_scid, kNow, got));
}

TEST(TokenIssuer, RegularTokenBindsTheAddressNotThePort) {
  TokenIssuer tokens(secret(3));
  sockaddr_in from = client("198.51.100.1", 5000);
  uint8_t token[TokenIssuer::kMaxRegularToken];
  size_t len = tokens.makeRegularToken(token, sa(from), sizeof(from), kNow);
  ASSERT_GT(len, 0u);
  sockaddr_in next_connection = client("198.51.100.1", 6000);
  EXPECT_TRUE(tokens.checkRegularToken(token, len, sa(next_connection), sizeof(next_connection),
                                       kNow + 60 * NGTCP2_SECONDS));
  sockaddr_in elsewhere = client("198.51.100.2", 5000);
  EXPECT_FALSE(tokens.checkRegularToken(token, len, sa(elsewhere), sizeof(elsewhere), kNow));
  EXPECT_FALSE(tokens.checkRegularToken(token, len, sa(from), sizeof(from),
                                        kNow + TokenIssuer::kRegularTokenLifetime + 1));
  // A Retry token is not a regular one, and the other way round.
  ngtcp2_cid odcid;
  EXPECT_FALSE(tokens.checkRetryToken(token, len, NGTCP2_PROTO_VER_V1, sa(from), sizeof(from),
                                      odcid, kNow, odcid));
}

TEST(TokenIssuer, ResetTokenIsAFunctionOfTheConnectionIdAndTheSecret) {
  ngtcp2_cid a;
  ngtcp2_cid b;
  ASSERT_TRUE(makeConnectionId(1, a));
  ASSERT_TRUE(makeConnectionId(1, b));
  uint8_t ta1[NGTCP2_STATELESS_RESET_TOKENLEN];
  uint8_t ta2[NGTCP2_STATELESS_RESET_TOKENLEN];
  uint8_t tb[NGTCP2_STATELESS_RESET_TOKENLEN];
  uint8_t other[NGTCP2_STATELESS_RESET_TOKENLEN];
  ASSERT_TRUE(TokenIssuer(secret(4)).resetToken(a, ta1));
  ASSERT_TRUE(TokenIssuer(secret(4)).resetToken(a, ta2));  // another process, same secret
  ASSERT_TRUE(TokenIssuer(secret(4)).resetToken(b, tb));
  ASSERT_TRUE(TokenIssuer(secret(5)).resetToken(a, other));
  EXPECT_EQ(0, memcmp(ta1, ta2, sizeof(ta1)));
  EXPECT_NE(0, memcmp(ta1, tb, sizeof(ta1)));
  EXPECT_NE(0, memcmp(ta1, other, sizeof(ta1)));
}

}  // namespace
}  // namespace scalws::worker::quic
