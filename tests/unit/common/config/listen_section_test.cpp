// [[listen]]: shape, address, tls, http2 and duplicates.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::errorsOf;

TEST(ListenSection, MustBeAnArrayOfTables) {
  EXPECT_EQ(errorsOf("[listen]\naddress = \"127.0.0.1:80\"\n"),
            "t.toml:1:1: listen: expected an array of tables ([[listen]]), found a table");
  EXPECT_EQ(errorsOf("listen = [\"127.0.0.1:80\"]\n"),
            "t.toml:1:11: listen: expected a table, found a string");
}

TEST(ListenSection, AddressIsRequiredAndMustParse) {
  EXPECT_EQ(errorsOf("[[listen]]\nhttp2 = true\n"),
            "t.toml:1:1: listen: missing required key \"address\"");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = 8080\n"),
            "t.toml:2:11: listen.address: expected a string, found an integer");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"localhost:8080\"\n"),
            "t.toml:2:11: listen.address: host \"localhost\" is not a literal IPv4 address (host "
            "names are not resolved; use e.g. \"127.0.0.1\" or \"[::1]\")");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:0\"\n"),
            "t.toml:2:11: listen.address: port must be between 1 and 65535, found \"0\"");
}

TEST(ListenSection, UnknownKey) {
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:80\"\nssl = true\n"),
            "t.toml:3:1: listen: unknown key \"ssl\" (expected one of: address, tls, http2, http3, "
            "quic, names, default, proxy_protocol)");
}

TEST(ListenSection, NamesAndDefault) {
  Result<SiteConfig> site = loadSiteConfigString(
      "[[listen]]\naddress = \"127.0.0.1:80\"\nnames = [\"Shop.Example\", \"*.shop.example\"]\n"
      "default = true\n[[listen]]\naddress = \"127.0.0.1:81\"\nnames = \"one.example\"\n",
      "t.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_EQ(site->listens[0].names, (std::vector<std::string>{"shop.example", "*.shop.example"}));
  EXPECT_TRUE(site->listens[0].is_default);
  EXPECT_EQ(site->listens[1].names, std::vector<std::string>{"one.example"});
  EXPECT_FALSE(site->listens[1].is_default);
}

TEST(ListenSection, NamesMustBeServerNames) {
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:80\"\nnames = [\"a..b\"]\n"),
            "t.toml:3:10: listen.names[0]: \"a..b\" is not a valid server name");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:80\"\nnames = [\"a.*.b\"]\n"),
            "t.toml:3:10: listen.names[0]: \"a.*.b\": a wildcard is only allowed as a leading "
            "\"*.\"");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:80\"\nnames = []\n"),
            "t.toml:3:9: listen.names: must not be empty (leave it out)");
  EXPECT_EQ(errorsOf(std::string("[[listen]]\naddress = \"127.0.0.1:443\"\n") +
                     "tls = { cert = \"c.pem\", key = \"k.pem\" }\nnames = []\n"),
            "t.toml:4:9: listen.names: must not be empty (leave it out to use the certificates' "
            "names)");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:80\"\ndefault = \"yes\"\n"),
            "t.toml:3:11: listen.default: expected a boolean, found a string");
}

TEST(ListenSection, Http2) {
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:80\"\nhttp2 = \"yes\"\n"),
            "t.toml:3:9: listen.http2: expected a boolean, found a string");
}

constexpr const char* kTlsListen =
    "[[listen]]\naddress = \"127.0.0.1:443\"\ntls = { cert = \"c.pem\", key = \"k.pem\" }\n";

TEST(ListenSection, Http3NeedsTls) {
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:80\"\nhttp3 = true\n"),
            "t.toml:3:9: listen.http3: needs tls on the same listener (QUIC is always encrypted)");
  EXPECT_EQ(errorsOf(std::string(kTlsListen) + "http3 = 1\n"),
            "t.toml:4:9: listen.http3: expected a boolean, found an integer");
  EXPECT_EQ(errorsOf(std::string(kTlsListen) + "quic = { max_streams = 10 }\n"),
            "t.toml:4:8: listen.quic: only applies with http3 = true");
}

#if SCALWS_HTTP3
TEST(ListenSection, Http3AndQuicLimits) {
  Result<SiteConfig> site = loadSiteConfigString(
      std::string(kTlsListen) +
          "http3 = true\n"
          "quic = { retry = \"always\", max_streams = 7, stream_window = \"64k\", "
          "connection_window = \"2m\", idle_timeout = \"5s\", early_data = true }\n"
          "[[route]]\nmatch = { prefix = \"/\" }\nrespond = { body = \"x\" }\n",
      "t.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  const ListenConfig& listen = site->listens[0];
  EXPECT_TRUE(listen.http3);
  EXPECT_TRUE(listen.http2);
  EXPECT_EQ(listen.quic.retry, QuicConfig::Retry::kAlways);
  EXPECT_EQ(listen.quic.max_streams, 7u);
  EXPECT_EQ(listen.quic.stream_window, 64u * 1024);
  EXPECT_EQ(listen.quic.connection_window, 2u * 1024 * 1024);
  EXPECT_EQ(listen.quic.idle_timeout, 5000u);
  EXPECT_EQ(listen.quic.handshake_timeout, 10'000u);
  EXPECT_TRUE(listen.quic.early_data);
}

TEST(ListenSection, QuicLimitsOutOfRange) {
  EXPECT_EQ(errorsOf(std::string(kTlsListen) +
                     "http3 = true\nquic = { retry = \"sometimes\", max_streams = 0, "
                     "stream_window = \"1k\", idle_timeout = \"10ms\", window = 1 }\n"),
            "t.toml:5:18: listen.quic.retry: unknown value \"sometimes\" (expected "
            "\"under_load\" or \"always\")\n"
            "t.toml:5:45: listen.quic.max_streams: must be between 1 and 10000, found 0\n"
            "t.toml:5:64: listen.quic.stream_window: must be between 16k and 1g\n"
            "t.toml:5:85: listen.quic.idle_timeout: must be at least 100ms\n"
            "t.toml:5:93: listen.quic: unknown key \"window\" (expected one of: retry, "
            "retry_above, max_streams, stream_window, connection_window, idle_timeout, "
            "handshake_timeout, early_data)");
  EXPECT_EQ(errorsOf(std::string(kTlsListen) +
                     "http3 = true\nquic = { stream_window = \"1m\", connection_window = "
                     "\"512k\" }\n"),
            "t.toml:5:8: listen.quic: connection_window must be at least stream_window");
}
#else
TEST(ListenSection, Http3RefusedWithoutHttp3Build) {
  EXPECT_EQ(errorsOf(std::string(kTlsListen) + "http3 = true\n"),
            "t.toml:4:9: listen.http3: this scalwsd was built without HTTP/3 (cmake "
            "-DSCALWS_HTTP3=ON with libngtcp2-dev, libngtcp2-crypto-gnutls-dev and "
            "libnghttp3-dev)");
}
#endif

TEST(ListenSection, Tls) {
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:443\"\ntls = true\n"),
            "t.toml:3:7: listen.tls: expected a table, found a boolean");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:443\"\ntls = { cert = \"c.pem\" }\n"),
            "t.toml:3:7: listen.tls: missing required key \"key\"");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:443\"\ntls = {}\n"),
            "t.toml:3:7: listen.tls: missing required key \"cert\"\n"
            "t.toml:3:7: listen.tls: missing required key \"key\"");
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"127.0.0.1:443\"\n"
                     "tls = { cert = \"\", key = 1, chain = \"x\" }\n"),
            "t.toml:3:16: listen.tls.cert: must not be empty\n"
            "t.toml:3:26: listen.tls.key: expected a string, found an integer\n"
            "t.toml:3:29: listen.tls: unknown key \"chain\" (expected one of: cert, key, ocsp, "
            "names, certificates, session_tickets, ticket_key_file, ticket_rotation, "
            "session_cache, session_timeout)");
}

TEST(ListenSection, DuplicateAddresses) {
  EXPECT_EQ(errorsOf("[[listen]]\naddress = \"0.0.0.0:80\"\n"
                     "[[listen]]\naddress = \"*:80\"\n"
                     "[[listen]]\naddress = \"0.0.0.0:81\"\n"
                     "[[listen]]\naddress = \"[0::0]:80\"\n"
                     "[[listen]]\naddress = \"[::]:80\"\n"),
            "t.toml:4:11: listen.address: duplicate address \"*:80\" (already listened on as "
            "\"0.0.0.0:80\" at t.toml:1:1)\n"
            "t.toml:10:11: listen.address: duplicate address \"[::]:80\" (already listened on as "
            "\"[0::0]:80\" at t.toml:7:1)");
}

TEST(ListenSection, EveryListenIsKept) {
  Result<SiteConfig> site = loadSiteConfigString(
      "[[listen]]\naddress = \"0.0.0.0:80\"\n[[listen]]\naddress = \"[::]:80\"\n", "t.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  ASSERT_EQ(site->listens.size(), 2u);
  EXPECT_EQ(site->listens[0].host, "0.0.0.0");
  EXPECT_EQ(site->listens[1].host, "::");
  EXPECT_EQ(site->listens[1].where.toString(), "t.toml:3:1");
}

}  // namespace
}  // namespace scalws::common::config
