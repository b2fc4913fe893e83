#include "worker/tls/ticket_keys.h"

#include <gtest/gtest.h>

#include "tests/unit/worker/tls/test_tls.h"

namespace scalws::worker::tls {
namespace {

const std::string kSecret(32, 's');
constexpr uint64_t kHour = 3'600'000;

TEST(TicketKeys, DerivationIsDeterministicSoProcessesAgree) {
  auto a = TicketKeyRing::derive(kSecret, "127.0.0.1:443", 7);
  auto b = TicketKeyRing::derive(kSecret, "127.0.0.1:443", 7);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->name, b->name);
  EXPECT_EQ(a->aes, b->aes);
  EXPECT_EQ(a->hmac, b->hmac);
  // Name, AES and HMAC keys are different slices of the output.
  EXPECT_NE(std::string(a->aes.begin(), a->aes.end()), std::string(a->hmac.begin(), a->hmac.end()));
}

TEST(TicketKeys, WindowListenerAndSecretEachChangeTheKey) {
  auto base = TicketKeyRing::derive(kSecret, "127.0.0.1:443", 7);
  auto next_window = TicketKeyRing::derive(kSecret, "127.0.0.1:443", 8);
  auto other_listener = TicketKeyRing::derive(kSecret, "[::]:443", 7);
  auto other_secret = TicketKeyRing::derive(std::string(32, 't'), "127.0.0.1:443", 7);
  EXPECT_NE(base->name, next_window->name);
  EXPECT_NE(base->aes, next_window->aes);
  EXPECT_NE(base->name, other_listener->name);
  EXPECT_NE(base->name, other_secret->name);
  EXPECT_NE(base->hmac, other_secret->hmac);
}

TEST(TicketKeys, TheCurrentAndThePreviousWindowOpenTickets) {
  TicketKeyRing sealer(kSecret, "l", kHour);
  TicketKeyRing opener(kSecret, "l", kHour);  // another process, same secret
  uint64_t t = 1000 * kHour + 5;
  TicketKey sealed;
  ASSERT_TRUE(sealer.encryptionKey(t, sealed));
  TicketKey found;
  EXPECT_EQ(opener.decryptionKey(sealed.name.data(), t, found), 1);
  EXPECT_EQ(found.aes, sealed.aes);
  EXPECT_EQ(found.hmac, sealed.hmac);
  // One window later it still opens, and asks for a fresh ticket.
  EXPECT_EQ(opener.decryptionKey(sealed.name.data(), t + kHour, found), 2);
  EXPECT_EQ(found.aes, sealed.aes);
  // Two windows later it is gone.
  EXPECT_EQ(opener.decryptionKey(sealed.name.data(), t + 2 * kHour, found), 0);
  // And a ticket from the future is not accepted either.
  EXPECT_EQ(opener.decryptionKey(sealed.name.data(), t - kHour, found), 0);
}

TEST(TicketKeys, ARotationChangesTheSealingKey) {
  TicketKeyRing ring(kSecret, "l", kHour);
  TicketKey a, b, c;
  ASSERT_TRUE(ring.encryptionKey(5 * kHour, a));
  ASSERT_TRUE(ring.encryptionKey(5 * kHour + kHour - 1, b));
  ASSERT_TRUE(ring.encryptionKey(6 * kHour, c));
  EXPECT_EQ(a.name, b.name);
  EXPECT_NE(a.name, c.name);
}

TEST(TicketKeys, UnknownNamesAreRefused) {
  TicketKeyRing ring(kSecret, "l", kHour);
  uint8_t name[16] = {};
  TicketKey out;
  EXPECT_EQ(ring.decryptionKey(name, 10 * kHour, out), 0);
}

TEST(TicketKeys, TheProcessSecretIsDrawnOnce) {
  const std::string& a = processTicketSecret();
  const std::string& b = processTicketSecret();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(&a, &b);
  EXPECT_NE(a, std::string(32, '\0'));
}

TEST(TicketKeys, KeyFilesNeedThirtyTwoBytes) {
  testing::TempDir dir;
  dir.write("short.key", std::string(31, 'k'));
  dir.write("good.key", std::string(48, 'k'));
  auto shorter = readTicketSecretFile(dir.file("short.key"));
  ASSERT_FALSE(shorter.ok());
  EXPECT_NE(shorter.status().message().find(dir.file("short.key") + " holds 31 bytes"),
            std::string::npos)
      << shorter.status().message();
  auto good = readTicketSecretFile(dir.file("good.key"));
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->size(), 48u);
  auto missing = readTicketSecretFile(dir.file("missing.key"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open ticket key file"), std::string::npos);
}

TEST(TicketKeys, AProcessSecretIsAdoptedOnlyBeforeItWasFirstAnswered) {
  EXPECT_FALSE(adoptProcessTicketSecret(std::string(31, 'x')));  // too short, whenever
  const std::string& first = processTicketSecret();
  EXPECT_EQ(first.size(), 32u);
  // Keys already derived from it would otherwise stop opening the tickets they sealed.
  EXPECT_FALSE(adoptProcessTicketSecret(std::string(32, 'y')));
  EXPECT_EQ(&processTicketSecret(), &first);
  EXPECT_NE(processTicketSecret(), std::string(32, 'y'));
}

}  // namespace
}  // namespace scalws::worker::tls
