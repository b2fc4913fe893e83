// The PROXY protocol parser: both versions, every way a header can be short, long or wrong,
// and the socket reader that takes the header and not a byte more.
#include "worker/net/proxy_protocol.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "worker/net/proxy_header_reader.h"

namespace scalws::worker {
namespace {

using Outcome = ProxyHeader::Outcome;

std::string addressOf(const sockaddr_storage& a, uint16_t* port = nullptr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
    if (port != nullptr) *port = ntohs(sin->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text));
    if (port != nullptr) *port = ntohs(sin6->sin6_port);
  }
  return text;
}

std::string v2(uint8_t command, uint8_t family, std::string addresses, std::string tlvs = "") {
  std::string h("\r\n\r\n\0\r\nQUIT\n", 12);
  h.push_back(static_cast<char>(0x20 | command));
  h.push_back(static_cast<char>(family));
  size_t len = addresses.size() + tlvs.size();
  h.push_back(static_cast<char>(len >> 8));
  h.push_back(static_cast<char>(len & 0xff));
  return h + addresses + tlvs;
}

std::string v4Addresses(const char* src, const char* dst, uint16_t sport, uint16_t dport) {
  std::string a(12, '\0');
  inet_pton(AF_INET, src, a.data());
  inet_pton(AF_INET, dst, a.data() + 4);
  a[8] = static_cast<char>(sport >> 8);
  a[9] = static_cast<char>(sport & 0xff);
  a[10] = static_cast<char>(dport >> 8);
  a[11] = static_cast<char>(dport & 0xff);
  return a;
}

TEST(ProxyProtocolV1, Tcp4AndTcp6) {
  std::string h = "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n";
  ProxyHeader p = parseProxyHeader(h);
  ASSERT_EQ(p.outcome, Outcome::kDone);
  EXPECT_EQ(p.length, 45u);
  ASSERT_TRUE(p.has_client);
  uint16_t port = 0;
  EXPECT_EQ(addressOf(p.client, &port), "192.0.2.1");
  EXPECT_EQ(port, 56324);
  p = parseProxyHeader("PROXY TCP6 2001:db8::1 2001:db8::2 65535 0\r\n");
  ASSERT_EQ(p.outcome, Outcome::kDone);
  EXPECT_EQ(addressOf(p.client, &port), "2001:db8::1");
  EXPECT_EQ(port, 65535);
}

TEST(ProxyProtocolV1, UnknownKeepsThePeer) {
  ProxyHeader p = parseProxyHeader("PROXY UNKNOWN\r\n");
  EXPECT_EQ(p.outcome, Outcome::kDone);
  EXPECT_FALSE(p.has_client);
  EXPECT_EQ(p.length, 15u);
  p = parseProxyHeader("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n");
  EXPECT_EQ(p.outcome, Outcome::kDone);
  EXPECT_FALSE(p.has_client);
}

TEST(ProxyProtocolV1, EveryPrefixNeedsMore) {
  std::string h = "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n";
  for (size_t n = 1; n < h.size(); ++n) {
    EXPECT_EQ(parseProxyHeader(h.substr(0, n)).outcome, Outcome::kNeedMore) << n;
  }
}

TEST(ProxyProtocolV1, MalformedHeadersAreRefused) {
  const char* bad[] = {
      "GET / HTTP/1.1\r\n",
      "PROXY  TCP4 192.0.2.1 198.51.100.2 1 2\r\n",
      "PROXY TCP4 192.0.2.1 198.51.100.2 1 2 3\r\n",
      "PROXY TCP4 192.0.2.1  198.51.100.2 1 2\r\n",
      "PROXY TCP4 2001:db8::1 198.51.100.2 1 2\r\n",
      "PROXY TCP6 192.0.2.1 2001:db8::2 1 2\r\n",
      "PROXY TCP4 192.0.2.1 198.51.100.2 65536 2\r\n",
      "PROXY TCP4 192.0.2.1 198.51.100.2 123456 2\r\n",
      "PROXY TCP4 192.0.2.1 198.51.100.2 -1 2\r\n",
      "PROXY TCP4 192.0.2.256 198.51.100.2 1 2\r\n",
      "PROXY UDP4 192.0.2.1 198.51.100.2 1 2\r\n",
      "PROXY TCP4 192.0.2.1 198.51.100.2 1 2\n",
      "PROXY TCP4 192.0.2.1\r198.51.100.2 1 2\r\n",
      "proxy TCP4 192.0.2.1 198.51.100.2 1 2\r\n",
  };
  for (const char* h : bad) {
    EXPECT_EQ(parseProxyHeader(h).outcome, Outcome::kInvalid) << h;
  }
  // No CRLF within the spec's 107 bytes.
  EXPECT_EQ(parseProxyHeader("PROXY UNKNOWN " + std::string(100, 'x')).outcome, Outcome::kInvalid);
  EXPECT_EQ(parseProxyHeader("PROXY UNKNOWN " + std::string(92, 'x')).outcome, Outcome::kNeedMore);
  EXPECT_EQ(parseProxyHeader("PROXY UNKNOWN " + std::string(91, 'x') + "\r\n").outcome,
            Outcome::kDone);  // 107 bytes exactly
  EXPECT_EQ(parseProxyHeader("PROXY UNKNOWN " + std::string(92, 'x') + "\r\n").outcome,
            Outcome::kInvalid);
}

TEST(ProxyProtocolV2, ProxyInet4WithTlvs) {
  std::string h = v2(1, 0x11, v4Addresses("203.0.113.5", "10.0.0.1", 4711, 443),
                     std::string("\x03\x00\x04\x01\x02\x03\x04", 7));  // a CRC32C TLV
  ProxyHeader p = parseProxyHeader(h + "\x16\x03\x01");                // a ClientHello next
  ASSERT_EQ(p.outcome, Outcome::kDone);
  EXPECT_EQ(p.length, h.size());
  uint16_t port = 0;
  EXPECT_EQ(addressOf(p.client, &port), "203.0.113.5");
  EXPECT_EQ(port, 4711);
}

TEST(ProxyProtocolV2, ProxyInet6) {
  std::string a(36, '\0');
  inet_pton(AF_INET6, "2001:db8::7", a.data());
  inet_pton(AF_INET6, "2001:db8::1", a.data() + 16);
  a[32] = 0x12;
  a[33] = 0x34;
  ProxyHeader p = parseProxyHeader(v2(1, 0x21, a));
  ASSERT_EQ(p.outcome, Outcome::kDone);
  uint16_t port = 0;
  EXPECT_EQ(addressOf(p.client, &port), "2001:db8::7");
  EXPECT_EQ(port, 0x1234);
}

TEST(ProxyProtocolV2, LocalUnspecAndUnixKeepThePeer) {
  ProxyHeader local = parseProxyHeader(v2(0, 0x11, v4Addresses("1.2.3.4", "5.6.7.8", 1, 2)));
  EXPECT_EQ(local.outcome, Outcome::kDone);
  EXPECT_FALSE(local.has_client);
  ProxyHeader unspec = parseProxyHeader(v2(1, 0x00, ""));
  EXPECT_EQ(unspec.outcome, Outcome::kDone);
  EXPECT_FALSE(unspec.has_client);
  ProxyHeader unix_family = parseProxyHeader(v2(1, 0x31, std::string(216, '\0')));
  EXPECT_EQ(unix_family.outcome, Outcome::kDone);
  EXPECT_FALSE(unix_family.has_client);
}

TEST(ProxyProtocolV2, EveryPrefixNeedsMore) {
  std::string h = v2(1, 0x11, v4Addresses("203.0.113.5", "10.0.0.1", 1, 2));
  for (size_t n = 1; n < h.size(); ++n) {
    EXPECT_EQ(parseProxyHeader(h.substr(0, n)).outcome, Outcome::kNeedMore) << n;
  }
}

TEST(ProxyProtocolV2, MalformedHeadersAreRefused) {
  std::string ok = v2(1, 0x11, v4Addresses("203.0.113.5", "10.0.0.1", 1, 2));
  std::string bad_version = ok;
  bad_version[12] = 0x11;
  EXPECT_EQ(parseProxyHeader(bad_version).outcome, Outcome::kInvalid);
  std::string bad_command = ok;
  bad_command[12] = 0x22;
  EXPECT_EQ(parseProxyHeader(bad_command).outcome, Outcome::kInvalid);
  std::string bad_family = ok;
  bad_family[13] = 0x41;
  EXPECT_EQ(parseProxyHeader(bad_family).outcome, Outcome::kInvalid);
  // Too short for its family's addresses.
  EXPECT_EQ(parseProxyHeader(v2(1, 0x21, std::string(12, '\0'))).outcome, Outcome::kInvalid);
  // Longer than the bound.
  EXPECT_EQ(parseProxyHeader(v2(1, 0x11, std::string(kProxyV2Max, '\0')).substr(0, 16)).outcome,
            Outcome::kInvalid);
  std::string bad_signature = ok;
  bad_signature[5] = 'x';
  EXPECT_EQ(parseProxyHeader(bad_signature).outcome, Outcome::kInvalid);
  EXPECT_EQ(parseProxyHeader(std::string("\x16\x03\x01\x02\x00", 5)).outcome,
            Outcome::kInvalid);  // TLS straight away
}

class ProxyHeaderReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds_), 0); }
  void TearDown() override {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  void send(std::string_view bytes) {
    ASSERT_EQ(::write(fds_[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  std::string rest() {
    char buf[256];
    ssize_t n = ::read(fds_[0], buf, sizeof(buf));
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }
  int fds_[2];
};

TEST_F(ProxyHeaderReaderTest, TakesTheHeaderAndNotAByteMore) {
  ProxyHeaderReader reader;
  EXPECT_EQ(reader.read(fds_[0]), ProxyHeaderReader::Result::kNeedMore);  // nothing yet
  send("PROXY TCP4 192.0.2.1 1");
  EXPECT_EQ(reader.read(fds_[0]), ProxyHeaderReader::Result::kNeedMore);
  send("98.51.100.2 5 6\r\nGET / HTTP/1.1\r\n");
  ASSERT_EQ(reader.read(fds_[0]), ProxyHeaderReader::Result::kDone);
  EXPECT_EQ(addressOf(reader.header().client), "192.0.2.1");
  EXPECT_EQ(rest(), "GET / HTTP/1.1\r\n");
}

TEST_F(ProxyHeaderReaderTest, AV2HeaderInPieces) {
  std::string h = v2(1, 0x11, v4Addresses("203.0.113.5", "10.0.0.1", 1, 2));
  ProxyHeaderReader reader;
  send(h.substr(0, 10));
  EXPECT_EQ(reader.read(fds_[0]), ProxyHeaderReader::Result::kNeedMore);
  send(h.substr(10, 8));
  EXPECT_EQ(reader.read(fds_[0]), ProxyHeaderReader::Result::kNeedMore);
  send(h.substr(18) + "hello");
  ASSERT_EQ(reader.read(fds_[0]), ProxyHeaderReader::Result::kDone);
  EXPECT_EQ(addressOf(reader.header().client), "203.0.113.5");
  EXPECT_EQ(rest(), "hello");
}

TEST_F(ProxyHeaderReaderTest, NoHeaderOrAnEndFails) {
  ProxyHeaderReader reader;
  send("GET / HTTP/1.1\r\n");
  EXPECT_EQ(reader.read(fds_[0]), ProxyHeaderReader::Result::kFailed);
  ProxyHeaderReader other;
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair), 0);
  ::write(pair[1], "PROXY TCP4", 10);
  ::close(pair[1]);
  EXPECT_EQ(other.read(pair[0]), ProxyHeaderReader::Result::kNeedMore);
  EXPECT_EQ(other.read(pair[0]), ProxyHeaderReader::Result::kFailed);  // the end of stream
  ::close(pair[0]);
}

}  // namespace
}  // namespace scalws::worker
