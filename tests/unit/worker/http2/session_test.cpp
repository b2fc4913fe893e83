#include "worker/http2/session.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>

#include "tests/unit/worker/http2/h2_test_peer.h"

namespace scalws::worker::http2 {
namespace {

using testing::Client;
using testing::frame;
using testing::HpackEncoder;
using testing::preface;
using testing::SessionHarness;
using testing::u32;

TEST(Http2Session, AnswersARequestWithHeadersAndBody) {
  SessionHarness server;
  Client client;
  int32_t id = client.get("/hello?x=1");
  client.exchange(server);
  const Client::Response& r = client.responses[id];
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
  EXPECT_EQ(r.headers.at("content-type"), "text/plain");  // lower-cased for HTTP/2
  EXPECT_EQ(r.headers.at("content-length"), "5");
  EXPECT_TRUE(r.headers.at("date").ends_with(" GMT"));
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.close_error, 0u);
  EXPECT_EQ(server.owner.last_path, "/hello");
  EXPECT_EQ(server.owner.finished, std::vector<int32_t>{id});
  EXPECT_EQ(server.owner.closed, std::vector<int32_t>{id});
  EXPECT_EQ(server.session.activeStreams(), 0u);
}

TEST(Http2Session, TheRequestIsProtocolNeutral) {
  SessionHarness server;
  Client client;
  std::string cookie, host, query, method;
  server.owner.respond = [&](Stream& s) {
    Request& r = s.request();
    cookie = std::string(r.header("cookie"));
    host = std::string(r.host);
    query = std::string(r.query);
    method = std::string(r.method_name);
    EXPECT_EQ(r.version, HttpVersion::kHttp2);
    EXPECT_EQ(r.method, Method::kPost);
    EXPECT_TRUE(r.has_body);
    EXPECT_EQ(r.content_length, 3u);
    EXPECT_EQ(r.target, "/p/a%20b?q=1&r");
    EXPECT_EQ(r.raw_path, "/p/a%20b");
    s.respond(204, {}, {}, BodyLifetime::kStable);
  };
  std::string body = "abc";
  nghttp2_data_provider provider;
  provider.source.ptr = &body;
  provider.read_callback = [](nghttp2_session*, int32_t, uint8_t* buf, size_t len, uint32_t* flags,
                              nghttp2_data_source* src, void*) -> ssize_t {
    auto* b = static_cast<std::string*>(src->ptr);
    size_t n = std::min(len, b->size());
    std::memcpy(buf, b->data(), n);
    b->erase(0, n);
    if (b->empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  };
  std::string names[] = {":method", ":scheme", ":authority",    ":path",
                         "cookie",  "cookie",  "content-length"};
  std::string values[] = {"POST", "https", "WWW.Example.COM:8443", "/p/a%20b?q=1&r", "a=1",
                          "b=2",  "3"};
  nghttp2_nv nva[7];
  for (int i = 0; i < 7; ++i) {
    nva[i] = {reinterpret_cast<uint8_t*>(names[i].data()),
              reinterpret_cast<uint8_t*>(values[i].data()), names[i].size(), values[i].size(),
              NGHTTP2_NV_FLAG_NONE};
  }
  int32_t id = nghttp2_submit_request(client.raw(), nullptr, nva, 7, &provider, nullptr);
  client.exchange(server);
  EXPECT_EQ(client.responses[id].status, 204);
  EXPECT_EQ(host, "www.example.com");
  EXPECT_EQ(cookie, "a=1; b=2");  // RFC 9113 §8.2.3
  EXPECT_EQ(query, "q=1&r");
  EXPECT_EQ(method, "POST");
}

TEST(Http2Session, HeadKeepsTheLengthAndDropsTheBody) {
  SessionHarness server;
  Client client;
  int32_t id = client.get("/", "HEAD");
  client.exchange(server);
  EXPECT_EQ(client.responses[id].status, 200);
  EXPECT_EQ(client.responses[id].headers.at("content-length"), "5");
  EXPECT_EQ(client.responses[id].body, "");
  EXPECT_TRUE(client.responses[id].closed);
}

TEST(Http2Session, ConnectionSpecificHeadersAreNotSent) {
  SessionHarness server;
  Client client;
  server.owner.respond = [](Stream& s) {
    const HeaderField h[] = {{"Connection", "close"},
                             {"Keep-Alive", "5"},
                             {"Transfer-Encoding", "chunked"},
                             {"Content-Length", "99"},
                             {"X-Kept", "yes"}};
    s.respond(200, h, "ok", BodyLifetime::kCopy);
  };
  int32_t id = client.get("/");
  client.exchange(server);
  const auto& h = client.responses[id].headers;
  EXPECT_EQ(h.count("connection"), 0u);
  EXPECT_EQ(h.count("keep-alive"), 0u);
  EXPECT_EQ(h.count("transfer-encoding"), 0u);
  EXPECT_EQ(h.at("content-length"), "2");
  EXPECT_EQ(h.at("x-kept"), "yes");
  EXPECT_EQ(client.responses[id].body, "ok");
}

TEST(Http2Session, StreamObjectsAreReused) {
  SessionHarness server;
  Client client;
  std::set<const Stream*> objects;
  server.owner.respond = [&](Stream& s) {
    objects.insert(&s);
    s.respond(200, {}, "x", BodyLifetime::kStable);
  };
  for (int i = 0; i < 50; ++i) {
    client.get("/");
    client.exchange(server);
  }
  EXPECT_EQ(server.owner.requests, 50);
  EXPECT_EQ(objects.size(), 1u);
}

TEST(Http2Session, TheWindowHoldsDataBackUntilThePeerOpensIt) {
  SessionHarness server;
  HpackEncoder hpack;
  std::string big(100, 'w');
  server.owner.respond = [&](Stream& s) { s.respond(200, {}, big, BodyLifetime::kStable); };
  // A client whose stream windows start at 10 bytes and who opens them only when it wants.
  std::string settings = std::string("\x00\x04", 2) + u32(10);
  server.feed(std::string(NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN) +
              frame(NGHTTP2_SETTINGS, 0, 0, settings) +
              frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, 1,
                    hpack.encode(testing::getRequest("/"))));
  auto dataOf = [](const std::vector<testing::Frame>& frames, bool& ended) {
    std::string data;
    for (const auto& f : frames) {
      if (f.type != NGHTTP2_DATA) continue;
      data += f.payload;
      ended = ended || (f.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    }
    return data;
  };
  bool ended = false;
  std::string got = dataOf(server.take(), ended);
  EXPECT_EQ(got, std::string(10, 'w'));
  EXPECT_FALSE(ended);
  EXPECT_TRUE(server.session.hasBlockedData());
  server.feed(frame(NGHTTP2_WINDOW_UPDATE, 0, 1, u32(1000)));
  got += dataOf(server.take(), ended);
  EXPECT_EQ(got, big);
  EXPECT_TRUE(ended);
  EXPECT_FALSE(server.session.hasBlockedData());
}

struct CountingOwner : RefCounted {
  bool released = false;
  void onLastRelease() noexcept override { released = true; }
};

TEST(Http2Session, FilesAreReadFrameByFrameAndTheirOwnerHeldUntilSent) {
  char path[] = "/tmp/scalws-h2-file-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  std::string content(100 * 1024 + 7, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i % 239);
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));

  SessionHarness server;
  Client client;
  CountingOwner owner;
  server.owner.respond = [&](Stream& s) {
    ResponseHead head;
    head.content_length = content.size() - 5;
    s.sendHead(head);
    s.sendFile(FileSlice{fd, 5, content.size() - 5, &owner});
    s.finish();
  };
  int32_t id = client.get("/file");
  client.exchange(server);
  EXPECT_TRUE(client.responses[id].body == content.substr(5));
  EXPECT_EQ(client.responses[id].body.size(), content.size() - 5);
  EXPECT_EQ(owner.refCountForTest(), 1u);  // every reference the stream took is back
  close(fd);
}

TEST(Http2Session, AStreamingHandlerIsToldWhenToWriteMore) {
  struct Producer : WritableObserver {
    ResponseWriter* writer = nullptr;
    int chunks_left = 20;
    void onWritable() noexcept override { produce(); }
    void produce() {
      while (chunks_left > 0 && writer->queuedBytes() < 4096) {
        writer->sendBody(std::string(1000, static_cast<char>('a' + chunks_left % 26)),
                         BodyLifetime::kCopy);
        --chunks_left;
      }
      if (chunks_left == 0) {
        writer->finish();
      } else {
        writer->notifyWhenWritable(this);
      }
    }
  } producer;
  SessionHarness server;
  Client client;
  server.owner.respond = [&](Stream& s) {
    producer.writer = &s;
    ResponseHead head;  // length unknown: streamed
    s.sendHead(head);
    producer.produce();
  };
  int32_t id = client.get("/stream");
  client.exchange(server);
  EXPECT_EQ(producer.chunks_left, 0);
  EXPECT_EQ(client.responses[id].body.size(), 20000u);
  EXPECT_EQ(client.responses[id].headers.count("content-length"), 0u);
  EXPECT_TRUE(client.responses[id].closed);
}

TEST(Http2Session, AResetAbortsTheHandlerBeforeTheStreamGoes) {
  struct Pending : InFlight {
    int aborted = 0;
    void abort() noexcept override { ++aborted; }
  } pending;
  SessionHarness server;
  Client client;
  Stream* held = nullptr;
  server.owner.respond = [&](Stream& s) {
    held = &s;
    s.setInFlight(&pending);  // answers later, like a proxy
  };
  int32_t id = client.get("/slow");
  client.exchange(server);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(pending.aborted, 0);
  EXPECT_TRUE(server.owner.closed.empty());
  nghttp2_submit_rst_stream(client.raw(), NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  client.exchange(server);
  EXPECT_EQ(pending.aborted, 1);
  EXPECT_EQ(server.owner.closed, std::vector<int32_t>{id});
  EXPECT_TRUE(server.owner.finished.empty());
}

TEST(Http2Session, AnAsyncAnswerAsksTheOwnerToSend) {
  SessionHarness server;
  Client client;
  Stream* held = nullptr;
  server.owner.respond = [&](Stream& s) { held = &s; };
  int32_t id = client.get("/later");
  client.exchange(server);
  ASSERT_NE(held, nullptr);
  int before = server.owner.output_pending;
  held->respond(200, {}, "late", BodyLifetime::kCopy);
  EXPECT_GT(server.owner.output_pending, before);
  client.exchange(server);
  EXPECT_EQ(client.responses[id].body, "late");
}

TEST(Http2Session, RequestBodiesReachTheSinkAndTheLimitHolds) {
  struct Sink : BodySink {
    std::string data;
    bool ended = false;
    void onBodyData(std::string_view d) noexcept override { data.append(d); }
    void onBodyEnd() noexcept override { ended = true; }
  } sink;
  SessionHarness server;
  Client client;
  Stream* held = nullptr;
  uint64_t limit = 1000;
  server.owner.respond = [&](Stream& s) {
    held = &s;
    s.setBodyLimit(limit);
    s.request().setBodySink(&sink);
  };
  auto post = [&](size_t size) {
    auto* body = new std::string(size, 'b');
    nghttp2_data_provider provider;
    provider.source.ptr = body;
    provider.read_callback = [](nghttp2_session*, int32_t, uint8_t* buf, size_t len,
                                uint32_t* flags, nghttp2_data_source* src, void*) -> ssize_t {
      auto* b = static_cast<std::string*>(src->ptr);
      size_t n = std::min(len, b->size());
      std::memcpy(buf, b->data(), n);
      b->erase(0, n);
      if (b->empty()) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        delete b;
      }
      return static_cast<ssize_t>(n);
    };
    auto fields = testing::getRequest("/upload", "POST");
    std::vector<nghttp2_nv> nva;
    for (auto& [n, v] : fields) {
      nva.push_back({reinterpret_cast<uint8_t*>(n.data()), reinterpret_cast<uint8_t*>(v.data()),
                     n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
    }
    return nghttp2_submit_request(client.raw(), nullptr, nva.data(), nva.size(), &provider,
                                  nullptr);
  };
  int32_t small = post(600);
  client.exchange(server);
  EXPECT_EQ(sink.data.size(), 600u);
  EXPECT_TRUE(sink.ended);
  held->respond(200, {}, "stored", BodyLifetime::kStable);
  client.exchange(server);
  EXPECT_EQ(client.responses[small].body, "stored");

  sink = Sink();
  int32_t big = post(5000);
  client.exchange(server);
  EXPECT_EQ(server.owner.too_large, 1);
  EXPECT_LE(sink.data.size(), limit);
  EXPECT_EQ(client.responses[big].status, 413);
}

TEST(Http2Session, AGracefulShutdownLetsStreamsFinish) {
  SessionHarness server;
  Client client;
  Stream* held = nullptr;
  server.owner.respond = [&](Stream& s) { held = &s; };
  int32_t id = client.get("/");
  client.exchange(server);
  ASSERT_NE(held, nullptr);
  server.session.shutdown();
  client.exchange(server);
  EXPECT_EQ(client.goaway_error, NGHTTP2_NO_ERROR);
  EXPECT_TRUE(server.session.wantsRead());  // a stream is still open
  held->respond(200, {}, "bye", BodyLifetime::kStable);
  client.exchange(server);
  EXPECT_EQ(client.responses[id].body, "bye");
  EXPECT_FALSE(server.session.wantsRead());
  EXPECT_FALSE(server.session.wantsWrite());
}

TEST(Http2Session, SendStopsAtTheHighWaterMark) {
  SessionSettings settings;
  settings.output_high_water = 32 * 1024;
  SessionHarness server(settings);
  Client client({{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (1 << 30)}});
  std::string big(1 << 20, 'B');
  server.owner.respond = [&](Stream& s) { s.respond(200, {}, big, BodyLifetime::kStable); };
  nghttp2_session_set_local_window_size(client.raw(), NGHTTP2_FLAG_NONE, 0, (1 << 30));
  client.get("/");
  server.feed(client.output());
  server.session.send(server.out);
  EXPECT_LT(server.out.pendingBytes(), settings.output_high_water + 17 * 1024);
  EXPECT_GE(server.out.pendingBytes(), settings.output_high_water);
}

// RFC 9113 §8.3.1: a Host naming another entity than :authority makes the request
// malformed. The router matches :authority while PHP sees Host, so it is refused.
TEST(Http2Session, HostDifferingFromAuthorityIs400) {
  SessionHarness server;
  Client client;
  int32_t differs = client.get("/", "GET", {{"host", "victim.example"}});
  int32_t other_port = client.get("/", "GET", {{"host", "example.com:8443"}});
  int32_t same = client.get("/", "GET", {{"host", "Example.COM"}});
  int32_t same_port = client.get("/", "GET", {{"host", "example.com:443"}});
  client.exchange(server);
  EXPECT_EQ(client.responses[differs].status, 400);
  EXPECT_EQ(client.responses[same].status, 200);
  // :authority names no port here, so any port of the same host is the same entity.
  EXPECT_EQ(client.responses[other_port].status, 200);
  EXPECT_EQ(client.responses[same_port].status, 200);
  EXPECT_EQ(server.owner.errors, std::vector<uint16_t>{400});
}

TEST(Http2Session, HostAndAuthorityWithDifferentPortsIs400) {
  SessionHarness server;
  Client client;
  std::vector<std::pair<std::string, std::string>> fields = {{":method", "GET"},
                                                             {":scheme", "https"},
                                                             {":authority", "example.com:8443"},
                                                             {":path", "/"},
                                                             {"host", "example.com:9443"}};
  std::vector<nghttp2_nv> nva;
  for (auto& [n, v] : fields) {
    nva.push_back({reinterpret_cast<uint8_t*>(n.data()), reinterpret_cast<uint8_t*>(v.data()),
                   n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
  }
  int32_t id =
      nghttp2_submit_request(client.raw(), nullptr, nva.data(), nva.size(), nullptr, nullptr);
  client.exchange(server);
  EXPECT_EQ(client.responses[id].status, 400);
}

}  // namespace
}  // namespace scalws::worker::http2
