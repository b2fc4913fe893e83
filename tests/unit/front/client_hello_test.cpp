// peekServerName: real and hand-built ClientHellos, fragmented across records and fed in
// every split, and what is refused; peekServerNameInHandshake on bare messages.
#include "front/client_hello.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/hex.h"
#include "tests/support/chunk_feeder.h"

namespace scalws::front {
namespace {

using HelloOutcome = ServerNamePeek::Outcome;

// A ClientHello Python's ssl module (OpenSSL 3.0) sent for server_hostname="Shop.Example":
// TLS 1.3 and 1.2 suites, ALPN h2 and http/1.1, a key share, padding to 512 bytes.
const std::string kOpenSslHello = [] {
  std::string hex =
      "1603010200010001fc03035ab37f47e004d70d457002afeecf03f22660daed5001d745b246ff0b215e0cec20"
      "7bfba54b7c78ecfdc2361bca92dd3fc87e07f7dbd3100f65613cfef19f1e76e90024130213031301c02cc030"
      "c02bc02fcca9cca8c024c028c023c027009f009e006b006700ff0100018f00000011000f00000c53686f702e"
      "4578616d706c65000b000403000102000a00160014001d0017001e0019001801000101010201030104002300"
      "000010000e000c02683208687474702f312e310016000000170000000d002a00280403050306030807080808"
      "09080a080b080408050806040105010601030303010302040205020602002b00050403040303002d00020101"
      "003300260024001d00203c6c78588fa60bcde5ab0988da7f4c834a9f87aaa32d4f4ea6f77d504a187367001500"
      "cf";
  hex += std::string(0xcf * 2, '0');
  std::optional<std::string> bytes = common::fromHex(hex);
  EXPECT_TRUE(bytes.has_value());
  return bytes.value_or("");
}();

std::string u16(size_t v) {
  return {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)};
}

std::string u24(size_t v) {
  return std::string(1, static_cast<char>(v >> 16)) + u16(v & 0xffff);
}

std::string extension(uint16_t type, const std::string& data) {
  return u16(type) + u16(data.size()) + data;
}

std::string serverNameExtension(const std::string& name, uint8_t name_type = 0) {
  std::string entry = std::string(1, static_cast<char>(name_type)) + u16(name.size()) + name;
  return extension(0, u16(entry.size()) + entry);
}

// The handshake message (type, length, body) of a ClientHello with these extensions
// ("" with `with_extensions` false: none at all, as TLS 1.2 allows).
std::string helloMessage(const std::string& extensions, bool with_extensions = true) {
  std::string body = u16(0x0303) + std::string(32, 'r');
  body += std::string(1, '\x20') + std::string(32, 's');  // session id
  body += u16(4) + std::string("\x13\x01\x13\x02", 4);    // two suites
  body += std::string("\x01\x00", 2);                     // null compression
  if (with_extensions) body += u16(extensions.size()) + extensions;
  return std::string(1, '\x01') + u24(body.size()) + body;
}

// `message` in TLS records of at most `fragment` payload bytes each.
std::string records(const std::string& message, size_t fragment = 16384) {
  std::string out;
  for (size_t i = 0; i < message.size(); i += fragment) {
    std::string part = message.substr(i, fragment);
    out += std::string("\x16\x03\x01", 3) + u16(part.size()) + part;
  }
  return out;
}

// Feeds growing prefixes as reads would deliver them: every prefix before the last must be
// kNeedMore, and the answer for the whole is returned.
ServerNamePeek feedHello(const std::string& bytes, testing::Split split) {
  size_t seen = 0;
  ServerNamePeek last;
  std::vector<size_t> sizes = testing::chunkSizes(split, bytes.size(), 7);
  for (size_t i = 0; i < sizes.size(); ++i) {
    seen += sizes[i];
    last = peekServerName(std::string_view(bytes).substr(0, seen));
    if (i + 1 < sizes.size()) {
      EXPECT_EQ(last.outcome, HelloOutcome::kNeedMore)
          << "after " << seen << " of " << bytes.size();
      if (last.outcome != HelloOutcome::kNeedMore) return last;
    }
  }
  return last;
}

TEST(ClientHello, ARealOpenSslHelloInEverySplit) {
  for (testing::Split split : testing::kAllSplits) {
    ServerNamePeek peek = feedHello(kOpenSslHello, split);
    EXPECT_EQ(peek.outcome, HelloOutcome::kName) << testing::splitName(split);
    EXPECT_EQ(peek.name, "shop.example");
  }
}

TEST(ClientHello, AHelloFragmentedAcrossRecords) {
  std::string message = helloMessage(serverNameExtension("a.example") + extension(16, "xyz"));
  for (size_t fragment : {2, 3, 5, 64}) {
    for (testing::Split split : testing::kAllSplits) {
      ServerNamePeek peek = feedHello(records(message, fragment), split);
      EXPECT_EQ(peek.outcome, HelloOutcome::kName) << fragment << " " << testing::splitName(split);
      EXPECT_EQ(peek.name, "a.example");
    }
  }
}

TEST(ClientHello, BytesAfterTheHelloAreNotLookedAt) {
  std::string bytes = records(helloMessage(serverNameExtension("a.example"))) + "\x17garbage";
  EXPECT_EQ(peekServerName(bytes).name, "a.example");
}

TEST(ClientHello, NoServerName) {
  EXPECT_EQ(peekServerName(records(helloMessage(extension(16, "ab")))).outcome,
            HelloOutcome::kNoName);
  EXPECT_EQ(peekServerName(records(helloMessage("", false))).outcome, HelloOutcome::kNoName);
  // A server_name list with no host_name entry.
  EXPECT_EQ(peekServerName(records(helloMessage(serverNameExtension("x", 7)))).outcome,
            HelloOutcome::kNoName);
}

TEST(ClientHello, TheNameIsNormalised) {
  EXPECT_EQ(peekServerName(records(helloMessage(serverNameExtension("WWW.Example.COM.")))).name,
            "www.example.com");
}

TEST(ClientHello, NotAHello) {
  auto outcome = [](const std::string& bytes) { return peekServerName(bytes).outcome; };
  EXPECT_EQ(outcome("GET / HTTP/1.1\r\n"), HelloOutcome::kInvalid);
  EXPECT_EQ(outcome("\x80\x2e\x01\x03\x01"), HelloOutcome::kInvalid);  // SSLv2 hello
  EXPECT_EQ(outcome(std::string("\x15\x03\x03\x00\x02\x02\x28", 7)),
            HelloOutcome::kInvalid);                                       // alert
  EXPECT_EQ(outcome(std::string("\x16\x02", 2)), HelloOutcome::kInvalid);  // not version 3
  EXPECT_EQ(outcome(std::string("\x16\x03\x01\x00\x00", 5)),
            HelloOutcome::kInvalid);  // empty record
  EXPECT_EQ(outcome(std::string("\x16\x03\x01\x40\x01", 5)), HelloOutcome::kInvalid);  // > 2^14
  // A ServerHello (type 2) in a handshake record.
  std::string server_hello = helloMessage("");
  server_hello[0] = '\x02';
  EXPECT_EQ(outcome(records(server_hello)), HelloOutcome::kInvalid);
  EXPECT_EQ(outcome(records(std::string("\x02", 1), 1)), HelloOutcome::kInvalid);
}

TEST(ClientHello, AHandshakeRecordThenAnotherTypeIsRefused) {
  std::string message = helloMessage(serverNameExtension("a.example"));
  std::string bytes = records(message.substr(0, 10));
  bytes += std::string("\x17\x03\x03", 3) + u16(message.size() - 10) + message.substr(10);
  EXPECT_EQ(peekServerName(bytes).outcome, HelloOutcome::kInvalid);
}

TEST(ClientHello, LengthsThatDoNotAddUp) {
  std::string good = helloMessage(serverNameExtension("a.example"));
  // The extensions block says more than the message holds.
  std::string longer = good;
  size_t ext_len_at = good.size() - serverNameExtension("a.example").size() - 2;
  longer[ext_len_at + 1] = static_cast<char>(longer[ext_len_at + 1] + 1);
  EXPECT_EQ(peekServerName(records(longer)).outcome, HelloOutcome::kInvalid);
  // The server name list is longer than its extension.
  std::string sni = serverNameExtension("a.example");
  sni[5] = static_cast<char>(sni[5] + 3);
  EXPECT_EQ(peekServerName(records(helloMessage(sni))).outcome, HelloOutcome::kInvalid);
  // An odd number of cipher-suite bytes.
  std::string odd = good;
  odd[4 + 2 + 32 + 1 + 32 + 1] = '\x03';
  EXPECT_EQ(peekServerName(records(odd)).outcome, HelloOutcome::kInvalid);
}

TEST(ClientHello, DuplicateExtensionsAreRefused) {
  std::string twice = serverNameExtension("a.example") + serverNameExtension("b.example");
  EXPECT_EQ(peekServerName(records(helloMessage(twice))).outcome, HelloOutcome::kInvalid);
  std::string alpn_twice = extension(16, "a") + extension(16, "b");
  EXPECT_EQ(peekServerName(records(helloMessage(alpn_twice))).outcome, HelloOutcome::kInvalid);
}

TEST(ClientHello, ANameThatIsNotADnsNameIsRefused) {
  for (const char* name : {"a..b", "a b", "a/b", "", "\xc3\xa9.example"}) {
    EXPECT_EQ(peekServerName(records(helloMessage(serverNameExtension(name)))).outcome,
              HelloOutcome::kInvalid)
        << name;
  }
}

TEST(ClientHello, AHelloLargerThanTheBoundIsRefusedFromItsHeader) {
  std::string header = std::string("\x16\x03\x01\x00\x04\x01", 6) + u24(kMaxClientHello + 1);
  EXPECT_EQ(peekServerName(header).outcome, HelloOutcome::kInvalid);
  // At the bound, padding included, it is still read.
  std::string ext = serverNameExtension("a.example");
  std::string small = helloMessage(ext);
  size_t pad = kMaxClientHello - (small.size() - 4) - 4;
  std::string big = helloMessage(ext + extension(21, std::string(pad, '\0')));
  ASSERT_EQ(big.size(), kMaxClientHello + 4);
  ServerNamePeek peek = peekServerName(records(big));
  EXPECT_EQ(peek.outcome, HelloOutcome::kName);
  EXPECT_LE(records(big).size(), kMaxPeekBytes);
}

TEST(ClientHello, TooManyRecordsAreRefused) {
  std::string message = helloMessage(serverNameExtension("a.example"));
  ASSERT_GT(message.size(), kMaxHelloRecords);
  EXPECT_EQ(peekServerName(records(message, 1)).outcome, HelloOutcome::kInvalid);
  EXPECT_EQ(peekServerName(records(message, 2)).outcome, HelloOutcome::kName);
}

// QUIC's CRYPTO frames carry the handshake message without records.
TEST(ClientHello, ABareHandshakeMessage) {
  std::string message = helloMessage(serverNameExtension("Quic.Example"));
  for (size_t n = 0; n < message.size(); ++n) {
    ASSERT_EQ(peekServerNameInHandshake(message.substr(0, n)).outcome, HelloOutcome::kNeedMore)
        << n;
  }
  ServerNamePeek peek = peekServerNameInHandshake(message + "after");
  EXPECT_EQ(peek.outcome, HelloOutcome::kName);
  EXPECT_EQ(peek.name, "quic.example");
  EXPECT_EQ(peekServerNameInHandshake(helloMessage(extension(16, "h3"))).outcome,
            HelloOutcome::kNoName);
  EXPECT_EQ(peekServerNameInHandshake("\x02").outcome, HelloOutcome::kInvalid);
  EXPECT_EQ(peekServerNameInHandshake(std::string("\x01", 1) + u24(kMaxClientHello + 1)).outcome,
            HelloOutcome::kInvalid);
  // A record is not a handshake message.
  EXPECT_EQ(peekServerNameInHandshake(records(message)).outcome, HelloOutcome::kInvalid);
}

TEST(ClientHello, EmptyAndPartialHeaders) {
  EXPECT_EQ(peekServerName("").outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(peekServerName("\x16").outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(peekServerName(std::string("\x16\x03", 2)).outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(peekServerName(std::string("\x16\x03\x01\x00", 4)).outcome, HelloOutcome::kNeedMore);
}

}  // namespace
}  // namespace scalws::front
