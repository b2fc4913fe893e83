// The proxy handler on a real loop against FakeUpstream: what the upstream receives byte
// for byte, what the client is answered, kept connections, failover, timeouts, bad
// answers, uploads, back-pressure and a client that goes away.
#include "worker/handlers/proxy/proxy_handler.h"

#include <gtest/gtest.h>

#include "tests/support/fake_upstream.h"
#include "tests/unit/worker/handlers/proxy/proxy_test_kit.h"
#include "worker/handlers/proxy/proxy_exchange.h"
#include "worker/handlers/proxy/upstream_pools.h"
#include "worker/handlers/proxy/upstream_stats.h"

namespace scalws::worker::proxy {
namespace {

using scalws::testing::FakeUpstream;
using testing::LoopFixture;
using testing::proxySnapshot;
using testing::RecordingWriter;
using testing::TestRequest;

constexpr char kOk[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";

class ProxyHandlerTest : public LoopFixture {
 protected:
  std::string servers(std::initializer_list<std::string> addresses, const std::string& extra = "") {
    std::string list;
    for (const std::string& a : addresses) list += (list.empty() ? "\"" : ", \"") + a + "\"";
    return "servers = [" + list + "]\n" + extra;
  }
  // Starts `request` and waits for the upstream to receive it.
  std::optional<FakeUpstream::Received> forward(FakeUpstream& up, TestRequest& r,
                                                RecordingWriter& w) {
    handler().handle(r.request, w);
    if (!runUntil([&] { return up.pendingRequests() > 0 || w.done(); })) return std::nullopt;
    return up.pendingRequests() > 0 ? up.waitForRequest() : std::nullopt;
  }
};

TEST_F(ProxyHandlerTest, ForwardsTheRebuiltHeadAndTheAnswer) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get(), "GET", "/a%20b/c?x=1",
                {{"Host", "shop.example"},
                 {"Connection", "keep-alive, X-Hop"},
                 {"X-Hop", "drop me"},
                 {"Keep-Alive", "timeout=5"},
                 {"TE", "trailers"},
                 {"Proxy-Authorization", "Basic x"},
                 {"X-Forwarded-For", "203.0.113.9"},
                 {"Accept", "*/*"}});
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->raw(),
            "GET /a%20b/c?x=1 HTTP/1.1\r\n"
            "Host: shop.example\r\n"
            "Accept: */*\r\n"
            "X-Forwarded-For: 203.0.113.9, 192.0.2.1\r\n"
            "X-Forwarded-Proto: http\r\n"
            "X-Forwarded-Host: shop.example\r\n"
            "Forwarded: for=192.0.2.1;host=shop.example;proto=http\r\n"
            "\r\n");
  up.respond(got->connection,
             "HTTP/1.1 200 OK\r\nServer: upstream\r\nDate: x\r\nConnection: X-Up\r\nX-Up: 1\r\n"
             "X-Kept: yes\r\nContent-Length: 5\r\n\r\nhello");
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.finished, 1);
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.body, "hello");
  EXPECT_EQ(w.content_length, 5u);
  EXPECT_EQ(w.headers, (std::vector<std::pair<std::string, std::string>>{{"X-Kept", "yes"}}));
}

TEST_F(ProxyHandlerTest, ReusesKeptConnections) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  for (int i = 0; i < 3; ++i) {
    TestRequest r(loop_.get());
    RecordingWriter w;
    auto got = forward(up, r, w);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->connection, 1);
    up.respond(got->connection, kOk);
    ASSERT_TRUE(runUntil([&] { return w.done(); }));
    EXPECT_EQ(w.body, "hello");
  }
  EXPECT_EQ(up.connectionsAccepted(), 1);
  EXPECT_EQ(loop_->counters().upstream_reuses.value(), 2u);
}

// Past `keepalive` the least recently used idle connection of the server that keeps the
// most closes, not the least recently used of all: a server left with none would need a
// new connection the next time the balancer turns to it.
TEST_F(ProxyHandlerTest, PastTheKeepaliveLimitTheServerKeepingMostGivesOneUp) {
  FakeUpstream a;
  FakeUpstream b;
  startLoop(proxySnapshot(servers({a.address(), b.address()}, "keepalive = 2\n")));
  std::vector<std::unique_ptr<TestRequest>> requests;
  std::vector<std::unique_ptr<RecordingWriter>> writers;
  auto answered = [&] {
    size_t n = 0;
    for (const auto& w : writers) n += w->done() ? 1 : 0;
    return n;
  };
  for (int i = 0; i < 3; ++i) {
    requests.push_back(std::make_unique<TestRequest>(loop_.get()));
    writers.push_back(std::make_unique<RecordingWriter>());
    handler().handle(requests.back()->request, *writers.back());
  }
  ASSERT_TRUE(runUntil([&] { return a.pendingRequests() + b.pendingRequests() == 3; }));
  FakeUpstream& twice = a.pendingRequests() == 2 ? a : b;
  FakeUpstream& once = &twice == &a ? b : a;
  ASSERT_EQ(twice.pendingRequests(), 2u);
  // The server with one request answers first, so its connection is the least recently
  // used of the three when the third goes idle.
  for (FakeUpstream* up : {&once, &twice, &twice}) {
    size_t before = answered();
    auto got = up->waitForRequest();
    ASSERT_TRUE(got.has_value());
    up->respond(got->connection, kOk);
    ASSERT_TRUE(runUntil([&] { return answered() == before + 1; }));
  }
  std::vector<UpstreamStats> stats = collectUpstreamStats();
  ASSERT_EQ(stats.size(), 1u);
  ASSERT_EQ(stats[0].servers.size(), 2u);
  EXPECT_EQ(stats[0].servers[0].idle, 1u);
  EXPECT_EQ(stats[0].servers[1].idle, 1u);
  // One more request to each server: both find a kept connection.
  for (int i = 0; i < 2; ++i) {
    TestRequest r(loop_.get());
    RecordingWriter w;
    handler().handle(r.request, w);
    ASSERT_TRUE(runUntil([&] { return a.pendingRequests() + b.pendingRequests() == 1; }));
    FakeUpstream& up = a.pendingRequests() == 1 ? a : b;
    auto got = up.waitForRequest();
    ASSERT_TRUE(got.has_value());
    up.respond(got->connection, kOk);
    ASSERT_TRUE(runUntil([&] { return w.done(); }));
  }
  EXPECT_EQ(once.connectionsAccepted(), 1);
  EXPECT_EQ(twice.connectionsAccepted(), 2);
}

TEST_F(ProxyHandlerTest, StatsCountPerServer) {
  FakeUpstream up;
  FakeUpstream gone;
  std::string gone_address = gone.address();
  gone.stopListening();
  startLoop(proxySnapshot(servers({up.address(), gone_address}, "max_fails = 1\n")));
  for (int i = 0; i < 3; ++i) {
    TestRequest r(loop_.get());
    RecordingWriter w;
    auto got = forward(up, r, w);
    ASSERT_TRUE(got.has_value());
    up.respond(got->connection, i == 0 ? "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n" : kOk);
    ASSERT_TRUE(runUntil([&] { return w.done(); }));
  }
  std::vector<UpstreamStats> stats = collectUpstreamStats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name, "app");
  ASSERT_EQ(stats[0].servers.size(), 2u);
  const UpstreamServerStats& live = stats[0].servers[0];
  EXPECT_EQ(live.address, up.address());
  EXPECT_EQ(live.loops, 1u);
  EXPECT_EQ(live.loops_down, 0u);
  EXPECT_EQ(live.requests, 3u);
  EXPECT_EQ(live.responses_5xx, 1u);
  EXPECT_EQ(live.active, 0u);
  EXPECT_EQ(live.idle, 1u);
  uint64_t counted = 0;
  for (uint64_t n : live.latency) counted += n;
  EXPECT_EQ(counted, 3u);
  const UpstreamServerStats& dead = stats[0].servers[1];
  EXPECT_EQ(dead.loops_down, 1u);  // one refused connect marks it down (max_fails = 1)
  EXPECT_EQ(dead.connect_failures, 1u);
  EXPECT_GT(dead.down_since_unix_ms, 0);
  EXPECT_EQ(dead.requests, 0u);
}

TEST_F(ProxyHandlerTest, ConnectionCloseIsNotReused) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  for (int i = 0; i < 2; ++i) {
    TestRequest r(loop_.get());
    RecordingWriter w;
    auto got = forward(up, r, w);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->connection, i + 1);
    up.respond(got->connection,
               "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
    ASSERT_TRUE(runUntil([&] { return w.done(); }));
    EXPECT_EQ(w.body, "ok");
  }
}

TEST_F(ProxyHandlerTest, ChunkedAnswerInOneReadGetsALength) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  up.respond(
      got->connection,
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n");
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.body, "abcdefg");
  EXPECT_EQ(w.content_length, 7u);
  EXPECT_EQ(w.finished, 1);
}

TEST_F(ProxyHandlerTest, StreamsAnAnswerInPieces) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  up.respond(got->connection, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
  ASSERT_TRUE(runUntil([&] { return w.body == "abc"; }));
  EXPECT_FALSE(w.content_length.has_value());
  EXPECT_EQ(w.finished, 0);
  up.respond(got->connection, "2\r\nde\r\n0\r\n\r\n");
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.body, "abcde");
  EXPECT_EQ(w.finished, 1);
}

TEST_F(ProxyHandlerTest, BadFramingIs502AndTheConnectionIsDropped) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()}, "max_fails = 0\n")));
  const char* bad[] = {
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 0\r\n\r\n",
      "HTTP/1.1 204 No Content\r\n\r\nbody",
  };
  int connection = 0;
  for (const char* answer : bad) {
    SCOPED_TRACE(answer);
    TestRequest r(loop_.get());
    RecordingWriter w;
    auto got = forward(up, r, w);
    ASSERT_TRUE(got.has_value());
    EXPECT_GT(got->connection, connection);  // never the connection of a bad answer
    connection = got->connection;
    up.respond(got->connection, answer);
    ASSERT_TRUE(runUntil([&] { return w.done(); }));
    EXPECT_EQ(w.status, 502);
    EXPECT_EQ(w.finished, 1);
  }
}

TEST_F(ProxyHandlerTest, BodyOnHeadAnswerIs502) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get(), "HEAD", "/");
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  up.respond(got->connection, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.status, 502);
  // Without the stray body a HEAD answer keeps the GET's length.
  TestRequest r2(loop_.get(), "HEAD", "/");
  RecordingWriter w2;
  auto got2 = forward(up, r2, w2);
  ASSERT_TRUE(got2.has_value());
  up.respond(got2->connection, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  ASSERT_TRUE(runUntil([&] { return w2.done(); }));
  EXPECT_EQ(w2.status, 200);
  EXPECT_EQ(w2.content_length, 5u);
}

TEST_F(ProxyHandlerTest, FailsOverWhenAServerRefuses) {
  FakeUpstream down;
  std::string down_address = down.address();
  down.stopListening();
  FakeUpstream up;
  startLoop(proxySnapshot(servers({down_address, up.address()}, "retries = 1\n")));
  for (int i = 0; i < 4; ++i) {
    TestRequest r(loop_.get());
    RecordingWriter w;
    auto got = forward(up, r, w);
    ASSERT_TRUE(got.has_value()) << i;
    up.respond(got->connection, kOk);
    ASSERT_TRUE(runUntil([&] { return w.done(); }));
    EXPECT_EQ(w.status, 200);
  }
}

TEST_F(ProxyHandlerTest, NoServerReachableIs502AllDownIs503) {
  FakeUpstream gone;
  std::string address = gone.address();
  gone.stopListening();
  startLoop(proxySnapshot(servers({address}, "max_fails = 2\nfail_timeout = \"60s\"\n")));
  // The second failure marks the only server down: from then on 503 at once.
  for (uint16_t expected : {502, 502, 503}) {
    TestRequest r(loop_.get());
    RecordingWriter w;
    handler().handle(r.request, w);
    ASSERT_TRUE(runUntil([&] { return w.done(); }));
    EXPECT_EQ(w.status, expected);
    if (expected == 503) {
      EXPECT_EQ(w.header("Retry-After"), "1");
    }
  }
}

TEST_F(ProxyHandlerTest, ReadTimeoutIs504) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()}, "read_timeout = \"200ms\"\nretries = 0\n")));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.status, 504);
  // The upstream sees its connection closed: a late answer cannot land on the next request.
  EXPECT_TRUE(runUntil([&] { return up.connectionsClosedByPeer() == 1; }));
}

TEST_F(ProxyHandlerTest, RouteTimeoutOverridesTheUpstreams) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()}, "retries = 0\n"), ", timeout = \"150ms\""));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(forward(up, r, w).has_value());
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.status, 504);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(ProxyHandlerTest, StaleKeptConnectionIsRetriedOnAFreshOne) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()}, "retries = 0\n")));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  up.respond(got->connection, kOk);
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  // The upstream drops the kept connection; the request right after must not fail.
  up.closeConnection(got->connection);
  TestRequest r2(loop_.get());
  RecordingWriter w2;
  auto got2 = forward(up, r2, w2);
  ASSERT_TRUE(got2.has_value());
  EXPECT_EQ(got2->connection, 2);
  up.respond(got2->connection, kOk);
  ASSERT_TRUE(runUntil([&] { return w2.done(); }));
  EXPECT_EQ(w2.status, 200);
}

TEST_F(ProxyHandlerTest, UploadsAreReframed) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  // A chunked upload goes on chunked, re-made from the data pieces.
  TestRequest r(loop_.get(), "POST", "/upload", {{"Transfer-Encoding", "chunked"}});
  r.withBody(0, true);
  RecordingWriter w;
  handler().handle(r.request, w);
  ASSERT_NE(r.request.bodySink(), nullptr);
  EXPECT_TRUE(w.body_paused);  // until the connection is ready
  ASSERT_TRUE(runUntil([&] { return !w.body_paused; }));
  r.request.bodySink()->onBodyData("hello ");
  r.request.bodySink()->onBodyData("world");
  r.request.bodySink()->onBodyEnd();
  ASSERT_TRUE(runUntil([&] { return up.pendingRequests() > 0; }));
  auto got = up.waitForRequest();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->header("Transfer-Encoding"), "chunked");
  EXPECT_FALSE(got->header("Content-Length").has_value());
  EXPECT_EQ(got->body, "6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n");
  up.respond(got->connection, kOk);
  ASSERT_TRUE(runUntil([&] { return w.done(); }));

  // A Content-Length upload keeps its length and is sent as it came.
  TestRequest r2(loop_.get(), "PUT", "/put", {{"Content-Length", "4"}});
  r2.withBody(4);
  RecordingWriter w2;
  handler().handle(r2.request, w2);
  r2.request.bodySink()->onBodyData("da");
  r2.request.bodySink()->onBodyData("ta");
  r2.request.bodySink()->onBodyEnd();
  ASSERT_TRUE(runUntil([&] { return up.pendingRequests() > 0; }));
  auto got2 = up.waitForRequest();
  ASSERT_TRUE(got2.has_value());
  EXPECT_EQ(got2->header("Content-Length"), "4");
  EXPECT_FALSE(got2->header("Transfer-Encoding").has_value());
  EXPECT_EQ(got2->body, "data");
  up.respond(got2->connection, kOk);
  ASSERT_TRUE(runUntil([&] { return w2.done(); }));
  EXPECT_EQ(w2.status, 200);
}

TEST_F(ProxyHandlerTest, PostWithoutBodySendsLengthZero) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get(), "POST", "/");
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->header("Content-Length"), "0");
  up.respond(got->connection, kOk);
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
}

TEST_F(ProxyHandlerTest, PostIsNotRetriedOnceSent) {
  FakeUpstream first;
  FakeUpstream second;
  startLoop(proxySnapshot(servers({first.address(), second.address()}, "retries = 1\n")));
  // Round robin sends the first request to `first`.
  TestRequest r(loop_.get(), "POST", "/order", {{"Content-Length", "2"}});
  r.withBody(2);
  RecordingWriter w;
  handler().handle(r.request, w);
  ASSERT_TRUE(runUntil([&] { return !w.body_paused; }));
  r.request.bodySink()->onBodyData("{}");
  r.request.bodySink()->onBodyEnd();
  ASSERT_TRUE(runUntil([&] { return first.pendingRequests() > 0; }));
  auto got = first.waitForRequest();
  first.closeConnection(got->connection);  // fails after the request was sent
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.status, 502);
  EXPECT_EQ(second.connectionsAccepted(), 0);

  // The same failure on a GET goes to the other server.
  TestRequest g(loop_.get());
  RecordingWriter gw;
  handler().handle(g.request, gw);
  ASSERT_TRUE(runUntil([&] { return first.pendingRequests() + second.pendingRequests() > 0; }));
  FakeUpstream& hit = first.pendingRequests() > 0 ? first : second;
  FakeUpstream& other = &hit == &first ? second : first;
  auto got_get = hit.waitForRequest();
  hit.closeConnection(got_get->connection);
  ASSERT_TRUE(runUntil([&] { return other.pendingRequests() > 0; }));
  auto retried = other.waitForRequest();
  other.respond(retried->connection, kOk);
  ASSERT_TRUE(runUntil([&] { return gw.done(); }));
  EXPECT_EQ(gw.status, 200);
}

TEST_F(ProxyHandlerTest, SlowClientStopsTheUpstreamReads) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  w.queued = ProxyExchange::kClientHighWater + 1;  // the client reads nothing
  up.respond(got->connection, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
  ASSERT_TRUE(runUntil([&] { return w.observer != nullptr; }));
  up.respond(got->connection, "defghij");
  runFor(std::chrono::milliseconds(100));
  EXPECT_EQ(w.body, "abc");  // nothing more read while the client is behind
  w.queued = 0;
  WritableObserver* o = w.observer;
  w.observer = nullptr;
  o->onWritable();
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.body, "abcdefghij");
}

TEST_F(ProxyHandlerTest, ClientGoneClosesTheUpstreamConnection) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  ASSERT_NE(w.in_flight, nullptr);
  w.in_flight->abort();
  ASSERT_TRUE(runUntil([&] { return up.connectionsClosedByPeer() == 1; }));
  EXPECT_FALSE(w.done());
  // The exchange is free again: the next request works (on a new connection).
  TestRequest r2(loop_.get());
  RecordingWriter w2;
  auto got2 = forward(up, r2, w2);
  ASSERT_TRUE(got2.has_value());
  EXPECT_EQ(got2->connection, 2);
  up.respond(got2->connection, kOk);
  ASSERT_TRUE(runUntil([&] { return w2.done(); }));
}

TEST_F(ProxyHandlerTest, UpstreamCutMidBodyAbortsTheResponse) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()})));
  TestRequest r(loop_.get());
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  up.respond(got->connection, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
  ASSERT_TRUE(runUntil([&] { return w.heads == 1; }));
  up.closeConnection(got->connection);
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.aborted, 1);
  EXPECT_EQ(w.finished, 0);
  EXPECT_EQ(w.body, "partial");
}

TEST_F(ProxyHandlerTest, SetAndRemoveHeadersAndStripPrefix) {
  FakeUpstream up;
  startLoop(proxySnapshot(servers({up.address()}),
                          ", strip_prefix = \"/api\", host = \"upstream\", via = true, "
                          "set_request_headers = { \"x-site\" = \"shop\" }, "
                          "set_response_headers = { \"x-frame-options\" = \"DENY\" }, "
                          "remove_response_headers = [\"x-powered-by\"]"));
  TestRequest r(loop_.get(), "GET", "/api/items?id=2", {{"X-Site", "forged"}});
  RecordingWriter w;
  auto got = forward(up, r, w);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->requestLine(), "GET /items?id=2 HTTP/1.1");
  EXPECT_EQ(got->header("Host"), up.address());
  EXPECT_EQ(got->header("x-site"), "shop");
  EXPECT_EQ(got->header("Via"), "1.1 scalws");
  up.respond(got->connection,
             "HTTP/1.1 200 OK\r\nX-Powered-By: php\r\nX-Frame-Options: SAMEORIGIN\r\n"
             "Content-Length: 0\r\n\r\n");
  ASSERT_TRUE(runUntil([&] { return w.done(); }));
  EXPECT_EQ(w.headers, (std::vector<std::pair<std::string, std::string>>{
                           {"x-frame-options", "DENY"}, {"Via", "1.1 scalws"}}));
}

}  // namespace
}  // namespace scalws::worker::proxy
