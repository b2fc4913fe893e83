// HTTP/3 through memory: a real QUIC client, HTTP/3 frames written by hand (QPACK's static
// table only), an Endpoint with real Connections and Sessions on top, and an owner that
// answers the way handlers do. No socket, no loop.
#include "worker/http3/session.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/unit/worker/quic/quic_test_harness.h"

namespace scalws::worker::http3 {
namespace {

using quic::testing::addressOf;
using quic::testing::Recorder;
using ::scalws::testing::QuicTestClient;

const std::string kBig(600 * 1024 + 7, 'b');  // past the client's 256 KiB stream window

// Answers like the handlers: /hello at once, /big copied in pieces, anything else 404.
struct Owner final : SessionOwner {
  std::vector<std::string> seen;  // "METHOD path host version"
  void onRequest(Stream& s) noexcept override {
    Request& r = s.request();
    if (s.requestError() != 0) {  // what Connection::onRequest does first
      s.respond(s.requestError(), {}, "", BodyLifetime::kStable);
      return;
    }
    seen.push_back(std::string(r.method_name) + " " + std::string(r.target) + " " +
                   std::string(r.host) + " " + std::string(httpVersionName(r.version)));
    if (r.target == "/hello") {
      s.respond(200, {}, "hello h3", BodyLifetime::kStable);
    } else if (r.target == "/fields") {
      const HeaderField fields[] = {{"content-type", "text/plain"},
                                    {"etag", "\"5f0c-400\""},
                                    {"last-modified", "Thu, 03 Dec 2026 10:00:00 GMT"},
                                    {"x-site", "shop"}};
      s.respond(200, fields, "fields", BodyLifetime::kStable);
    } else if (r.target == "/big") {
      ResponseHead head;
      head.content_length = kBig.size();
      s.sendHead(head);
      for (size_t off = 0; off < kBig.size(); off += 50'000) {
        s.sendBody(std::string_view(kBig).substr(off, 50'000), BodyLifetime::kCopy);
      }
      s.finish();
    } else {
      s.respond(404, {}, "", BodyLifetime::kStable);
    }
  }
  void onResponseFinished(Stream&) noexcept override {}
  void onStreamClosed(Stream&) noexcept override {}
  void onOutputPending() noexcept override {}
  void onBodyTooLarge(Stream& s) noexcept override {
    s.respond(413, {}, "", BodyLifetime::kStable);
  }
};

struct H3Connection final : quic::EndpointConnection {
  Session session;
  quic::Connection conn;
  quic::Endpoint& endpoint;
  Recorder& out;
  H3Connection(Owner& owner, quic::Endpoint& ep, std::shared_ptr<const quic::TlsContext> tls,
               Recorder& recorder, common::DateCache& date, BufferPool& pool, CodecMemory& memory)
      : session(owner, conn, SessionSettings{}, date, pool, &memory),
        conn(session, ep, std::move(tls), quic::ConnectionSettings{}),
        endpoint(ep),
        out(recorder) {}
  quic::Connection& transport() noexcept override { return conn; }
  void onDatagram(const quic::Datagram& d, uint64_t now) noexcept override { conn.receive(d, now); }
  void afterDatagrams(uint64_t now) noexcept override {
    session.collect();
    if (conn.stats().handshake_completed) endpoint.onHandshakeCompleted(*this);
    conn.write(now, out, endpoint.sendBuffer(), quic::Endpoint::kSendBuffer);
    session.collect();
  }
};

class SessionTest : public ::testing::Test, private quic::ConnectionFactory {
 protected:
  SessionTest()
      : endpoint_(settings(), tls_.quic, recorder_, *this),
        client_(addressOf("127.0.0.1", 40000), server_) {}

  static quic::EndpointSettings settings() {
    quic::EndpointSettings s;
    s.steering_id = 0;
    return s;
  }
  bool admitsConnection() noexcept override { return true; }
  quic::EndpointConnection* createConnection(
      const quic::Connection::Start& start) noexcept override {
    auto c = std::make_unique<H3Connection>(owner_, endpoint_, tls_.quic, recorder_, date_, pool_,
                                            memory_);
    if (!c->conn.start(start)) return nullptr;
    connections_.push_back(std::move(c));
    return connections_.back().get();
  }

  // Datagrams both ways, 5 ms apart, timers run, until both sides are quiet.
  void pump(int rounds = 400) {
    for (int i = 0; i < rounds; ++i) {
      now_ += 5'000'000;
      for (auto& c : connections_) {
        if (c->conn.expiry() <= now_) {
          c->conn.handleExpiry(now_);
          c->afterDatagrams(now_);
        }
      }
      client_.expire(now_);
      auto to_server = client_.write(now_);
      for (auto& bytes : to_server) {
        quic::Datagram d;
        d.local = quic::testing::socketAddress(server_);
        d.remote = quic::testing::socketAddress(client_.address());
        d.data = bytes.data();
        d.len = bytes.size();
        endpoint_.onDatagram(d, now_, 1'700'000'000ull * NGTCP2_SECONDS);
      }
      endpoint_.endBatch(now_);
      auto to_client = recorder_.take();
      for (auto& s : to_client) client_.read(s.data, now_);
      if (to_server.empty() && to_client.empty()) return;
    }
  }

  // The client's side of RFC 9114 §6.2: a control stream with SETTINGS (empty by default),
  // and the two QPACK streams.
  void openHttp3(const std::string& settings = {}) {
    pump();
    ASSERT_TRUE(client_.handshakeCompleted());
    std::string control("\x00\x04", 2);
    control += static_cast<char>(settings.size());
    client_.send(client_.openUni(), control + settings, false);
    client_.send(client_.openUni(), std::string("\x02", 1), false);
    client_.send(client_.openUni(), std::string("\x03", 1), false);
  }

  // SETTINGS that offer the server a QPACK dynamic table, as browsers do:
  // QPACK_MAX_TABLE_CAPACITY (0x01) 4096, QPACK_BLOCKED_STREAMS (0x07) 100.
  static std::string dynamicTableOffer() { return std::string("\x01\x50\x00\x07\x40\x64", 6); }

  // GET `path` for authority site.test: a HEADERS frame of QPACK static references, and a
  // Host field (a literal name) when `host` is not empty.
  int64_t get(const std::string& path, const std::string& host = "") {
    std::string fields("\x00\x00", 2);
    fields += '\xd1';  // :method GET (static 17)
    fields += '\xd7';  // :scheme https (static 23)
    fields += '\x51';  // :path, name from static 1, literal value
    fields += static_cast<char>(path.size());
    fields += path;
    fields += '\x50';  // :authority, name from static 0
    fields += '\x09';
    fields += "site.test";
    if (!host.empty()) {
      fields += '\x24';  // literal field line, literal name of 4 bytes
      fields += "host";
      fields += static_cast<char>(host.size());
      fields += host;
    }
    std::string frame("\x01", 1);
    frame += static_cast<char>(fields.size());
    frame += fields;
    int64_t id = client_.openBidi();
    client_.send(id, frame, true);
    return id;
  }

  static uint64_t varint(const std::string& s, size_t& pos) {
    uint8_t first = static_cast<uint8_t>(s[pos]);
    size_t len = size_t{1} << (first >> 6);
    uint64_t v = first & 0x3f;
    for (size_t i = 1; i < len; ++i) v = (v << 8) | static_cast<uint8_t>(s[pos + i]);
    pos += len;
    return v;
  }

  // The response on a stream: its HEADERS payload and every DATA payload joined.
  static void parse(const std::string& stream, std::string& headers, std::string& body) {
    size_t pos = 0;
    while (pos < stream.size()) {
      uint64_t type = varint(stream, pos);
      uint64_t len = varint(stream, pos);
      std::string payload = stream.substr(pos, len);
      pos += len;
      if (type == 0x01 && headers.empty()) headers = payload;
      if (type == 0x00) body += payload;
    }
  }

  quic::testing::TestTls tls_;
  Recorder recorder_;
  common::DateCache date_;
  BufferPool pool_;
  CodecMemory memory_;  // as a worker's loop gives nghttp3
  Owner owner_;
  quic::Endpoint endpoint_;
  sockaddr_in server_ = addressOf("127.0.0.1", 4433);
  QuicTestClient client_;
  std::vector<std::unique_ptr<H3Connection>> connections_;
  uint64_t now_ = 1'000'000'000;
};

TEST_F(SessionTest, ARequestIsRoutedToTheOwnerAndAnswered) {
  openHttp3();
  int64_t id = get("/hello");
  pump();
  ASSERT_EQ(owner_.seen.size(), 1u);
  EXPECT_EQ(owner_.seen[0], "GET /hello site.test HTTP/3.0");
  ASSERT_TRUE(client_.finished(id));
  std::string headers;
  std::string body;
  parse(client_.received(id), headers, body);
  ASSERT_GE(headers.size(), 3u);
  EXPECT_EQ(static_cast<uint8_t>(headers[2]), 0xd9);  // :status 200 (static 25)
  EXPECT_EQ(body, "hello h3");
}

// RFC 9114 §4.3.1: Host may repeat :authority but not name another one (routes would
// match one while PHP's HTTP_HOST carried the other).
TEST_F(SessionTest, AHostThatDiffersFromTheAuthorityGets400) {
  openHttp3();
  int64_t same = get("/hello", "SITE.test");
  int64_t other = get("/hello", "other.test");
  pump();
  ASSERT_EQ(owner_.seen.size(), 1u);
  EXPECT_EQ(owner_.seen[0], "GET /hello site.test HTTP/3.0");
  ASSERT_TRUE(client_.finished(same));
  ASSERT_TRUE(client_.finished(other));
  std::string headers;
  std::string body;
  parse(client_.received(same), headers, body);
  ASSERT_GE(headers.size(), 3u);
  EXPECT_EQ(static_cast<uint8_t>(headers[2]), 0xd9);  // :status 200
  headers.clear();
  body.clear();
  parse(client_.received(other), headers, body);
  ASSERT_GE(headers.size(), 4u);
  EXPECT_EQ(static_cast<uint8_t>(headers[2]), 0xff);  // :status 400 (static 67 = 63 + 4)
  EXPECT_EQ(static_cast<uint8_t>(headers[3]), 0x04);
}

TEST_F(SessionTest, ALargeBodyCrossesFlowControlAndComesWhole) {
  openHttp3();
  int64_t id = get("/big");
  pump();
  ASSERT_TRUE(client_.finished(id));
  std::string headers;
  std::string body;
  parse(client_.received(id), headers, body);
  EXPECT_EQ(body.size(), kBig.size());
  EXPECT_EQ(body, kBig);
  // Acknowledged, so handed back: the buffers are in the pool, not held by the stream.
  EXPECT_GT(pool_.freeCountForTest(), 0u);
}

TEST_F(SessionTest, ManyStreamsAtOnceEachGetTheirAnswer) {
  openHttp3();
  std::vector<int64_t> ids;
  for (int i = 0; i < 30; ++i) ids.push_back(get(i % 3 == 0 ? "/nothing" : "/hello"));
  pump();
  ASSERT_EQ(owner_.seen.size(), 30u);
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(client_.finished(ids[i])) << i;
    std::string headers;
    std::string body;
    parse(client_.received(ids[i]), headers, body);
    EXPECT_EQ(static_cast<uint8_t>(headers[2]), i % 3 == 0 ? 0xdb : 0xd9) << i;  // 404 : 200
  }
  // Every stream was recycled: the active count went back to zero.
  ASSERT_EQ(connections_.size(), 1u);
  EXPECT_EQ(connections_[0]->session.activeStreams(), 0u);
}

// The server encodes response fields with QPACK's static table and literals only, as nginx
// and quic-go do: a dynamic table saves a few dozen bytes per response but costs an insert,
// a blocked-stream check and a Section Acknowledgment from the client per response, which
// came to about 9 % of a worker's CPU per small response.
TEST_F(SessionTest, ResponseFieldsNeverUseTheDynamicTableAClientOffers) {
  openHttp3(dynamicTableOffer());
  std::vector<int64_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(get("/fields"));
  pump();
  for (int64_t id : ids) {
    ASSERT_TRUE(client_.finished(id));
    std::string headers;
    std::string body;
    parse(client_.received(id), headers, body);
    ASSERT_GE(headers.size(), 3u);
    EXPECT_EQ(headers[0], '\0');  // Required Insert Count 0: no dynamic table reference
    EXPECT_EQ(body, "fields");
  }
  // Server-initiated unidirectional streams are 3, 7, 11: control, QPACK encoder, QPACK
  // decoder. The encoder stream carries its type and no instruction.
  EXPECT_EQ(client_.received(7), std::string("\x02", 1));
}

}  // namespace
}  // namespace scalws::worker::http3
