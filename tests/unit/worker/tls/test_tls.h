// Helpers for the TLS unit tests: certificates made at test time (no keys in the tree), a
// listener config around them, and an OpenSSL client on the other end of a socketpair.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "worker/tls/server_context.h"
#include "worker/tls/tls_transport.h"

namespace scalws::worker::tls::testing {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/scalws-tls-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write(const std::string& name, const std::string& data) const {
    FILE* f = std::fopen(file(name).c_str(), "wb");
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  }

 private:
  std::string path_;
};

struct TestCert {
  std::string cert;
  std::string key;
};

// A self-signed P-256 certificate for `cn` with `sans` as DNS subjectAltNames (none: no
// SAN extension), written as <stem>.crt / <stem>.key in `dir`.
inline TestCert makeCert(const TempDir& dir, const std::string& stem, const std::string& cn,
                         const std::vector<std::string>& sans, int days = 2) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x),
                   static_cast<long>(std::hash<std::string>{}(stem)&0x7fffffff));
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), static_cast<long>(days) * 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, name);
  if (!sans.empty()) {
    std::string value;
    for (const std::string& s : sans) value += (value.empty() ? "DNS:" : ",DNS:") + s;
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, value.c_str());
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(x, key, EVP_sha256());
  TestCert out{dir.file(stem + ".crt"), dir.file(stem + ".key")};
  FILE* f = std::fopen(out.cert.c_str(), "wb");
  PEM_write_X509(f, x);
  std::fclose(f);
  f = std::fopen(out.key.c_str(), "wb");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

inline common::config::ListenConfig tlsListen(const TestCert& cert, bool http2 = true) {
  common::config::ListenConfig listen;
  listen.address = "127.0.0.1:8443";
  listen.host = "127.0.0.1";
  listen.port = 8443;
  listen.http2 = http2;
  common::config::TlsConfig tls;
  tls.cert = cert.cert;
  tls.key = cert.key;
  tls.where.file = "t.toml";
  tls.where.line = 3;
  tls.where.column = 7;
  listen.tls = tls;
  return listen;
}

// The subject CN of the certificate the client was given.
inline std::string peerCommonName(SSL* client) {
  X509* cert = SSL_get1_peer_certificate(client);
  if (cert == nullptr) return "";
  char cn[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
  X509_free(cert);
  return cn;
}

// An OpenSSL client over one end of a non-blocking socketpair; the other end is the
// server's TlsTransport.
class ClientAndServer {
 public:
  explicit ClientAndServer(std::shared_ptr<const ServerContext> context, BufferPool& pool,
                           SSL_CTX* client_ctx = nullptr) {
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds_), 0);
    server_ = std::make_unique<TlsTransport>(fds_[0], std::move(context), pool);
    own_ctx_ = client_ctx == nullptr;
    client_ctx_ = client_ctx != nullptr ? client_ctx : SSL_CTX_new(TLS_client_method());
    client_ = SSL_new(client_ctx_);
    SSL_set_fd(client_, fds_[1]);
    SSL_set_connect_state(client_);
  }
  ~ClientAndServer() {
    // Like a client that ends with close_notify: its session stays resumable.
    SSL_set_shutdown(client_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(client_);
    if (own_ctx_) SSL_CTX_free(client_ctx_);
    server_.reset();
    close(fds_[0]);
    close(fds_[1]);
  }
  SSL* client() { return client_; }
  TlsTransport& server() { return *server_; }
  int clientFd() const { return fds_[1]; }

  // Runs both handshakes to the end; the server's outcome.
  TlsTransport::Handshake handshake() {
    TlsTransport::Handshake s = TlsTransport::Handshake::kWantRead;
    bool client_done = false;
    for (int i = 0; i < 100; ++i) {
      if (s != TlsTransport::Handshake::kDone) s = server_->handshake();
      if (s == TlsTransport::Handshake::kFailed) return s;
      if (!client_done) {
        int r = SSL_do_handshake(client_);
        if (r == 1) {
          client_done = true;
        } else {
          int e = SSL_get_error(client_, r);
          if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            ERR_clear_error();
            return s == TlsTransport::Handshake::kDone ? TlsTransport::Handshake::kFailed : s;
          }
        }
      }
      if (client_done && s == TlsTransport::Handshake::kDone) {
        // TLS 1.3 tickets come after the handshake: let the client read them.
        char b;
        SSL_peek(client_, &b, 1);
        ERR_clear_error();
        return s;
      }
    }
    return TlsTransport::Handshake::kFailed;
  }

  // Everything the client can read now, decrypted.
  std::string clientRead() {
    std::string out;
    char buf[16384];
    for (int i = 0; i < 1000; ++i) {
      int n = SSL_read(client_, buf, sizeof(buf));
      if (n > 0) {
        out.append(buf, static_cast<size_t>(n));
        continue;
      }
      ERR_clear_error();
      break;
    }
    return out;
  }

  void clientWrite(const std::string& data) {
    ASSERT_EQ(SSL_write(client_, data.data(), static_cast<int>(data.size())),
              static_cast<int>(data.size()));
  }

 private:
  int fds_[2] = {-1, -1};
  std::unique_ptr<TlsTransport> server_;
  SSL_CTX* client_ctx_ = nullptr;
  bool own_ctx_ = true;
  SSL* client_ = nullptr;
};

}  // namespace scalws::worker::tls::testing
