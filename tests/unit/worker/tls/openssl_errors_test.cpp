#include "worker/tls/openssl_errors.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <string>

namespace scalws::worker::tls {
namespace {

TEST(OpensslErrorsTest, AnEmptyQueueStillSaysSomething) {
  ERR_clear_error();
  EXPECT_EQ(takeOpensslErrors(), "unknown OpenSSL error");
}

TEST(OpensslErrorsTest, TakesEveryQueuedErrorOnOneLineAndClearsTheQueue) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  ASSERT_NE(ctx, nullptr);
  // Two failures, each queueing at least one error.
  EXPECT_NE(SSL_CTX_use_certificate_file(ctx, "/nonexistent/cert.pem", SSL_FILETYPE_PEM), 1);
  EXPECT_NE(SSL_CTX_use_PrivateKey_file(ctx, "/nonexistent/key.pem", SSL_FILETYPE_PEM), 1);
  SSL_CTX_free(ctx);
  std::string text = takeOpensslErrors();
  EXPECT_NE(text, "unknown OpenSSL error");
  EXPECT_NE(text.find("; "), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(ERR_peek_error(), 0u);
  EXPECT_EQ(takeOpensslErrors(), "unknown OpenSSL error");
}

}  // namespace
}  // namespace scalws::worker::tls
