#include "worker/quic/secrets.h"

#include <gtest/gtest.h>

namespace scalws::worker::quic {
namespace {

TEST(QuicSecrets, EveryProcessDerivesTheSameOnesPerListener) {
  std::string site(32, 'k');
  auto a = deriveQuicSecrets(site, "0.0.0.0:443");
  auto b = deriveQuicSecrets(site, "0.0.0.0:443");
  auto other_listener = deriveQuicSecrets(site, "0.0.0.0:8443");
  auto other_site = deriveQuicSecrets(std::string(32, 'j'), "0.0.0.0:443");
  ASSERT_TRUE(a.ok() && b.ok() && other_listener.ok() && other_site.ok());
  EXPECT_EQ(a->token, b->token);
  EXPECT_EQ(a->ticket, b->ticket);
  EXPECT_NE(a->token, other_listener->token);
  EXPECT_NE(a->ticket, other_listener->ticket);
  EXPECT_NE(a->token, other_site->token);
  // The token secret and the ticket key are not the same bytes.
  EXPECT_NE(0, memcmp(a->token.data(), a->ticket.data(), a->token.size()));
}

}  // namespace
}  // namespace scalws::worker::quic
