// The session against frames that break RFC 9113's stream-state rules (§5.1, §5.1.1,
// §5.3.1, §6.3): each case an outside conformance suite (h2spec) checks, from raw frames,
// through nghttp2 and the FrameChecker together.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/worker/http2/h2_test_peer.h"
#include "worker/http2/session.h"

namespace scalws::worker::http2 {
namespace {

using testing::frame;
using testing::HpackEncoder;
using testing::preface;
using testing::SessionHarness;
using testing::u32;

using testing::kEndHeaders;
using testing::kEndStream;

// A session past the preface (our SETTINGS acknowledged), with an HPACK encoder for
// request heads.
class Peer {
 public:
  Peer() {
    server.feed(preface() + frame(NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, ""));
    server.take();
  }
  std::string headers(int32_t id, uint8_t flags = kEndHeaders | kEndStream) {
    return frame(NGHTTP2_HEADERS, flags, id, hpack.encode(testing::getRequest("/")));
  }
  static std::string data(int32_t id, uint8_t flags = 0) {
    return frame(NGHTTP2_DATA, flags, id, "body");
  }
  static std::string rst(int32_t id) { return frame(NGHTTP2_RST_STREAM, 0, id, u32(8)); }
  static std::string priority(int32_t id, int32_t depends_on) {
    return frame(NGHTTP2_PRIORITY, 0, id, u32(static_cast<uint32_t>(depends_on)) + "\x10");
  }
  static std::string windowUpdate(int32_t id) {
    return frame(NGHTTP2_WINDOW_UPDATE, 0, id, u32(1000));
  }
  // Feeds `bytes`; the frames the server answered.
  std::vector<testing::Frame> send(const std::string& bytes) {
    server.feed(bytes);
    return server.take();
  }
  static uint32_t goaway(const std::vector<testing::Frame>& frames) {
    const testing::Frame* f = SessionHarness::find(frames, NGHTTP2_GOAWAY);
    return f == nullptr ? 0xffffffff : f->goawayError();
  }
  static uint32_t rstOn(const std::vector<testing::Frame>& frames, int32_t id) {
    for (const testing::Frame& f : frames) {
      if (f.type == NGHTTP2_RST_STREAM && f.stream == id) return f.rstError();
    }
    return 0xffffffff;
  }
  static int responses(const std::vector<testing::Frame>& frames) {
    int n = 0;
    for (const testing::Frame& f : frames) n += f.type == NGHTTP2_HEADERS ? 1 : 0;
    return n;
  }

  SessionHarness server;
  HpackEncoder hpack;
};

constexpr uint32_t kNone = 0xffffffff;

TEST(Http2StreamStates, WindowUpdateAndPriorityOnAHalfClosedStreamAreAccepted) {
  Peer peer;
  Stream* held = nullptr;
  peer.server.owner.respond = [&](Stream& s) { held = &s; };  // answered below
  auto frames = peer.send(peer.headers(1) + Peer::windowUpdate(1) + Peer::priority(1, 0));
  EXPECT_EQ(Peer::goaway(frames), kNone);
  EXPECT_EQ(Peer::rstOn(frames, 1), kNone);
  ASSERT_NE(held, nullptr);
  held->respond(200, {}, "late", BodyLifetime::kStable);
  frames = peer.server.take();
  EXPECT_EQ(Peer::responses(frames), 1);
  EXPECT_EQ(Peer::goaway(frames), kNone);
}

TEST(Http2StreamStates, DataOnAHalfClosedStreamIsStreamClosed) {
  Peer peer;
  peer.server.owner.respond = [](Stream&) {};  // the stream stays half-closed (remote)
  auto frames = peer.send(peer.headers(1) + Peer::data(1));
  bool closed = Peer::goaway(frames) == NGHTTP2_STREAM_CLOSED ||
                Peer::rstOn(frames, 1) == NGHTTP2_STREAM_CLOSED;
  EXPECT_TRUE(closed);
}

TEST(Http2StreamStates, DataAndHeadersAfterTheClientsResetAreStreamClosed) {
  for (bool with_headers : {false, true}) {
    Peer peer;
    std::string open = peer.headers(1, kEndHeaders);  // encoded first: HPACK state is ordered
    std::string after = with_headers ? peer.headers(1) : Peer::data(1);
    auto frames = peer.send(open + Peer::rst(1) + after);
    EXPECT_EQ(Peer::rstOn(frames, 1), NGHTTP2_STREAM_CLOSED) << with_headers;
    // A stream error: the connection goes on.
    frames = peer.send(peer.headers(3));
    EXPECT_EQ(Peer::responses(frames), 1) << with_headers;
    EXPECT_EQ(Peer::goaway(frames), kNone) << with_headers;
  }
}

TEST(Http2StreamStates, DataAndHeadersOnAClosedStreamAreStreamClosed) {
  for (bool with_headers : {false, true}) {
    Peer peer;
    auto frames = peer.send(peer.headers(1));
    ASSERT_EQ(Peer::responses(frames), 1);  // answered and closed
    frames = peer.send(with_headers ? peer.headers(1) : Peer::data(1));
    // RFC 9113 §5.1: frames after END_STREAM are a connection error STREAM_CLOSED.
    EXPECT_EQ(Peer::goaway(frames), NGHTTP2_STREAM_CLOSED) << with_headers;
    EXPECT_FALSE(peer.server.session.wantsRead());
  }
}

TEST(Http2StreamStates, AStreamIdGoingBackIsAProtocolError) {
  Peer peer;
  auto frames = peer.send(peer.headers(5));
  ASSERT_EQ(Peer::responses(frames), 1);
  frames = peer.send(peer.headers(3));
  EXPECT_EQ(Peer::goaway(frames), NGHTTP2_PROTOCOL_ERROR);
  EXPECT_EQ(peer.server.owner.requests, 1);
}

TEST(Http2StreamStates, DataOnAnImplicitlyClosedStreamIsStreamClosed) {
  Peer peer;
  auto frames = peer.send(peer.headers(5) + Peer::data(3));
  EXPECT_EQ(Peer::rstOn(frames, 3), NGHTTP2_STREAM_CLOSED);
  EXPECT_EQ(Peer::goaway(frames), kNone);
}

TEST(Http2StreamStates, PriorityOnStreamZeroOrOnItselfIsAProtocolError) {
  for (int32_t id : {0, 1, 7}) {  // stream 0; an idle stream; an open one depending on itself
    Peer peer;
    peer.server.owner.respond = [](Stream&) {};
    std::string before = id == 7 ? peer.headers(7, kEndHeaders) : "";
    auto frames = peer.send(before + Peer::priority(id, id == 0 ? 1 : id));
    EXPECT_EQ(Peer::goaway(frames), NGHTTP2_PROTOCOL_ERROR) << id;
    EXPECT_FALSE(peer.server.session.wantsRead()) << id;
  }
}

TEST(Http2StreamStates, FramesInFlightAfterOurResetAreIgnored) {
  Peer peer;
  // An upper-case field name: nghttp2 resets the stream (PROTOCOL_ERROR) before the client
  // could know, and the client's DATA and trailers are already on the way.
  std::string bad = frame(NGHTTP2_HEADERS, kEndHeaders, 1,
                          peer.hpack.encode({{":method", "POST"},
                                             {":scheme", "https"},
                                             {":authority", "a"},
                                             {":path", "/"},
                                             {"X-Upper", "1"}}));
  auto frames = peer.send(bad);
  EXPECT_EQ(Peer::rstOn(frames, 1), NGHTTP2_PROTOCOL_ERROR);
  std::string trailers =
      frame(NGHTTP2_HEADERS, kEndHeaders | kEndStream, 1, peer.hpack.encode({{"x-trailer", "1"}}));
  frames = peer.send(Peer::data(1) + trailers + peer.headers(3));
  EXPECT_EQ(Peer::goaway(frames), kNone);
  EXPECT_EQ(Peer::rstOn(frames, 1), kNone);
  EXPECT_EQ(Peer::responses(frames), 1);
}

TEST(Http2StreamStates, ALongUploadOutlivesTheCheckersMemory) {
  Peer peer;
  Stream* upload = nullptr;
  std::string body;
  peer.server.owner.respond = [&](Stream& s) {
    if (s.id() == 1) {
      upload = &s;  // answers once its body is in (below)
    } else {
      s.respond(200, {}, "ok", BodyLifetime::kStable);
    }
  };
  peer.send(peer.headers(1, kEndHeaders) + Peer::data(1));
  // Thousands of short streams go by while the upload's body is still coming.
  for (int32_t id = 3; id < 5000; id += 200) {
    std::string batch;
    for (int32_t i = id; i < id + 200 && i < 5000; i += 2) batch += peer.headers(i);
    auto frames = peer.send(batch);
    ASSERT_EQ(Peer::goaway(frames), kNone) << id;
  }
  auto frames = peer.send(Peer::data(1) + Peer::data(1, kEndStream));
  EXPECT_EQ(Peer::rstOn(frames, 1), kNone);
  EXPECT_EQ(Peer::goaway(frames), kNone);
  ASSERT_NE(upload, nullptr);
  upload->respond(200, {}, "stored", BodyLifetime::kStable);
  frames = peer.server.take();
  EXPECT_EQ(Peer::responses(frames), 1);
}

}  // namespace
}  // namespace scalws::worker::http2
