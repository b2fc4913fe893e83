// Fuzz target: the packet input path of an HTTP/3 listener — the Endpoint's header checks
// and routing, Retry/reset/version negotiation, and real Connections (ngtcp2 + GnuTLS,
// Initial decryption, the ClientHello, transport parameters) with the HTTP/3 Session on
// top, answering every request. Input: records of [flags][length: 2 bytes][datagram];
// flags bits 0-1 pick one of four client addresses, bit 6 advances the clock 100 ms,
// bit 7 ends the batch (each connection writes). Whatever the server sends is dropped.
#include <arpa/inet.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/http_date.h"
#include "worker/http3/session.h"
#include "worker/quic/endpoint.h"
#include "worker/quic/tls_context.h"

namespace {

namespace common = scalws::common;
using namespace scalws::worker;
using namespace scalws::worker::quic;

std::string g_dir;

void removeDir() {
  std::error_code ec;
  std::filesystem::remove_all(g_dir, ec);
}

// A self-signed P-256 certificate made once per process (no key is ever committed).
common::config::ListenConfig makeListen() {
  char pattern[] = "/tmp/scalws-quic-fuzz-XXXXXX";
  g_dir = mkdtemp(pattern);
  std::atexit(&removeDir);
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("fuzz.test"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509_sign(x, key, EVP_sha256());
  FILE* f = std::fopen((g_dir + "/c.pem").c_str(), "wb");
  PEM_write_X509(f, x);
  std::fclose(f);
  f = std::fopen((g_dir + "/k.pem").c_str(), "wb");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(x);
  EVP_PKEY_free(key);
  common::config::ListenConfig listen;
  listen.address = "127.0.0.1:4433";
  listen.host = "127.0.0.1";
  listen.port = 4433;
  listen.http3 = true;
  common::config::TlsConfig tls;
  tls.cert = g_dir + "/c.pem";
  tls.key = g_dir + "/k.pem";
  listen.tls = tls;
  return listen;
}

std::shared_ptr<const TlsContext> context() {
  static std::shared_ptr<const TlsContext> built = [] {
    common::config::ListenConfig listen = makeListen();
    auto tcp = tls::ServerContext::build(listen);
    if (!tcp.ok()) std::abort();
    auto quic = TlsContext::build(listen, *tcp);
    if (!quic.ok()) std::abort();
    return *quic;
  }();
  return built;
}

struct Sink final : DatagramSender {
  size_t bytes = 0;
  void send(const ngtcp2_addr&, const ngtcp2_addr&, uint8_t, const uint8_t*, size_t len,
            size_t) noexcept override {
    bytes += len;
  }
};

class FuzzConnection final : public EndpointConnection, private http3::SessionOwner {
 public:
  FuzzConnection(Endpoint& endpoint, Sink& sink, common::DateCache& date, BufferPool& pool,
                 CodecMemory& memory)
      : endpoint_(endpoint),
        sink_(sink),
        session_(*this, transport_, http3::SessionSettings{}, date, pool, &memory),
        transport_(session_, endpoint, context(), ConnectionSettings{}) {}
  Connection& transport() noexcept override { return transport_; }
  void onDatagram(const Datagram& d, uint64_t now) noexcept override { transport_.receive(d, now); }
  void afterDatagrams(uint64_t now) noexcept override {
    session_.collect();
    if (transport_.stats().handshake_completed) endpoint_.onHandshakeCompleted(*this);
    transport_.write(now, sink_, endpoint_.sendBuffer(), Endpoint::kSendBuffer);
    session_.collect();
  }
  void expire(uint64_t now) {
    if (transport_.expiry() <= now) transport_.handleExpiry(now);
    afterDatagrams(now);
  }
  bool dead() const { return transport_.isDead(); }
  void abortAll() { session_.abortAll(); }

 private:
  void onRequest(http3::Stream& s) noexcept override {
    s.respond(s.requestError() != 0 ? s.requestError() : 200, {}, "fuzz", BodyLifetime::kStable);
  }
  void onResponseFinished(http3::Stream&) noexcept override {}
  void onStreamClosed(http3::Stream&) noexcept override {}
  void onOutputPending() noexcept override {}
  void onBodyTooLarge(http3::Stream& s) noexcept override {
    s.respond(413, {}, "", BodyLifetime::kStable);
  }

  Endpoint& endpoint_;
  Sink& sink_;
  http3::Session session_;
  Connection transport_;
};

struct Factory final : ConnectionFactory {
  Endpoint* endpoint = nullptr;
  Sink* sink = nullptr;
  common::DateCache* date = nullptr;
  BufferPool* pool = nullptr;
  CodecMemory* memory = nullptr;
  std::vector<std::unique_ptr<FuzzConnection>> made;
  bool admitsConnection() noexcept override { return made.size() < 8; }
  EndpointConnection* createConnection(const Connection::Start& start) noexcept override {
    auto c = std::make_unique<FuzzConnection>(*endpoint, *sink, *date, *pool, *memory);
    if (!c->transport().start(start)) return nullptr;
    made.push_back(std::move(c));
    return made.back().get();
  }
};

SocketAddress address(uint16_t port) {
  SocketAddress a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.len = sizeof(sockaddr_in);
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  common::DateCache date;
  BufferPool pool;
  CodecMemory memory;  // as a worker's loop gives nghttp3
  Sink sink;
  Factory factory;
  EndpointSettings settings;
  settings.steering_id = 0;
  Endpoint endpoint(settings, context(), sink, factory);
  factory.endpoint = &endpoint;
  factory.sink = &sink;
  factory.date = &date;
  factory.pool = &pool;
  factory.memory = &memory;
  uint64_t now = 1'000'000'000;
  const uint64_t unix_now = 1'700'000'000ull * NGTCP2_SECONDS;
  size_t pos = 0;
  while (pos + 3 <= size) {
    uint8_t flags = data[pos];
    size_t len = (size_t{data[pos + 1]} << 8) | data[pos + 2];
    pos += 3;
    len = std::min(len, size - pos);
    Datagram d;
    d.local = address(4433);
    d.remote = address(static_cast<uint16_t>(40000 + (flags & 3)));
    d.data = data + pos;
    d.len = len;
    pos += len;
    if ((flags & 0x40) != 0) now += 100'000'000;
    if (len > 0) endpoint.onDatagram(d, now, unix_now);
    if ((flags & 0x80) != 0) endpoint.endBatch(now);
  }
  endpoint.endBatch(now);
  // Let every timer run out: handshake timeouts, closing periods.
  for (int i = 0; i < 3; ++i) {
    now += 20 * NGTCP2_SECONDS;
    for (auto& c : factory.made) c->expire(now);
  }
  for (auto& c : factory.made) {
    c->abortAll();
    endpoint.remove(*c);
  }
  return 0;
}
