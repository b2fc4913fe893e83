// The session against malformed and abusive peers: each defence of session.h, from raw
// frames a well-behaved client library would never send.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/worker/http2/h2_test_peer.h"
#include "worker/http2/session.h"

namespace scalws::worker::http2 {
namespace {

using testing::Client;
using testing::frame;
using testing::HpackEncoder;
using testing::preface;
using testing::SessionHarness;
using testing::u32;

TEST(Http2Defence, AHeaderListOverTheLimitGets431) {
  SessionSettings settings;
  settings.max_header_list = 4096;
  SessionHarness server(settings);
  Client client;
  int32_t id = client.get("/", "GET", {{"x-big", std::string(5000, 'h')}});
  client.exchange(server);
  EXPECT_EQ(client.responses[id].status, 431);
  EXPECT_EQ(server.owner.errors, std::vector<uint16_t>{431});
  // The connection goes on.
  int32_t next = client.get("/");
  client.exchange(server);
  EXPECT_EQ(client.responses[next].status, 200);
}

TEST(Http2Defence, AnHpackBombEndsTheConnection) {
  SessionSettings settings;
  settings.max_header_list = 4096;
  SessionHarness server(settings);
  HpackEncoder hpack;
  // One 4000-byte header enters the dynamic table; then each one-byte reference to it
  // decodes to 4 KB more.
  // One 3000-byte header enters the dynamic table (a 431 answers that request); then each
  // one-byte reference to it decodes to 3 KB more.
  std::string value(3000, 'b');
  std::string first = hpack.encode({{":method", "GET"},
                                    {":scheme", "https"},
                                    {":path", "/"},
                                    {":authority", "a"},
                                    {"x-bomb", value}});
  std::string block =
      hpack.encode({{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {":authority", "a"}});
  std::string refs =
      hpack.encode(std::vector<std::pair<std::string, std::string>>(40, {"x-bomb", value}));
  EXPECT_LT(refs.size(), 100u);  // indexed: a byte each
  server.feed(preface());
  server.take();
  server.feed(frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, 1, first));
  auto frames = server.take();
  ASSERT_NE(SessionHarness::find(frames, NGHTTP2_HEADERS), nullptr);  // 431, not a GOAWAY
  server.feed(
      frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, 3, block + refs));
  frames = server.take();
  const testing::Frame* goaway = SessionHarness::find(frames, NGHTTP2_GOAWAY);
  ASSERT_NE(goaway, nullptr);
  EXPECT_EQ(goaway->goawayError(), NGHTTP2_ENHANCE_YOUR_CALM);
  EXPECT_FALSE(server.session.wantsRead());
}

TEST(Http2Defence, AContinuationFloodEndsTheConnection) {
  SessionHarness server;
  HpackEncoder hpack;
  server.feed(preface());
  server.take();
  std::string block =
      hpack.encode({{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {":authority", "a"}});
  std::string bytes = frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_STREAM, 1, block);
  std::string filler = hpack.encode({{"x-f", "v"}}, false);
  for (int i = 0; i < 50; ++i) bytes += frame(NGHTTP2_CONTINUATION, 0, 1, filler);
  server.feed(bytes);
  auto frames = server.take();
  EXPECT_EQ(server.owner.requests, 0);
  EXPECT_FALSE(server.session.wantsRead());
  const testing::Frame* goaway = SessionHarness::find(frames, NGHTTP2_GOAWAY);
  ASSERT_NE(goaway, nullptr);
  EXPECT_NE(goaway->goawayError(), NGHTTP2_NO_ERROR);
}

TEST(Http2Defence, EmptyContinuationsAreAFloodToo) {
  SessionHarness server;
  HpackEncoder hpack;
  server.feed(preface());
  server.take();
  std::string block =
      hpack.encode({{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {":authority", "a"}});
  std::string bytes = frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_STREAM, 1, block);
  for (int i = 0; i < 20; ++i) bytes += frame(NGHTTP2_CONTINUATION, 0, 1, "");
  server.feed(bytes);
  server.take();
  EXPECT_EQ(server.owner.requests, 0);
  EXPECT_FALSE(server.session.wantsRead());
}

TEST(Http2Defence, RapidResetEndsTheConnection) {
  SessionHarness server;
  HpackEncoder hpack;
  server.feed(preface());
  server.take();
  std::string bytes;
  for (int32_t id = 1; id < 2 * 1000; id += 2) {
    bytes += frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, id,
                   hpack.encode(testing::getRequest("/")));
    bytes += frame(NGHTTP2_RST_STREAM, 0, id, u32(NGHTTP2_CANCEL));
  }
  server.owner.respond = [](Stream&) {};  // a slow handler: the resets arrive first
  server.feed(bytes);
  auto frames = server.take();
  const testing::Frame* goaway = SessionHarness::find(frames, NGHTTP2_GOAWAY);
  ASSERT_NE(goaway, nullptr);
  EXPECT_EQ(goaway->goawayError(), NGHTTP2_ENHANCE_YOUR_CALM);
  // Stopped near the burst, long before the thousand.
  EXPECT_LE(server.owner.requests, 260);
  EXPECT_GE(server.owner.requests, 200);
}

TEST(Http2Defence, ResetsWithinTheRateAreFine) {
  SessionHarness server;
  HpackEncoder hpack;
  server.feed(preface());
  server.take();
  server.owner.respond = [](Stream&) {};
  for (int32_t id = 1; id < 2 * 400; id += 2) {
    server.now_ms += 100;  // 10 resets a second
    server.feed(frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, id,
                      hpack.encode(testing::getRequest("/"))) +
                frame(NGHTTP2_RST_STREAM, 0, id, u32(NGHTTP2_CANCEL)));
  }
  EXPECT_EQ(SessionHarness::find(server.take(), NGHTTP2_GOAWAY), nullptr);
  EXPECT_TRUE(server.session.wantsRead());
  EXPECT_EQ(server.owner.requests, 400);
}

TEST(Http2Defence, SettingsAndPingFloodsEndTheConnection) {
  for (uint8_t type : {uint8_t{NGHTTP2_SETTINGS}, uint8_t{NGHTTP2_PING}}) {
    SessionHarness server;
    server.feed(preface());
    server.take();
    std::string bytes;
    for (int i = 0; i < 500; ++i) {
      bytes += type == NGHTTP2_PING ? frame(NGHTTP2_PING, 0, 0, std::string(8, 'p'))
                                    : frame(NGHTTP2_SETTINGS, 0, 0, "");
    }
    server.feed(bytes);
    auto frames = server.take();
    const testing::Frame* goaway = SessionHarness::find(frames, NGHTTP2_GOAWAY);
    ASSERT_NE(goaway, nullptr) << "frame type " << int(type);
    EXPECT_EQ(goaway->goawayError(), NGHTTP2_ENHANCE_YOUR_CALM);
    size_t acks = 0;
    for (const auto& f : frames) acks += f.type == type && (f.flags & NGHTTP2_FLAG_ACK) ? 1 : 0;
    EXPECT_LT(acks, 100u);
  }
}

TEST(Http2Defence, EmptyDataFramesAreAFlood) {
  SessionHarness server;
  HpackEncoder hpack;
  server.feed(preface());
  server.take();
  server.owner.respond = [](Stream&) {};
  std::string bytes = frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 1,
                            hpack.encode(testing::getRequest("/", "POST")));
  for (int i = 0; i < 1000; ++i) bytes += frame(NGHTTP2_DATA, 0, 1, "");
  server.feed(bytes);
  auto frames = server.take();
  const testing::Frame* goaway = SessionHarness::find(frames, NGHTTP2_GOAWAY);
  ASSERT_NE(goaway, nullptr);
  EXPECT_EQ(goaway->goawayError(), NGHTTP2_ENHANCE_YOUR_CALM);
}

TEST(Http2Defence, InvalidFramesGetGoawayWithTheirError) {
  HpackEncoder hpack;
  std::string get = hpack.encode(testing::getRequest("/"));
  const std::pair<std::string, uint32_t> cases[] = {
      {frame(NGHTTP2_DATA, 0, 0, "x"), NGHTTP2_PROTOCOL_ERROR},  // DATA on stream 0
      {frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 2, get),
       NGHTTP2_PROTOCOL_ERROR},                                              // even stream id
      {frame(NGHTTP2_WINDOW_UPDATE, 0, 0, u32(0)), NGHTTP2_PROTOCOL_ERROR},  // zero increment
      {frame(NGHTTP2_SETTINGS, 0, 1, ""), NGHTTP2_PROTOCOL_ERROR},           // SETTINGS on a stream
      {frame(NGHTTP2_CONTINUATION, NGHTTP2_FLAG_END_HEADERS, 1, get),
       NGHTTP2_PROTOCOL_ERROR},                                        // nothing to continue
      {frame(NGHTTP2_PING, 0, 0, "short"), NGHTTP2_FRAME_SIZE_ERROR},  // RFC 9113 §6.7
      {frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 1, "\xff\xff\xff\xff"),
       NGHTTP2_COMPRESSION_ERROR},  // not HPACK
  };
  for (const auto& [bad, code] : cases) {
    SessionHarness server;
    server.feed(preface());
    server.take();
    server.feed(bad);
    auto frames = server.take();
    int type = testing::parseFrames(bad)[0].type;
    const testing::Frame* goaway = SessionHarness::find(frames, NGHTTP2_GOAWAY);
    ASSERT_NE(goaway, nullptr) << type;
    EXPECT_EQ(goaway->goawayError(), code) << type;
    EXPECT_FALSE(server.session.wantsRead());
    EXPECT_EQ(server.owner.requests, 0);
  }
}

TEST(Http2Defence, ABadPrefaceIsRefused) {
  SessionHarness server;
  EXPECT_FALSE(server.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  EXPECT_FALSE(server.session.wantsRead());
}

TEST(Http2Defence, MoreThan128ConcurrentStreamsAreRefused) {
  HpackEncoder hpack;
  std::string bytes;
  for (int32_t id = 1; id <= 2 * 130; id += 2) {
    bytes += frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, id,
                   hpack.encode(testing::getRequest("/")));
  }
  // Before the client acknowledged our SETTINGS the extra streams are refused; after it,
  // going over the limit is a connection error (RFC 9113 §5.1.2, nghttp2's choice).
  for (bool acked : {false, true}) {
    SessionHarness server;
    server.feed(preface() + (acked ? frame(NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, "") : ""));
    server.take();
    server.owner.respond = [](Stream&) {};  // nobody answers: they stay open
    server.feed(bytes);
    auto frames = server.take();
    EXPECT_EQ(server.owner.requests, 128);
    if (acked) {
      const testing::Frame* goaway = SessionHarness::find(frames, NGHTTP2_GOAWAY);
      ASSERT_NE(goaway, nullptr);
      EXPECT_EQ(goaway->goawayError(), NGHTTP2_PROTOCOL_ERROR);
    } else {
      EXPECT_EQ(server.session.activeStreams(), 128u);
      const testing::Frame* rst = SessionHarness::find(frames, NGHTTP2_RST_STREAM);
      ASSERT_NE(rst, nullptr);
      EXPECT_EQ(rst->rstError(), NGHTTP2_REFUSED_STREAM);
    }
  }
}

}  // namespace
}  // namespace scalws::worker::http2
