// claimedNames: a listener's own names, else its certificates' (their `names`, else the
// DNS names in the file), read by the controller itself.
#include "controller/shared/claimed_names.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>

#include "common/config/config_loader.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller {
namespace {

using common::Result;

// A self-signed certificate with CN `cn` and DNS `sans` (none: no subjectAltName at all).
std::string writeCertificate(const std::string& path, const std::string& cn,
                             const std::vector<std::string>& sans) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  if (!sans.empty()) {
    std::string value;
    for (const std::string& s : sans) value += (value.empty() ? "DNS:" : ",DNS:") + s;
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, value.c_str());
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(cert, key, EVP_sha256());
  FILE* f = std::fopen(path.c_str(), "w");
  PEM_write_X509(f, cert);
  std::fclose(f);
  X509_free(cert);
  EVP_PKEY_free(key);
  return path;
}

common::config::ListenConfig listen(const std::string& toml) {
  Result<common::config::SiteConfig> site = common::config::loadSiteConfigString(
      toml + "[[route]]\nrespond = { body = \"x\" }\n", "/etc/scalws/t.toml");
  EXPECT_TRUE(site.ok()) << site.status().message();
  return site.ok() ? site->listens[0] : common::config::ListenConfig();
}

TEST(ClaimedNames, TheListenersOwnNamesFirst) {
  Result<std::vector<std::string>> names = claimedNames(
      listen("[[listen]]\naddress = \"127.0.0.1:443\"\nnames = [\"b.example\", \"a.example\"]\n"
             "tls = { cert = \"/nowhere.pem\", key = \"/nowhere.key\" }\n"));
  ASSERT_TRUE(names.ok()) << names.status().message();  // the certificate is not even read
  EXPECT_EQ(*names, (std::vector<std::string>{"a.example", "b.example"}));
  EXPECT_TRUE(claimedNames(listen("[[listen]]\naddress = \"127.0.0.1:80\"\n"))->empty());
}

TEST(ClaimedNames, ACertificatesNamesFromItsFile) {
  testing::TempDir dir;
  std::string shop = writeCertificate(dir.path() + "/shop.pem", "ignored.example",
                                      {"Shop.Example", "*.shop.example", "shop.example"});
  std::string old = writeCertificate(dir.path() + "/old.pem", "Old.Example", {});
  std::string odd = writeCertificate(dir.path() + "/odd.pem", "x", {"a..b", "*.*.c", "ok.example"});
  auto toml = [&](const std::string& more) {
    return "[[listen]]\naddress = \"127.0.0.1:443\"\n[listen.tls]\ncert = \"" + shop +
           "\"\nkey = \"/k\"\n" + more;
  };
  Result<std::vector<std::string>> names = claimedNames(listen(toml("")));
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"*.shop.example", "shop.example"}));
  // More certificates add theirs; one with its own `names` claims those; no SAN: the CN;
  // what is not a DNS name claims nothing.
  names =
      claimedNames(listen(toml("[[listen.tls.certificates]]\ncert = \"" + old +
                               "\"\nkey = \"/k\"\n[[listen.tls.certificates]]\ncert = \"" + odd +
                               "\"\nkey = \"/k\"\n[[listen.tls.certificates]]\ncert = "
                               "\"/nowhere\"\nkey = \"/k\"\nnames = [\"n.example\"]\n")));
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"*.shop.example", "n.example", "ok.example",
                                              "old.example", "shop.example"}));
}

TEST(ClaimedNames, ACertificateThatDoesNotReadIsAnError) {
  testing::TempDir dir;
  Result<std::vector<std::string>> names =
      claimedNames(listen("[[listen]]\naddress = \"127.0.0.1:443\"\ntls = { cert = \"" +
                          dir.path() + "/missing.pem\", key = \"/k\" }\n"));
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.status().message().find("or give the listener `names`"), std::string::npos)
      << names.status().message();
  std::FILE* f = std::fopen((dir.path() + "/junk.pem").c_str(), "w");
  std::fputs("not a certificate\n", f);
  std::fclose(f);
  EXPECT_FALSE(certificateNames(dir.path() + "/junk.pem").ok());
}

}  // namespace
}  // namespace scalws::controller
