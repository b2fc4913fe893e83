// listen.tls: certificates by SNI, OCSP files, session resumption settings, and the http2
// default that depends on TLS.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::errorsOf;

Result<SiteConfig> loadListen(const std::string& body) {
  return loadSiteConfigString("[[listen]]\naddress = \"127.0.0.1:8443\"\n" + body,
                              "/etc/scalws/t.toml");
}

std::string listenErrors(const std::string& body) {
  return errorsOf("[[listen]]\naddress = \"127.0.0.1:8443\"\n" + body);
}

TEST(TlsSection, DefaultsForASingleCertificate) {
  Result<SiteConfig> site = loadListen("tls = { cert = \"a.crt\", key = \"a.key\" }\n");
  ASSERT_TRUE(site.ok()) << site.status().message();
  const TlsConfig& tls = *site->listens[0].tls;
  EXPECT_EQ(tls.cert, "/etc/scalws/a.crt");
  EXPECT_EQ(tls.key, "/etc/scalws/a.key");
  EXPECT_EQ(tls.ocsp, "");
  EXPECT_TRUE(tls.names.empty());
  EXPECT_TRUE(tls.certificates.empty());
  EXPECT_TRUE(tls.session_tickets);
  EXPECT_EQ(tls.ticket_key_file, "");
  EXPECT_EQ(tls.ticket_rotation, 3'600'000u);
  EXPECT_EQ(tls.session_cache, 20'480u);
  EXPECT_EQ(tls.session_timeout, 3'600'000u);
  // TLS listeners offer h2 unless told otherwise.
  EXPECT_TRUE(site->listens[0].http2);
  ASSERT_EQ(tls.allCertificates().size(), 1u);
  EXPECT_EQ(tls.allCertificates()[0].cert, "/etc/scalws/a.crt");
}

TEST(TlsSection, Http2CanBeTurnedOffOnTlsAndOnOnPlain) {
  Result<SiteConfig> tls_off =
      loadListen("tls = { cert = \"a.crt\", key = \"a.key\" }\nhttp2 = false\n");
  ASSERT_TRUE(tls_off.ok()) << tls_off.status().message();
  EXPECT_FALSE(tls_off->listens[0].http2);
  Result<SiteConfig> plain = loadListen("");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->listens[0].http2);
  Result<SiteConfig> h2c = loadListen("http2 = true\n");
  ASSERT_TRUE(h2c.ok());
  EXPECT_TRUE(h2c->listens[0].http2);
}

TEST(TlsSection, EverySettingAsASubTable) {
  Result<SiteConfig> site = loadListen(
      "[listen.tls]\n"
      "cert = \"/certs/default.crt\"\n"
      "key = \"/certs/default.key\"\n"
      "ocsp = \"default.ocsp\"\n"
      "names = [\"Example.COM\", \"*.example.com\"]\n"
      "session_tickets = false\n"
      "ticket_key_file = \"/secret/ticket.key\"\n"
      "ticket_rotation = \"30m\"\n"
      "session_cache = 0\n"
      "session_timeout = \"10m\"\n"
      "[[listen.tls.certificates]]\n"
      "cert = \"b.crt\"\n"
      "key = \"b.key\"\n"
      "[[listen.tls.certificates]]\n"
      "cert = \"c.crt\"\n"
      "key = \"c.key\"\n"
      "ocsp = \"/ocsp/c.der\"\n"
      "names = \"*.C.example\"\n");
  ASSERT_TRUE(site.ok()) << site.status().message();
  const TlsConfig& tls = *site->listens[0].tls;
  EXPECT_EQ(tls.cert, "/certs/default.crt");
  EXPECT_EQ(tls.ocsp, "/etc/scalws/default.ocsp");
  EXPECT_EQ(tls.names, (std::vector<std::string>{"example.com", "*.example.com"}));
  EXPECT_FALSE(tls.session_tickets);
  EXPECT_EQ(tls.ticket_key_file, "/secret/ticket.key");
  EXPECT_EQ(tls.ticket_rotation, 1'800'000u);
  EXPECT_EQ(tls.session_cache, 0u);
  EXPECT_EQ(tls.session_timeout, 600'000u);
  ASSERT_EQ(tls.certificates.size(), 2u);
  EXPECT_EQ(tls.certificates[0].cert, "/etc/scalws/b.crt");
  EXPECT_EQ(tls.certificates[0].key, "/etc/scalws/b.key");
  EXPECT_TRUE(tls.certificates[0].names.empty());
  EXPECT_EQ(tls.certificates[1].ocsp, "/ocsp/c.der");
  EXPECT_EQ(tls.certificates[1].names, (std::vector<std::string>{"*.c.example"}));
  EXPECT_EQ(tls.certificates[1].where.toString(), "/etc/scalws/t.toml:16:1");

  std::vector<TlsCertificateConfig> all = tls.allCertificates();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].names, tls.names);
  EXPECT_EQ(all[0].ocsp, tls.ocsp);
  EXPECT_EQ(all[2].cert, "/etc/scalws/c.crt");
}

TEST(TlsSection, CertAndKeyAreRequiredAndNotEmpty) {
  EXPECT_EQ(listenErrors("tls = { cert = \"a.crt\" }\n"),
            "t.toml:3:7: listen.tls: missing required key \"key\"");
  EXPECT_EQ(listenErrors("tls = { cert = \"\", key = \"k\" }\n"),
            "t.toml:3:16: listen.tls.cert: must not be empty");
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", certificates = [ { key = \"x\" } ] "
                         "}\n"),
            "t.toml:3:49: listen.tls.certificates[0]: missing required key \"cert\"");
  EXPECT_EQ(listenErrors("tls = \"yes\"\n"),
            "t.toml:3:7: listen.tls: expected a table, found a "
            "string");
}

TEST(TlsSection, NamesMustBeServerNames) {
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", names = [\"a.*.com\"] }\n"),
            "t.toml:3:41: listen.tls.names[0]: \"a.*.com\": a wildcard is only allowed as a "
            "leading \"*.\"");
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", names = \"bad name\" }\n"),
            "t.toml:3:40: listen.tls.names: \"bad name\" is not a valid server name");
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", names = [] }\n"),
            "t.toml:3:40: listen.tls.names: must not be empty (leave it out to use the "
            "certificate's)");
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", names = [\"a..b\"] }\n"),
            "t.toml:3:41: listen.tls.names[0]: \"a..b\" is not a valid server name");
}

TEST(TlsSection, ResumptionSettingsAreChecked) {
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", ticket_rotation = \"500ms\" }\n"),
            "t.toml:3:50: listen.tls.ticket_rotation: must be between 1s and 7 days");
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", session_cache = -1 }\n"),
            "t.toml:3:48: listen.tls.session_cache: must be between 0 and 10000000, found -1");
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", session_timeout = 0 }\n"),
            "t.toml:3:50: listen.tls.session_timeout: must be at least 1s");
  EXPECT_EQ(listenErrors("tls = { cert = \"c\", key = \"k\", session_tickets = \"no\" }\n"),
            "t.toml:3:50: listen.tls.session_tickets: expected a boolean, found a string");
}

TEST(TlsSection, UnknownKeysAreNamed) {
  std::string errors = listenErrors("tls = { cert = \"c\", key = \"k\", ocps = \"x\" }\n");
  EXPECT_NE(errors.find("listen.tls: unknown key \"ocps\" (did you mean \"ocsp\"?)"),
            std::string::npos)
      << errors;
}

}  // namespace
}  // namespace scalws::common::config
