// The dispatcher's steps around routing: [real_ip] before everything, rewrites that route
// again, the redirect action, and a route's Basic auth (at once without credentials, on the
// thread pool with them, from the loop's memory after).
#include <gtest/gtest.h>
#include <unistd.h>
#include <uv.h>

#include <cstdio>
#include <string>

#include "tests/unit/worker/http/test_stream.h"
#include "worker/http/request_dispatcher.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {
namespace {

using test_support::snapshotFor;
using test_support::TestStream;

constexpr std::string_view kRewriteSite = R"(
[[listen]]
address = "127.0.0.1:1"
[[route]]
match = { regex = "^/blog/(\\d+)$" }
rewrite = "/show?p=$1"
[[route]]
match = { regex = "^/keep/(.*)$" }
rewrite = "/show/$1"
[[route]]
match = { exact = "/drop" }
rewrite = "/show?only=1?"
[[route]]
match = { exact = "/bare" }
rewrite = "/show?"
[[route]]
match = { exact = "/placed" }
rewrite = "/show?{query}&x=1"
[[route]]
match = { prefix = "/loop" }
rewrite = "/loop/again"
[[route]]
match = { prefix = "/show" }
respond = { status = 200, body = "shown\n" }
[[route]]
match = { regex = "^/old/(.*)$" }
redirect = { to = "https://{host}/new/$1?from={path}", status = 301 }
[[route]]
match = { prefix = "/moved" }
redirect = { to = "{uri}x" }
[[route]]
match = { prefix = "/inside" }
respond = { status = 200, body = "inside\n" }
policy = { allow = ["203.0.113.0/24"] }
[real_ip]
from = ["192.0.2.0/24", "10.0.0.0/8"]
)";

class RewriteTest : public ::testing::Test {
 protected:
  void target(std::string_view path, std::string_view query = {}) {
    stream_.get(path);
    stream_.request().query = query;
    if (!query.empty()) {
      target_ = std::string(path) + "?" + std::string(query);
      stream_.request().target = target_;
    }
  }
  void header(std::string_view name, std::string_view value) {
    headers_.push_back({name, value});
    stream_.request().headers = headers_;
  }

  std::shared_ptr<const ConfigSnapshot> snap_ = snapshotFor(kRewriteSite);
  TestStream stream_;
  std::string target_;
  std::vector<HeaderField> headers_;
};

TEST_F(RewriteTest, ARewriteRoutesAgainWithTheNewPathAndQuery) {
  target("/blog/42");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 200);
  EXPECT_EQ(stream_.body, "shown\n");
  const Request& r = stream_.request();
  EXPECT_EQ(r.path, "/show");
  EXPECT_EQ(r.raw_path, "/show");
  EXPECT_EQ(r.query, "p=42");
  EXPECT_EQ(r.target, "/blog/42");  // what the client sent stays
  EXPECT_EQ(r.originalUri(), "/blog/42");
}

TEST_F(RewriteTest, TheOldQueryFollowsNginxsRule) {
  target("/blog/7", "a=1");  // a "?" in the template: appended after "&"
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.request().query, "p=7&a=1");
  stream_.reset();
  stream_.request().resetForReuse();
  target("/keep/x%20y", "a=1");  // no "?": kept as it was
  stream_.request().path = {};
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.request().path, "/show/x y");
  EXPECT_EQ(stream_.request().raw_path, "/show/x%20y");
  EXPECT_EQ(stream_.request().query, "a=1");
  stream_.reset();
  stream_.request().resetForReuse();
  target("/drop", "a=1");  // ends in "?": dropped
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.request().query, "only=1");
  stream_.reset();
  stream_.request().resetForReuse();
  target("/bare", "a=1");  // only a "?": no query at all
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 200);
  EXPECT_EQ(stream_.request().path, "/show");
  EXPECT_EQ(stream_.request().query, "");
  stream_.reset();
  stream_.request().resetForReuse();
  target("/placed", "a=1");  // {query}: where the template put it, once
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.request().query, "a=1&x=1");
}

TEST_F(RewriteTest, ALoopEndsIn500) {
  target("/loop");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 500);
  EXPECT_EQ(stream_.handler(), nullptr);
}

TEST_F(RewriteTest, AnAbsoluteFormTargetIsKeptInOriginForm) {
  stream_.get("/blog/5");
  stream_.request().target = "http://example.com/blog/5?z=9";
  stream_.request().query = "z=9";
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.request().target, "/blog/5?z=9");
  EXPECT_EQ(stream_.request().query, "p=5&z=9");
}

TEST_F(RewriteTest, RedirectsExpandTheirTemplate) {
  target("/old/a%20b", "q=1");
  stream_.request().host = "example.com";
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 301);
  EXPECT_EQ(stream_.header("Location"), "https://example.com/new/a%20b?from=/old/a%20b");
  EXPECT_NE(stream_.body.find("301 Moved Permanently"), std::string::npos);
  EXPECT_EQ(stream_.handler()->actionName(), "redirect");
  stream_.reset();
  stream_.request().resetForReuse();
  stream_.headers.clear();
  target("/moved/", "k=v");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 302);
  EXPECT_EQ(stream_.header("Location"), "/moved/?k=vx");
}

TEST_F(RewriteTest, RealIpFromATrustedPeersHeader) {
  // The peer is 192.0.2.7 (trusted): the rightmost untrusted address is the client.
  target("/inside");
  header("X-Forwarded-For", "198.51.100.1, 203.0.113.9");
  header("x-forwarded-for", "10.1.2.3");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 200);
  const auto* sin = reinterpret_cast<const sockaddr_in*>(&stream_.request().peer->address);
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
  EXPECT_STREQ(text, "203.0.113.9");
  // The next request on the connection starts from the connection's own peer again.
  stream_.reset();
  stream_.request().resetForReuse();
  EXPECT_EQ(stream_.request().peer, &stream_.peer_);
  headers_.clear();
  target("/inside");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 403);
}

TEST_F(RewriteTest, AnUntrustedPeersHeaderIsIgnored) {
  auto* in = reinterpret_cast<sockaddr_in*>(&stream_.peer_.address);
  inet_pton(AF_INET, "198.51.100.4", &in->sin_addr);
  target("/inside");
  header("X-Forwarded-For", "203.0.113.9");
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 403);
  EXPECT_EQ(stream_.request().peer, &stream_.peer_);
}

// ann:s3cret at bcrypt cost 4.
constexpr const char* kUsers = "ann:$2y$04$t/myUsudaPyGnsKKmI8HOuAevd1YCocjnwvvUuEZ8d.uWAs8McKk6\n";

class AuthDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/scalws-auth-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    std::FILE* f = std::fopen((dir_ + "/users").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(kUsers, f);
    std::fclose(f);
    snap_ = snapshotFor(std::string(R"(
[[listen]]
address = "127.0.0.1:1"
[[route]]
match = { prefix = "/staff" }
auth = { realm = "staff", users = ")") +
                        dir_ + R"(/users" }
respond = { status = 200, body = "welcome\n" }
)");
    ASSERT_EQ(uv_loop_init(&uv_), 0);
    loop_ = std::make_unique<WorkerLoop>(&uv_, 0, snap_, -1);
  }
  void TearDown() override {
    loop_->postShutdown();
    loop_->run();
    loop_.reset();
    EXPECT_EQ(uv_loop_close(&uv_), 0);
    std::remove((dir_ + "/users").c_str());
    ::rmdir(dir_.c_str());
  }

  void request(TestStream& stream, std::string_view authorization, bool body = false) {
    stream.get("/staff/x", body ? "POST" : "GET");
    stream.request().loop = loop_.get();
    stream.request().has_body = body;
    stream.request().content_length = body ? 5 : 0;
    headers_.clear();
    if (!authorization.empty()) headers_.push_back({"Authorization", authorization});
    stream.request().headers = headers_;
    RequestDispatcher::dispatch(stream, *snap_);
  }
  bool runUntilAnswered(TestStream& stream) {
    for (int i = 0; i < 2000 && !stream.responseFinished(); ++i) uv_run(&uv_, UV_RUN_ONCE);
    return stream.responseFinished();
  }

  std::string dir_;
  std::shared_ptr<const ConfigSnapshot> snap_;
  uv_loop_t uv_;
  std::unique_ptr<WorkerLoop> loop_;
  std::vector<HeaderField> headers_;
};

TEST_F(AuthDispatchTest, NoCredentialsIs401AtOnce) {
  TestStream stream;
  request(stream, "");
  EXPECT_EQ(stream.status(), 401);
  EXPECT_EQ(stream.header("WWW-Authenticate"), "Basic realm=\"staff\", charset=\"UTF-8\"");
  EXPECT_FALSE(stream.close_requested);
  TestStream with_body;
  request(with_body, "Bearer abc", true);
  EXPECT_EQ(with_body.status(), 401);
  EXPECT_TRUE(with_body.close_requested);  // the body is not read
}

TEST_F(AuthDispatchTest, AGoodPasswordIsCheckedOffTheLoopThenRemembered) {
  TestStream first;
  request(first, "Basic YW5uOnMzY3JldA==", true);  // ann:s3cret
  EXPECT_EQ(first.status(), 0);                    // not answered yet: hashing
  EXPECT_TRUE(first.body_paused);
  ASSERT_TRUE(runUntilAnswered(first));
  EXPECT_EQ(first.status(), 200);
  EXPECT_EQ(first.body, "welcome\n");
  EXPECT_EQ(first.request().remote_user, "ann");
  EXPECT_EQ(first.resumed_begun, 1);
  EXPECT_EQ(first.resumed_ended, 1);
  EXPECT_FALSE(first.body_paused);
  TestStream second;
  request(second, "Basic YW5uOnMzY3JldA==");
  EXPECT_EQ(second.status(), 200);  // from the loop's memory, at once
  EXPECT_EQ(second.request().remote_user, "ann");
  EXPECT_EQ(second.resumed_begun, 0);
}

TEST_F(AuthDispatchTest, AWrongPasswordIs401AfterItsHashAndIsNotRemembered) {
  for (int i = 0; i < 2; ++i) {
    TestStream stream;
    request(stream, "Basic YW5uOndyb25n");  // ann:wrong
    EXPECT_EQ(stream.status(), 0) << i;
    ASSERT_TRUE(runUntilAnswered(stream));
    EXPECT_EQ(stream.status(), 401);
    EXPECT_TRUE(stream.request().remote_user.empty());
  }
}

TEST_F(AuthDispatchTest, AClientGoneDuringTheCheckIsForgotten) {
  {
    TestStream stream;
    request(stream, "Basic YW5uOnMzY3JldA==");
    stream.die();  // InFlight::abort(): the check's result goes nowhere
  }
  // The work still completes on the loop, touching nothing of the stream.
  for (int i = 0; i < 200; ++i) uv_run(&uv_, UV_RUN_NOWAIT), usleep(1000);
  TestStream again;
  request(again, "Basic YW5uOnMzY3JldA==");
  EXPECT_EQ(again.status(), 0);  // not remembered: the first never finished
  ASSERT_TRUE(runUntilAnswered(again));
  EXPECT_EQ(again.status(), 200);
}

}  // namespace
}  // namespace scalws::worker
