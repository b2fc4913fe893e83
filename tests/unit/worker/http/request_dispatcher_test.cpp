// The one request path, driven without sockets: a fake protocol adapter (an HttpStream that
// records what it is asked to send) and a real ConfigSnapshot built from TOML.
#include "worker/http/request_dispatcher.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <uv.h>

#include <string>
#include <vector>

#include "common/config/config_loader.h"
#include "tests/unit/worker/http/test_stream.h"
#include "worker/config_snapshot.h"
#include "worker/http/http_stream.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {
namespace {

using test_support::snapshotFor;
using test_support::TestStream;

constexpr std::string_view kDispatchSite = R"(
[server]
max_body = "1k"
[[listen]]
address = "127.0.0.1:1"
[[route]]
match = { exact = "/small" }
respond = { status = 200, body = "small\n" }
policy = { max_body = "10" }
[[route]]
match = { exact = "/private" }
respond = { status = 200, body = "secret\n" }
policy = { allow = ["10.0.0.0/8"] }
[[route]]
match = { prefix = "/r/" }
respond = { status = 201, body = "made\n" }
)";

class RequestDispatcherTest : public ::testing::Test {
 protected:
  std::shared_ptr<const ConfigSnapshot> snap_ = snapshotFor(kDispatchSite);
  TestStream stream_;
};

TEST_F(RequestDispatcherTest, RoutesToTheHandler) {
  stream_.get("/r/x");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 201);
  EXPECT_EQ(stream_.body, "made\n");
  EXPECT_EQ(stream_.finished, 1);
  ASSERT_NE(stream_.handler(), nullptr);
  EXPECT_EQ(stream_.handler()->actionName(), "respond");
  EXPECT_EQ(stream_.bodyLimit(), 1024u);  // no policy: the server's max_body
  EXPECT_TRUE(stream_.responseFinished());
}

TEST_F(RequestDispatcherTest, OptionsAsteriskIsAnsweredWithoutARoute) {
  stream_.get("*", "OPTIONS");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 200);
  EXPECT_EQ(stream_.handler(), nullptr);
  ASSERT_EQ(stream_.headers.size(), 1u);
  EXPECT_EQ(stream_.headers[0].first, "Allow");
}

TEST_F(RequestDispatcherTest, PathThatCannotBeNormalisedIs400AndCloses) {
  stream_.get("/a/../../etc/passwd");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 400);
  EXPECT_TRUE(stream_.close_requested);
  EXPECT_EQ(stream_.handler(), nullptr);
}

TEST_F(RequestDispatcherTest, NormalisedPathIsWhatRoutes) {
  stream_.get("/r/../small");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.request().path, "/small");
  EXPECT_EQ(stream_.body, "small\n");
}

TEST_F(RequestDispatcherTest, NoRouteIs404WithTheServerBodyLimit) {
  stream_.get("/nowhere");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 404);
  EXPECT_FALSE(stream_.close_requested);
  EXPECT_EQ(stream_.bodyLimit(), 1024u);
}

TEST_F(RequestDispatcherTest, DeclaredBodyOverTheRouteLimitIs413BeforeTheHandler) {
  stream_.get("/small", "POST");
  stream_.request().has_body = true;
  stream_.request().content_length = 11;
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 413);
  EXPECT_TRUE(stream_.close_requested);
  EXPECT_EQ(stream_.handler(), nullptr);
  EXPECT_EQ(stream_.bodyLimit(), 10u);
}

TEST_F(RequestDispatcherTest, ChunkedBodyIsLeftToTheBodyLimit) {
  stream_.get("/small", "POST");
  stream_.request().has_body = true;
  stream_.request().chunked = true;
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 200);
  EXPECT_EQ(stream_.bodyLimit(), 10u);
}

TEST_F(RequestDispatcherTest, PeerOutsideAllowIs403) {
  stream_.get("/private");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 403);
  EXPECT_EQ(stream_.body.find("secret"), std::string::npos);
}

TEST_F(RequestDispatcherTest, ExpectContinueIsSettledBeforeTheHandler) {
  stream_.get("/r/x", "POST");
  stream_.request().expect_continue = true;
  RequestDispatcher::dispatch(stream_, *snap_);
  // respond does not read bodies: no interim 100 is asked for.
  ASSERT_EQ(stream_.continues.size(), 1u);
  EXPECT_FALSE(stream_.continues[0]);
  EXPECT_EQ(stream_.status(), 201);
}

TEST_F(RequestDispatcherTest, NoExpectContinueCallWithoutTheHeader) {
  stream_.get("/r/x", "POST");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_TRUE(stream_.continues.empty());
}

TEST_F(RequestDispatcherTest, AccountCountsAndLogs) {
  uv_loop_t uv;
  ASSERT_EQ(uv_loop_init(&uv), 0);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    WorkerLoop loop(&uv, 0, snap_, fds[1]);
    stream_.get("/r/x");
    stream_.request().start_ns = uv_hrtime();
    RequestDispatcher::dispatch(stream_, *snap_);
    RequestDispatcher::account(stream_, loop);
    common::metrics::MetricsSnapshot m = loop.siteMetrics();
    EXPECT_EQ(m.requests(), 1u);
    EXPECT_EQ(m.requests_by_class[1], 1u);
    EXPECT_EQ(m.requests_by_action[static_cast<size_t>(common::metrics::Action::kRespond)], 1u);
    loop.postShutdown();
    loop.run();
  }
  ::close(fds[1]);
  char line[512] = {};
  ssize_t n = ::read(fds[0], line, sizeof(line) - 1);
  ::close(fds[0]);
  ASSERT_GT(n, 0);
  EXPECT_NE(std::string(line).find("\"GET /r/x HTTP/1.1\" 201 5"), std::string::npos) << line;
  EXPECT_EQ(uv_loop_close(&uv), 0);
}

// The life cycle every protocol shares.
class CountingInFlight final : public InFlight {
 public:
  void abort() noexcept override { ++aborts; }
  int aborts = 0;
};

class CountingSink final : public BodySink {
 public:
  void onBodyData(std::string_view data) noexcept override { bytes += data.size(); }
  void onBodyEnd() noexcept override { ++ends; }
  size_t bytes = 0;
  int ends = 0;
};

TEST(HttpStreamTest, DyingAbortsTheHandlerOnce) {
  TestStream s;
  CountingInFlight f;
  s.setInFlight(&f);
  s.die();
  s.die();
  EXPECT_EQ(f.aborts, 1);
  EXPECT_EQ(s.responseState(), HttpStream::ResponseState::kDead);
  ResponseHead head;
  s.sendHead(head);  // a dead stream refuses a late answer
  EXPECT_EQ(s.status(), 0);
}

TEST(HttpStreamTest, FinishingDropsTheInFlightWithoutAbort) {
  TestStream s;
  CountingInFlight f;
  s.setInFlight(&f);
  s.respond(200, {}, "x", BodyLifetime::kCopy);
  s.die();
  EXPECT_EQ(f.aborts, 0);
}

TEST(HttpStreamTest, OneHeadPerResponse) {
  TestStream s;
  ResponseHead head;
  head.status = 200;
  s.sendHead(head);
  head.status = 500;
  s.sendHead(head);
  EXPECT_EQ(s.status(), 200);
  s.finish();
  s.finish();
  EXPECT_EQ(s.finished, 1);
  s.sendBody("late", BodyLifetime::kCopy);
  EXPECT_EQ(s.bodyBytesSent(), 0u);
}

TEST(HttpStreamTest, BodyReachesTheSinkUntilTheResponseFinished) {
  TestStream s;
  CountingSink sink;
  s.request().setBodySink(&sink);
  s.deliverBody("abc");
  ResponseHead head;
  s.sendHead(head);
  s.deliverBody("de");
  s.finish();
  s.deliverBody("dropped");
  s.deliverBodyEnd();
  EXPECT_EQ(sink.bytes, 5u);
  EXPECT_EQ(sink.ends, 0);
}

TEST(HttpStreamTest, RewindLetsAnotherAnswerReplaceOne) {
  TestStream s;
  s.respond(200, {}, "first", BodyLifetime::kCopy);
  s.rewind();
  EXPECT_EQ(s.responseState(), HttpStream::ResponseState::kNone);
  EXPECT_EQ(s.bodyBytesSent(), 0u);
  s.respond(413, {}, "", BodyLifetime::kCopy);
  EXPECT_EQ(s.status(), 413);
}

TEST(HttpStreamTest, ResetStartsTheNextRequest) {
  TestStream s;
  CountingSink sink;
  s.request().setBodySink(&sink);
  s.respond(200, {}, "x", BodyLifetime::kCopy);
  s.reset();
  EXPECT_EQ(s.responseState(), HttpStream::ResponseState::kNone);
  EXPECT_EQ(s.request().bodySink(), nullptr);
  EXPECT_EQ(s.status(), 0);
  EXPECT_EQ(s.bodyLimit(), UINT64_MAX);
}

}  // namespace
}  // namespace scalws::worker
