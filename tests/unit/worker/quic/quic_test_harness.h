// An Endpoint and the connections it makes, wired to QuicTestClient through memory: what
// the server sends is recorded (split into datagrams as GSO would), and a pump moves
// datagrams both ways until nothing is left to move. No socket anywhere.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "tests/support/quic_test_client.h"
#include "tests/unit/worker/tls/test_tls.h"
#include "worker/quic/endpoint.h"
#include "worker/quic/tls_context.h"

namespace scalws::worker::quic::testing {

inline sockaddr_in addressOf(const char* ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

inline SocketAddress socketAddress(const sockaddr_in& a) {
  SocketAddress s;
  std::memcpy(&s.storage, &a, sizeof(a));
  s.len = sizeof(a);
  return s;
}

// A listener's TLS contexts on two certificates made for the test: site.test (the default)
// and other.test.
struct TestTls {
  tls::testing::TempDir dir;
  common::config::ListenConfig listen;
  std::shared_ptr<const tls::ServerContext> tcp;
  std::shared_ptr<const TlsContext> quic;

  TestTls() {
    tls::testing::TestCert cert = tls::testing::makeCert(dir, "site", "site.test", {"site.test"});
    tls::testing::TestCert other =
        tls::testing::makeCert(dir, "other", "other.test", {"other.test"});
    listen = tls::testing::tlsListen(cert);
    common::config::TlsCertificateConfig second;
    second.cert = other.cert;
    second.key = other.key;
    listen.tls->certificates.push_back(second);
    listen.http3 = true;
    auto built = tls::ServerContext::build(listen);
    EXPECT_TRUE(built.ok()) << built.status().message();
    tcp = std::move(built).value();
    auto q = TlsContext::build(listen, tcp);
    EXPECT_TRUE(q.ok()) << q.status().message();
    quic = std::move(q).value();
  }
};

struct Recorder final : DatagramSender {
  struct Sent {
    SocketAddress remote;
    std::vector<uint8_t> data;
  };
  std::vector<Sent> sent;
  void send(const ngtcp2_addr&, const ngtcp2_addr& remote, uint8_t, const uint8_t* data, size_t len,
            size_t segment) noexcept override {
    for (size_t off = 0; off < len; off += segment) {
      Sent s;
      std::memcpy(&s.remote.storage, remote.addr, remote.addrlen);
      s.remote.len = remote.addrlen;
      s.data.assign(data + off, data + std::min(len, off + segment));
      sent.push_back(std::move(s));
    }
  }
  std::vector<Sent> take() { return std::exchange(sent, {}); }
};

// The protocol above QUIC reduced to nothing: accepts every stream byte.
struct NullApplication final : Application {
  Connection* connection = nullptr;
  bool onSendKeysReady() noexcept override { return true; }
  void onHandshakeCompleted() noexcept override {}
  bool onStreamData(int64_t id, const uint8_t*, size_t len, bool, bool) noexcept override {
    connection->consumed(id, len);
    return true;
  }
  bool onStreamAcked(int64_t, uint64_t) noexcept override { return true; }
  bool onStreamClosed(int64_t, uint64_t) noexcept override { return true; }
  bool onStreamReset(int64_t, uint64_t) noexcept override { return true; }
  bool onStreamStopSending(int64_t, uint64_t) noexcept override { return true; }
  bool onStreamWritable(int64_t) noexcept override { return true; }
  void onPeerStreamLimit(uint64_t) noexcept override {}
  bool nextOutgoing(Outgoing&) noexcept override { return true; }
  bool onOutgoingWritten(int64_t, size_t) noexcept override { return true; }
  void onOutgoingBlocked(int64_t) noexcept override {}
  void onOutgoingShut(int64_t) noexcept override {}
};

struct TestConnection final : EndpointConnection {
  NullApplication app;
  Connection conn;
  Endpoint& endpoint;
  Recorder& out;
  TestConnection(Endpoint& ep, std::shared_ptr<const TlsContext> tls, Recorder& recorder)
      : conn(app, ep, std::move(tls), ConnectionSettings{}), endpoint(ep), out(recorder) {
    app.connection = &conn;
  }
  Connection& transport() noexcept override { return conn; }
  void onDatagram(const Datagram& d, uint64_t now) noexcept override { conn.receive(d, now); }
  void afterDatagrams(uint64_t now) noexcept override {
    // As http3::Connection does: the endpoint hears of the handshake before the write, so
    // what it queues (NEW_TOKEN) leaves with it.
    if (conn.stats().handshake_completed) endpoint.onHandshakeCompleted(*this);
    conn.write(now, out, endpoint.sendBuffer(), Endpoint::kSendBuffer);
  }
};

struct Factory final : ConnectionFactory {
  Endpoint* endpoint = nullptr;
  std::shared_ptr<const TlsContext> tls;
  Recorder* out = nullptr;
  bool admit = true;
  std::vector<std::unique_ptr<TestConnection>> made;
  std::vector<Connection::Start> starts;  // as given (pointers valid during the call only)
  bool admitsConnection() noexcept override { return admit; }
  EndpointConnection* createConnection(const Connection::Start& start) noexcept override {
    starts.push_back(start);
    auto c = std::make_unique<TestConnection>(*endpoint, tls, *out);
    if (!c->conn.start(start)) return nullptr;
    made.push_back(std::move(c));
    return made.back().get();
  }
};

class EndpointHarness {
 public:
  static constexpr uint64_t kStart = 1'000'000'000;

  explicit EndpointHarness(EndpointSettings settings = {}) {
    if (settings.steering_id == kNoSteering) settings.steering_id = 3;
    factory.tls = tls.quic;
    factory.out = &recorder;
    endpoint = std::make_unique<Endpoint>(settings, tls.quic, recorder, factory);
    factory.endpoint = endpoint.get();
  }

  // Feeds one datagram from `from`.
  void deliver(const std::vector<uint8_t>& bytes, const sockaddr_in& from) {
    Datagram d;
    d.local = socketAddress(server);
    d.remote = socketAddress(from);
    d.data = bytes.data();
    d.len = bytes.size();
    endpoint->onDatagram(d, now, unix_now, from_front);
  }
  void endBatch() { endpoint->endBatch(now); }

  // Moves datagrams between the client and the endpoint, 5 ms apart, running the
  // connections' timers (ACK delay, pacing) as they fall due, until neither side has
  // anything to send.
  void pump(::scalws::testing::QuicTestClient& client, int rounds = 40) {
    for (int i = 0; i < rounds; ++i) {
      now += 5'000'000;
      for (auto& c : factory.made) {
        if (c->conn.expiry() <= now) {
          c->conn.handleExpiry(now);
          c->afterDatagrams(now);
        }
      }
      client.expire(now);
      auto to_server = client.write(now);
      for (auto& d : to_server) deliver(d, client.address());
      endBatch();
      auto to_client = recorder.take();
      for (auto& s : to_client) client.read(s.data, now);
      if (to_server.empty() && to_client.empty()) return;
    }
  }

  TestTls tls;
  Recorder recorder;
  Factory factory;
  std::unique_ptr<Endpoint> endpoint;
  sockaddr_in server = addressOf("127.0.0.1", 4433);
  uint64_t now = kStart;
  uint64_t unix_now = 1'700'000'000ull * NGTCP2_SECONDS;
  bool from_front = false;  // as if a shared address's front passed them on
};

}  // namespace scalws::worker::quic::testing
