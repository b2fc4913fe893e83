#include "worker/tls/server_context.h"

#include <gtest/gtest.h>

#include "tests/unit/worker/tls/test_tls.h"

namespace scalws::worker::tls {
namespace {

using testing::ClientAndServer;
using testing::makeCert;
using testing::peerCommonName;
using testing::TempDir;
using testing::tlsListen;

class ServerContextTest : public ::testing::Test {
 protected:
  std::shared_ptr<const ServerContext> build(const common::config::ListenConfig& listen) {
    auto context = ServerContext::build(listen);
    EXPECT_TRUE(context.ok()) << context.status().message();
    return context.ok() ? *context : nullptr;
  }
  std::string errorOf(const common::config::ListenConfig& listen) {
    auto context = ServerContext::build(listen);
    EXPECT_FALSE(context.ok());
    return context.ok() ? "" : context.status().message();
  }
  // Handshakes with a client sending `sni` (none when empty); the CN it was shown.
  std::string certificateFor(const std::shared_ptr<const ServerContext>& context,
                             const std::string& sni) {
    ClientAndServer pair(context, pool_);
    if (!sni.empty()) SSL_set_tlsext_host_name(pair.client(), sni.c_str());
    EXPECT_EQ(pair.handshake(), TlsTransport::Handshake::kDone);
    return peerCommonName(pair.client());
  }

  TempDir dir_;
  BufferPool pool_;
};

TEST_F(ServerContextTest, NamesComeFromTheSubjectAltNamesElseTheCommonName) {
  auto with_sans = makeCert(dir_, "a", "a.test", {"a.test", "*.A.test"});
  auto cn_only = makeCert(dir_, "b", "B.test", {});
  auto listen = tlsListen(with_sans);
  listen.tls->certificates.push_back({cn_only.cert, cn_only.key, "", {}, {}});
  auto context = build(listen);
  ASSERT_TRUE(context);
  EXPECT_EQ(context->certificateCount(), 2u);
  EXPECT_EQ(context->namesOf(0), (std::vector<std::string>{"a.test", "*.a.test"}));
  EXPECT_EQ(context->namesOf(1), (std::vector<std::string>{"b.test"}));
}

TEST_F(ServerContextTest, SniPicksTheCertificateExactWildcardOrDefault) {
  auto def = makeCert(dir_, "default", "default.test", {"default.test"});
  auto exact = makeCert(dir_, "exact", "exact.test", {"exact.test"});
  auto wild = makeCert(dir_, "wild", "wild.test", {"*.wild.test"});
  auto named = makeCert(dir_, "named", "named.test", {"ignored.test"});
  auto listen = tlsListen(def);
  listen.tls->certificates.push_back({exact.cert, exact.key, "", {}, {}});
  listen.tls->certificates.push_back({wild.cert, wild.key, "", {}, {}});
  listen.tls->certificates.push_back({named.cert, named.key, "", {"configured.test"}, {}});
  auto context = build(listen);
  ASSERT_TRUE(context);
  EXPECT_EQ(certificateFor(context, "exact.test"), "exact.test");
  EXPECT_EQ(certificateFor(context, "EXACT.test"), "exact.test");
  EXPECT_EQ(certificateFor(context, "img.wild.test"), "wild.test");
  EXPECT_EQ(certificateFor(context, "configured.test"), "named.test");
  EXPECT_EQ(certificateFor(context, "ignored.test"), "default.test");  // names were overridden
  EXPECT_EQ(certificateFor(context, "a.b.wild.test"), "default.test");
  EXPECT_EQ(certificateFor(context, "nobody.test"), "default.test");
  EXPECT_EQ(certificateFor(context, ""), "default.test");
}

TEST_F(ServerContextTest, AlpnPrefersH2AndFallsBackWithoutFailing) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  auto h2 = build(tlsListen(cert, true));
  auto http1_only = build(tlsListen(cert, false));
  auto negotiate = [&](const std::shared_ptr<const ServerContext>& context,
                       const std::string& wire) {
    ClientAndServer pair(context, pool_);
    SSL_set_alpn_protos(pair.client(), reinterpret_cast<const unsigned char*>(wire.data()),
                        static_cast<unsigned int>(wire.size()));
    EXPECT_EQ(pair.handshake(), TlsTransport::Handshake::kDone);
    return std::string(pair.server().alpn());
  };
  // The server's order wins, whatever the client's.
  EXPECT_EQ(negotiate(h2, std::string("\x08http/1.1\x02h2", 12)), "h2");
  EXPECT_EQ(negotiate(h2, std::string("\x08http/1.1", 9)), "http/1.1");
  EXPECT_EQ(negotiate(http1_only, std::string("\x02h2\x08http/1.1", 12)), "http/1.1");
  EXPECT_EQ(negotiate(h2, std::string("\x06spdy/3", 7)), "");
}

TEST_F(ServerContextTest, OnlyTls12And13WithAeadSuites) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  auto context = build(tlsListen(cert));
  auto attempt = [&](int max_version, const char* ciphers) {
    SSL_CTX* client = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(client, TLS1_VERSION);
    SSL_CTX_set_max_proto_version(client, max_version);
    // Level 0 lets this client offer what a modern OpenSSL would refuse to.
    SSL_CTX_set_cipher_list(client, ciphers);
    ClientAndServer pair(context, pool_, client);
    TlsTransport::Handshake result = pair.handshake();
    std::string cipher = result == TlsTransport::Handshake::kDone
                             ? SSL_get_cipher_name(pair.client())
                             : std::string("refused");
    SSL_CTX_free(client);
    return cipher;
  };
  EXPECT_EQ(attempt(TLS1_1_VERSION, "DEFAULT:@SECLEVEL=0"), "refused");
  EXPECT_EQ(attempt(TLS1_VERSION, "DEFAULT:@SECLEVEL=0"), "refused");
  EXPECT_EQ(attempt(TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA:@SECLEVEL=0"),
            "refused");  // CBC only
  // Server preference: AES-128-GCM first, even when the client lists AES-256 first.
  EXPECT_EQ(attempt(TLS1_2_VERSION, "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256"),
            "ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_EQ(attempt(TLS1_3_VERSION, "DEFAULT"), "TLS_AES_128_GCM_SHA256");
}

TEST_F(ServerContextTest, ErrorsNameTheFileAndTheConfigLocation) {
  auto good = makeCert(dir_, "good", "good.test", {"good.test"});
  auto other = makeCert(dir_, "other", "other.test", {"other.test"});
  dir_.write("garbage.pem", "not a certificate\n");

  auto missing = tlsListen({dir_.file("missing.crt"), good.key});
  EXPECT_EQ(errorOf(missing).rfind("t.toml:3:7: listen.tls.cert: cannot load certificate " +
                                       dir_.file("missing.crt") + ": ",
                                   0),
            0u)
      << errorOf(missing);

  auto garbage = tlsListen({dir_.file("garbage.pem"), good.key});
  EXPECT_NE(errorOf(garbage).find("cannot load certificate " + dir_.file("garbage.pem")),
            std::string::npos);

  auto bad_key = tlsListen({good.cert, dir_.file("garbage.pem")});
  EXPECT_NE(errorOf(bad_key).find("t.toml:3:7: listen.tls.key: cannot load private key " +
                                  dir_.file("garbage.pem")),
            std::string::npos)
      << errorOf(bad_key);

  auto mismatch = tlsListen({good.cert, other.key});
  EXPECT_EQ(errorOf(mismatch), "t.toml:3:7: listen.tls.key: private key " + other.key +
                                   " does not match certificate " + good.cert);

  // An extra certificate's problem is reported at its own location.
  auto extra = tlsListen(good);
  common::config::SourceLocation at{"t.toml", 9, 1};
  extra.tls->certificates.push_back({dir_.file("missing.crt"), good.key, "", {}, at});
  EXPECT_NE(errorOf(extra).find("t.toml:9:1: listen.tls.cert: cannot load certificate"),
            std::string::npos)
      << errorOf(extra);
}

TEST_F(ServerContextTest, AnEncryptedKeyIsRefusedWithoutPrompting) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  FILE* f = std::fopen(cert.key.c_str(), "rb");
  EVP_PKEY* key = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  f = std::fopen(dir_.file("locked.key").c_str(), "wb");
  char pass[] = "secret";
  PEM_write_PrivateKey(f, key, EVP_aes_128_cbc(), nullptr, 0, nullptr, pass);
  std::fclose(f);
  EVP_PKEY_free(key);
  auto listen = tlsListen({cert.cert, dir_.file("locked.key")});
  EXPECT_NE(errorOf(listen).find("cannot load private key " + dir_.file("locked.key")),
            std::string::npos);
}

TEST_F(ServerContextTest, OcspFilesMustBeResponses) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  dir_.write("bad.ocsp", "junk");
  auto listen = tlsListen(cert);
  listen.tls->ocsp = dir_.file("bad.ocsp");
  EXPECT_EQ(errorOf(listen), "t.toml:3:7: listen.tls.ocsp: OCSP response " + dir_.file("bad.ocsp") +
                                 " is not a DER OCSP response");
  listen.tls->ocsp = dir_.file("none.ocsp");
  EXPECT_NE(errorOf(listen).find("listen.tls.ocsp: cannot open " + dir_.file("none.ocsp")),
            std::string::npos);
}

TEST_F(ServerContextTest, TicketKeyFileProblemsAreNamed) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  dir_.write("short.key", "abc");
  auto listen = tlsListen(cert);
  listen.tls->ticket_key_file = dir_.file("short.key");
  EXPECT_NE(errorOf(listen).find("t.toml:3:7: listen.tls.ticket_key_file: ticket key file " +
                                 dir_.file("short.key") + " holds 3 bytes"),
            std::string::npos)
      << errorOf(listen);
}

// Two contexts built from the same config stand for two worker processes (or a reload):
// a ticket one issues must resume on the other.
class ResumptionTest : public ServerContextTest {
 protected:
  // A full handshake on `first`, then a resumption attempt on `second`; true when reused.
  bool resumes(const std::shared_ptr<const ServerContext>& first,
               const std::shared_ptr<const ServerContext>& second, int version) {
    SSL_CTX* client = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(client, version);
    SSL_CTX_set_max_proto_version(client, version);
    SSL_SESSION* session = nullptr;
    {
      ClientAndServer pair(first, pool_, client);
      EXPECT_EQ(pair.handshake(), TlsTransport::Handshake::kDone);
      EXPECT_FALSE(pair.server().sessionReused());
      session = SSL_get1_session(pair.client());
    }
    EXPECT_NE(session, nullptr);
    bool reused = false;
    {
      ClientAndServer pair(second, pool_, client);
      SSL_set_session(pair.client(), session);
      EXPECT_EQ(pair.handshake(), TlsTransport::Handshake::kDone);
      reused = pair.server().sessionReused();
      EXPECT_EQ(reused, SSL_session_reused(pair.client()) == 1);
    }
    SSL_SESSION_free(session);
    SSL_CTX_free(client);
    return reused;
  }
};

TEST_F(ResumptionTest, TicketsResumeAcrossProcessesSharingTheSecret) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  auto listen = tlsListen(cert);
  listen.tls->session_cache = 0;  // tickets alone
  auto a = build(listen);
  auto b = build(listen);
  EXPECT_TRUE(resumes(a, b, TLS1_3_VERSION));
  EXPECT_TRUE(resumes(a, b, TLS1_2_VERSION));
}

TEST_F(ResumptionTest, AKeyFileSharesTicketsAndADifferentOneDoesNot) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  dir_.write("one.key", std::string(48, '1'));
  dir_.write("two.key", std::string(48, '2'));
  auto listen = tlsListen(cert);
  listen.tls->session_cache = 0;
  listen.tls->ticket_key_file = dir_.file("one.key");
  auto a = build(listen);
  auto a_again = build(listen);
  listen.tls->ticket_key_file = dir_.file("two.key");
  auto b = build(listen);
  EXPECT_TRUE(resumes(a, a_again, TLS1_3_VERSION));
  EXPECT_FALSE(resumes(a, b, TLS1_3_VERSION));
  EXPECT_FALSE(resumes(a, b, TLS1_2_VERSION));
}

TEST_F(ResumptionTest, TheSessionCacheResumesWithoutTickets) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  auto listen = tlsListen(cert);
  listen.tls->session_tickets = false;
  auto a = build(listen);
  auto other = build(listen);
  EXPECT_TRUE(resumes(a, a, TLS1_2_VERSION));
  EXPECT_TRUE(resumes(a, a, TLS1_3_VERSION));
  // Without tickets a session lives in one process's cache only.
  EXPECT_FALSE(resumes(a, other, TLS1_3_VERSION));
}

TEST_F(ResumptionTest, NothingResumesWithBothOff) {
  auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
  auto listen = tlsListen(cert);
  listen.tls->session_tickets = false;
  listen.tls->session_cache = 0;
  auto a = build(listen);
  EXPECT_FALSE(resumes(a, a, TLS1_2_VERSION));
}

}  // namespace
}  // namespace scalws::worker::tls
