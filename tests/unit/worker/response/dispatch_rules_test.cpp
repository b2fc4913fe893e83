// The response rules on the one request path: which answers go through a ResponseFilter,
// which get error pages, and that a route without rules gets the stream itself.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <uv.h>

#include <string>
#include <vector>

#include "common/config/config_loader.h"
#include "tests/unit/worker/handlers/static/temp_tree.h"
#include "tests/unit/worker/response/decode.h"
#include "worker/config_snapshot.h"
#include "worker/http/http_stream.h"
#include "worker/http/request_dispatcher.h"
#include "worker/loop/worker_loop.h"
#include "worker/response/response_filter.h"

namespace scalws::worker {
namespace {

// A protocol adapter that keeps what reached it, and the writer the handler was given.
class RulesStream final : public HttpStream {
 public:
  RulesStream() : HttpStream(512) {
    peer_.address.ss_family = AF_INET;
    auto* in = reinterpret_cast<sockaddr_in*>(&peer_.address);
    inet_pton(AF_INET, "192.0.2.7", &in->sin_addr);
    request_.peer = &peer_;
  }
  void sendHead(const ResponseHead& head) noexcept override {
    if (!beginResponse(head.status)) return;
    content_length = head.content_length;
    for (const HeaderField& h : head.headers) headers.emplace_back(h.name, h.value);
  }
  void sendBody(std::string_view data, BodyLifetime) noexcept override {
    if (!acceptsBody()) return;
    countBody(data.size());
    body.append(data);
  }
  void sendFile(const FileSlice&) noexcept override {}
  void finish() noexcept override { finished += endResponse() ? 1 : 0; }
  size_t queuedBytes() const noexcept override { return 0; }
  void onExpectContinue(bool) noexcept override {}

  void get(std::string_view path, WorkerLoop& loop) {
    request_.method_name = "GET";
    request_.method = Method::kGet;
    request_.target = path;
    request_.raw_path = path;
    request_.loop = &loop;
    request_.headers = std::span<const HeaderField>(&accept_, 1);
  }
  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (equalsIgnoreCase(n, name)) return v;
    }
    return std::nullopt;
  }
  using HttpStream::inFlight;
  using HttpStream::reset;

  PeerInfo peer_;
  HeaderField accept_{"accept-encoding", "gzip"};
  std::optional<uint64_t> content_length;
  int finished = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class DispatchRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.write("404.html", "<h1>our 404</h1>\n");
    tree_.write("403.html", "<h1>our 403</h1>\n");
    std::string toml = R"(
[[listen]]
address = "127.0.0.1:1"
[site]
headers = { set = { strict-transport-security = "max-age=63072000" } }
errors = { root = ")" + tree_.path() +
                       R"(", 404 = "/404.html" }
[[route]]
match = { prefix = "/plain/" }
respond = { body = "plain\n" }
compress = false
headers = { remove = ["strict-transport-security"] }
[[route]]
match = { prefix = "/big/" }
respond = { body = ")" +
                       std::string(4000, 'a') +
                       R"(", headers = { content-type = "text/plain" } }
compress = { encodings = ["gzip"] }
[[route]]
match = { prefix = "/private/" }
respond = { body = "secret\n" }
policy = { allow = ["10.0.0.0/8"] }
errors = { 403 = "/403.html" }
)";
    auto config = common::config::loadSiteConfigString(toml, "t.toml");
    ASSERT_TRUE(config.ok()) << config.status().message();
    auto snap = ConfigSnapshot::build(std::move(config).value());
    ASSERT_TRUE(snap.ok()) << snap.status().message();
    snap_ = std::move(snap).value();
    ASSERT_EQ(uv_loop_init(&uv_), 0);
    loop_ = std::make_unique<WorkerLoop>(&uv_, 0, snap_, -1);
  }
  void TearDown() override {
    loop_->postShutdown();
    loop_->run();
    loop_.reset();
    EXPECT_EQ(uv_loop_close(&uv_), 0);
  }

  size_t filtersInUse() { return loop_->local<ResponseFilters>().inUse(); }

  testing::TempTree tree_;
  std::shared_ptr<const ConfigSnapshot> snap_;
  uv_loop_t uv_;
  std::unique_ptr<WorkerLoop> loop_;
  RulesStream stream_;
};

TEST_F(DispatchRulesTest, NoRouteGetsTheSitePageAndHeaders) {
  stream_.get("/nowhere", *loop_);
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 404);
  EXPECT_EQ(stream_.body, "<h1>our 404</h1>\n");
  EXPECT_EQ(stream_.header("strict-transport-security"), "max-age=63072000");
  EXPECT_EQ(stream_.finished, 1);
  EXPECT_EQ(filtersInUse(), 0u);
}

TEST_F(DispatchRulesTest, ARouteWithoutFilteringRulesGetsTheStreamItself) {
  stream_.get("/plain/x", *loop_);
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.body, "plain\n");
  // The route removes the site's only header and turns compression off: nothing to
  // filter, so no filter was taken.
  EXPECT_FALSE(stream_.header("strict-transport-security").has_value());
  EXPECT_EQ(loop_->local<ResponseFilters>().inUse(), 0u);
  EXPECT_NE(stream_.request().response_rules, nullptr);  // the site's error pages still
}

TEST_F(DispatchRulesTest, ARouteThatCompressesGoesThroughAFilter) {
  stream_.get("/big/x", *loop_);
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 200);
  EXPECT_EQ(stream_.header("content-encoding"), "gzip");
  EXPECT_EQ(stream_.header("strict-transport-security"), "max-age=63072000");
  EXPECT_FALSE(stream_.content_length.has_value());
  EXPECT_EQ(testing::gunzip(stream_.body), std::string(4000, 'a'));
  EXPECT_EQ(stream_.finished, 1);
  EXPECT_EQ(stream_.inFlight(), nullptr);  // the filter let go of the stream
  EXPECT_EQ(filtersInUse(), 0u);
}

TEST_F(DispatchRulesTest, ThePolicysOwn403GetsTheRoutePage) {
  stream_.get("/private/x", *loop_);
  RequestDispatcher::dispatch(stream_, *snap_);
  EXPECT_EQ(stream_.status(), 403);
  EXPECT_EQ(stream_.body, "<h1>our 403</h1>\n");
  EXPECT_EQ(stream_.header("strict-transport-security"), "max-age=63072000");
}

TEST_F(DispatchRulesTest, TheNextRequestStartsWithoutThePreviousRules) {
  stream_.get("/private/x", *loop_);
  RequestDispatcher::dispatch(stream_, *snap_);
  ASSERT_NE(stream_.request().response_rules, nullptr);
  stream_.reset();  // the connection moves on to its next request
  EXPECT_EQ(stream_.request().response_rules, nullptr);
}

TEST(DispatchWithoutRules, NothingIsTakenAndNoRulesAreSet) {
  auto config = common::config::loadSiteConfigString(
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nrespond = { body = \"x\" }\n", "t.toml");
  ASSERT_TRUE(config.ok());
  auto snap = ConfigSnapshot::build(std::move(config).value());
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->responseRules(0), nullptr);
  EXPECT_EQ((*snap)->siteResponseRules(), nullptr);
}

}  // namespace
}  // namespace scalws::worker
