// WebSocket upgrades through the proxy on a real loop against FakeUpstream: the handshake
// the upstream gets (HTTP/1.1 and HTTP/2's extended CONNECT), bytes both ways after the
// 101, and how either side ending ends the tunnel.
#include "worker/handlers/proxy/tunnel.h"

#include <gtest/gtest.h>

#include "tests/support/fake_upstream.h"
#include "tests/unit/worker/handlers/proxy/proxy_test_kit.h"

namespace scalws::worker::proxy {
namespace {

using scalws::testing::FakeUpstream;
using testing::LoopFixture;
using testing::proxySnapshot;
using testing::RecordingWriter;
using testing::TestRequest;

constexpr char kSwitch[] =
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";

class TunnelTest : public LoopFixture {
 protected:
  // `timeout`: the route's, the tunnel's idle timeout.
  void begin(const char* timeout = "5s") {
    startLoop(proxySnapshot("servers = [\"" + up_.address() + "\"]\n",
                            std::string(", timeout = \"") + timeout + "\""));
  }
  FakeUpstream up_;
};

TEST_F(TunnelTest, Http1UpgradeCarriesBytesBothWays) {
  begin();
  TestRequest r(loop_.get(), "GET", "/chat",
                {{"Upgrade", "websocket"},
                 {"Connection", "Upgrade"},
                 {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                 {"Sec-WebSocket-Version", "13"}});
  r.request.upgrade = "websocket";
  RecordingWriter w;
  handler().handle(r.request, w);
  ASSERT_TRUE(runUntil([&] { return up_.pendingRequests() > 0; }));
  auto got = up_.waitForRequest();
  EXPECT_EQ(got->requestLine(), "GET /chat HTTP/1.1");
  EXPECT_EQ(got->header("Upgrade"), "websocket");
  EXPECT_EQ(got->header("Connection"), "upgrade");
  EXPECT_EQ(got->header("Sec-WebSocket-Key"), "dGhlIHNhbXBsZSBub25jZQ==");
  up_.respond(got->connection, std::string(kSwitch) + "\x81\x02hi");
  ASSERT_TRUE(runUntil([&] { return w.body == "\x81\x02hi"; }));
  EXPECT_EQ(w.status, 101);
  EXPECT_TRUE(w.header("Upgrade").has_value());
  EXPECT_TRUE(w.header("Sec-WebSocket-Accept").has_value());
  // Client bytes go up unframed.
  ASSERT_NE(r.request.bodySink(), nullptr);
  r.request.bodySink()->onBodyData("\x81\x85masked");
  ASSERT_TRUE(runUntil([&] { return up_.unparsed(got->connection) == "\x81\x85masked"; }));
  up_.respond(got->connection, "more");
  ASSERT_TRUE(runUntil([&] { return w.body == "\x81\x02himore"; }));
  // The client stops sending: the upstream sees its end; when it closes, the client's
  // side finishes.
  r.request.bodySink()->onBodyEnd();
  ASSERT_TRUE(runUntil([&] { return up_.peerClosed(got->connection); }));
  EXPECT_EQ(w.finished, 0);
  up_.closeConnection(got->connection);
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.finished, 1);
}

TEST_F(TunnelTest, UpstreamEndFinishesTheClientSide) {
  begin();
  TestRequest r(loop_.get(), "GET", "/", {{"Upgrade", "websocket"}, {"Connection", "upgrade"}});
  r.request.upgrade = "websocket";
  RecordingWriter w;
  handler().handle(r.request, w);
  ASSERT_TRUE(runUntil([&] { return up_.pendingRequests() > 0; }));
  auto got = up_.waitForRequest();
  up_.respond(got->connection, kSwitch);
  ASSERT_TRUE(runUntil([&] { return w.heads == 1; }));
  up_.closeConnection(got->connection);
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.finished, 1);
  EXPECT_EQ(w.aborted, 0);
}

TEST_F(TunnelTest, ExtendedConnectBecomesAnHttp1Upgrade) {
  begin();
  TestRequest r(loop_.get(), "CONNECT", "/ws?x=1", {{"sec-websocket-version", "13"}});
  r.request.version = HttpVersion::kHttp2;
  r.request.upgrade = "websocket";
  r.request.has_body = true;  // an HTTP/2 stream stays open for the tunnel
  RecordingWriter w;
  handler().handle(r.request, w);
  ASSERT_TRUE(runUntil([&] { return up_.pendingRequests() > 0; }));
  auto got = up_.waitForRequest();
  EXPECT_EQ(got->requestLine(), "GET /ws?x=1 HTTP/1.1");
  EXPECT_EQ(got->header("Upgrade"), "websocket");
  ASSERT_TRUE(got->header("Sec-WebSocket-Key").has_value());
  EXPECT_EQ(got->header("Sec-WebSocket-Key")->size(), 24u);
  EXPECT_FALSE(got->header("Transfer-Encoding").has_value());  // no body framing
  EXPECT_FALSE(got->header("Content-Length").has_value());
  // Bytes the client sent early wait for the switch.
  r.request.bodySink()->onBodyData("early");
  up_.respond(got->connection, kSwitch);
  ASSERT_TRUE(runUntil([&] { return w.heads == 1; }));
  EXPECT_EQ(w.status, 101);  // the HTTP/2 writer answers it as 200
  EXPECT_FALSE(w.header("Sec-WebSocket-Accept").has_value());
  ASSERT_TRUE(runUntil([&] { return up_.unparsed(got->connection) == "early"; }));
  ASSERT_NE(w.in_flight, nullptr);
  w.in_flight->abort();  // the client resets the stream
  ASSERT_TRUE(runUntil([&] { return up_.peerClosed(got->connection); }));
}

TEST_F(TunnelTest, UpgradeRefusedByTheUpstreamIsAnOrdinaryAnswer) {
  begin();
  TestRequest r(loop_.get(), "GET", "/", {{"Upgrade", "websocket"}, {"Connection", "upgrade"}});
  r.request.upgrade = "websocket";
  RecordingWriter w;
  handler().handle(r.request, w);
  ASSERT_TRUE(runUntil([&] { return up_.pendingRequests() > 0; }));
  auto got = up_.waitForRequest();
  up_.respond(got->connection, "HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno");
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.status, 403);
  EXPECT_EQ(w.body, "no");
}

TEST_F(TunnelTest, IdleTunnelCloses) {
  begin("200ms");
  TestRequest r(loop_.get(), "GET", "/", {{"Upgrade", "websocket"}, {"Connection", "upgrade"}});
  r.request.upgrade = "websocket";
  RecordingWriter w;
  handler().handle(r.request, w);
  ASSERT_TRUE(runUntil([&] { return up_.pendingRequests() > 0; }));
  auto got = up_.waitForRequest();
  up_.respond(got->connection, kSwitch);
  ASSERT_TRUE(runUntil([&] { return w.done(); }, std::chrono::milliseconds(3000)));
  EXPECT_EQ(w.aborted, 1);
  ASSERT_TRUE(runUntil([&] { return up_.peerClosed(got->connection); }));
}

}  // namespace
}  // namespace scalws::worker::proxy
