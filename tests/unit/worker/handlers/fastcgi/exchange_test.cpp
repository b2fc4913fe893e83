// Exchange, one request's trip to a PHP pool, against a fake FastCGI application on a real
// libuv loop: what goes out (BEGIN_REQUEST, PARAMS, STDIN), what the writer gets back, and
// each way it can end (answer, errors, timeouts, queueing, the client going away, a kept
// connection that died).
#include "worker/handlers/fastcgi/exchange.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config_loader.h"
#include "tests/support/fake_fastcgi_server.h"
#include "worker/config_snapshot.h"
#include "worker/handlers/fastcgi/loop_pools.h"
#include "worker/handlers/fastcgi/record_writer.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::fastcgi {
namespace {

using scalws::testing::FakeFastcgiServer;

// Records what the exchange tells the client side; `hold` makes it a slow client whose
// queue keeps what it was given until drain().
class FakeWriter final : public ResponseWriter {
 public:
  void sendHead(const ResponseHead& head) noexcept override {
    ++heads;
    status = head.status;
    content_length = head.content_length;
    for (const HeaderField& h : head.headers) headers.emplace_back(h.name, h.value);
  }
  void sendBody(std::string_view data, BodyLifetime) noexcept override {
    body.append(data);
    if (hold) queued += data.size();
  }
  void sendFile(const FileSlice&) noexcept override {}
  void finish() noexcept override {
    finished = true;
    in_flight = nullptr;  // as a connection forgets it once the response ended
  }
  size_t queuedBytes() const noexcept override { return queued; }
  void notifyWhenWritable(WritableObserver* o) noexcept override { observer = o; }
  void setInFlight(InFlight* f) noexcept override { in_flight = f; }
  void setBodyReadPaused(bool paused) noexcept override { body_paused = paused; }
  void abortResponse() noexcept override { aborted_response = true; }

  void drain() {
    queued = 0;
    hold = false;
    if (WritableObserver* o = observer) {
      observer = nullptr;
      o->onWritable();
    }
  }
  std::string header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return v;
    }
    return "";
  }
  bool done() const { return finished || aborted_response; }

  int heads = 0;
  uint16_t status = 0;
  std::optional<uint64_t> content_length;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool finished = false;
  bool aborted_response = false;
  bool body_paused = false;
  bool hold = false;
  size_t queued = 0;
  WritableObserver* observer = nullptr;
  InFlight* in_flight = nullptr;
};

// One client request: what a connection would own.
struct Call {
  Arena arena;
  Request request;
  FakeWriter writer;
};

class ExchangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&uv_);
    fpm_ = std::make_unique<FakeFastcgiServer>(&uv_);
    auto site = common::config::loadSiteConfigString(
        "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nrespond = { body = \"x\" }\n",
        "exchange_test.toml");
    ASSERT_TRUE(site.ok()) << site.status().message();
    auto snapshot = ConfigSnapshot::build(std::move(site).value());
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().message();
    loop_ = std::make_unique<WorkerLoop>(&uv_, 0, std::move(snapshot).value(), -1);
    usePool(fpm_->address());
  }

  void TearDown() override {
    // Requests still in flight: their client goes away, as when a connection dies.
    for (auto& call : calls_) {
      if (InFlight* f = call->writer.in_flight) {
        call->writer.in_flight = nullptr;
        f->abort();
      }
    }
    calls_.clear();
    fpm_.reset();
    loop_->postShutdown();
    uv_run(&uv_, UV_RUN_DEFAULT);  // returns once the loop and the pools closed every handle
    loop_.reset();
    EXPECT_EQ(uv_loop_close(&uv_), 0);
  }

  // The pool the next requests go to. `max_conns`: connections kept (0: one per request).
  void usePool(const std::string& address, uint32_t max_conns = 2, uint64_t timeout_ms = 2000,
               uint64_t queue_timeout_ms = 2000, uint32_t queue = 8) {
    common::config::PhpPoolConfig c;
    c.name = "main";
    c.address = address;
    if (address.starts_with("unix:")) {
      c.unix_path = address.substr(5);
    } else {
      c.kind = common::config::PhpPoolConfig::Kind::kTcp;
      c.host = "127.0.0.1";
      c.port = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
    }
    if (max_conns > 0) c.max_conns = max_conns;
    c.timeout = timeout_ms;
    c.queue_timeout = queue_timeout_ms;
    c.queue = queue;
    auto spec = resolvePoolSpec(c, 1);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    spec_ = std::move(spec).value();
  }

  LoopPools& pools() { return loop_->local<LoopPools>(); }
  uint64_t phpErrors() const {
#ifndef SCALWS_METRICS_OFF
    return loop_->counters().php_errors.value();
#else
    return 0;
#endif
  }

  Call& start(Method method = Method::kGet, std::string_view body_length = "") {
    calls_.push_back(std::make_unique<Call>());
    Call& call = *calls_.back();
    Request& r = call.request;
    r.method = method;
    r.method_name = method == Method::kPost ? "POST" : method == Method::kHead ? "HEAD" : "GET";
    r.id = ++request_id_;
    r.loop = loop_.get();
    r.arena = &call.arena;
    r.has_body = !body_length.empty();
    r.content_length = r.has_body ? std::stoull(std::string(body_length)) : 0;
    std::string params;
    appendNameValue(params, "REQUEST_METHOD", r.method_name);
    appendNameValue(params, "SCRIPT_FILENAME", "/srv/www/index.php");
    if (r.has_body) appendNameValue(params, "CONTENT_LENGTH", body_length);
    pools().takeExchange().start(r, call.writer, pools().stateFor(spec_), params);
    return call;
  }

  // The client's connection dies: the exchange in flight is aborted.
  static void clientLeaves(Call& call) {
    InFlight* f = call.writer.in_flight;
    call.writer.in_flight = nullptr;
    f->abort();
  }

  bool runUntil(const std::function<bool()>& done, uint64_t ms = 2000) {
    return fpm_->runUntil(done, ms);
  }
  bool waitDone(Call& call, uint64_t ms = 2000) {
    return runUntil([&] { return call.writer.done(); }, ms);
  }

  uv_loop_t uv_;
  std::unique_ptr<FakeFastcgiServer> fpm_;
  std::unique_ptr<WorkerLoop> loop_;
  PoolSpec spec_;
  std::vector<std::unique_ptr<Call>> calls_;
  uint64_t request_id_ = 0;
};

constexpr std::string_view kHello = "Status: 201 Created\r\nX-From: php\r\n\r\nhello";

TEST_F(ExchangeTest, AGetGoesOutAndItsAnswerComesBack) {
  Call& call = start();
  EXPECT_NE(call.writer.in_flight, nullptr);  // the exchange answers later
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->role, 1);  // responder
  EXPECT_TRUE(req->keep_conn);
  EXPECT_EQ(req->param("REQUEST_METHOD"), "GET");
  EXPECT_EQ(req->param("SCRIPT_FILENAME"), "/srv/www/index.php");
  EXPECT_TRUE(req->stdin_complete);
  EXPECT_EQ(req->stdin_data, "");
  fpm_->respond(*req, kHello);
  ASSERT_TRUE(waitDone(call));
  EXPECT_TRUE(call.writer.finished);
  EXPECT_EQ(call.writer.status, 201);
  EXPECT_EQ(call.writer.header("X-From"), "php");
  EXPECT_EQ(call.writer.body, "hello");
  // The whole answer came in one read: its length is known.
  EXPECT_EQ(call.writer.content_length, std::optional<uint64_t>(5));
  EXPECT_EQ(phpErrors(), 0u);
}

TEST_F(ExchangeTest, AKeptConnectionServesTheNextRequest) {
  for (int i = 0; i < 3; ++i) {
    Call& call = start();
    FakeFastcgiServer::Request* req = fpm_->waitForRequest();
    ASSERT_NE(req, nullptr) << i;
    fpm_->respond(*req, kHello);
    ASSERT_TRUE(waitDone(call)) << i;
    EXPECT_EQ(call.writer.body, "hello");
  }
  EXPECT_EQ(fpm_->connectionsAccepted(), 1u);
  EXPECT_EQ(pools().exchangeCountForTest(), 1u);  // one Exchange, recycled
}

TEST_F(ExchangeTest, WithoutMaxConnsEveryRequestHasItsOwnConnection) {
  usePool(fpm_->address(), /*max_conns=*/0);
  for (int i = 0; i < 2; ++i) {
    Call& call = start();
    FakeFastcgiServer::Request* req = fpm_->waitForRequest();
    ASSERT_NE(req, nullptr);
    EXPECT_FALSE(req->keep_conn);
    fpm_->respond(*req, kHello);  // closes the connection after END_REQUEST
    ASSERT_TRUE(waitDone(call));
    EXPECT_EQ(call.writer.status, 201);
  }
  EXPECT_EQ(fpm_->connectionsAccepted(), 2u);
}

TEST_F(ExchangeTest, TheRequestBodyStreamsAsStdin) {
  std::string body(200 * 1024, 'b');
  Call& call = start(Method::kPost, std::to_string(body.size()));
  BodySink* sink = call.request.bodySink();
  ASSERT_NE(sink, nullptr);
  // Paused until a connection takes the body, then open.
  ASSERT_TRUE(runUntil([&] { return !call.writer.body_paused; }));
  for (size_t at = 0; at < body.size(); at += 16 * 1024) {
    sink->onBodyData(std::string_view(body).substr(at, 16 * 1024));
  }
  sink->onBodyEnd();
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->param("CONTENT_LENGTH"), std::to_string(body.size()));
  EXPECT_EQ(req->stdin_data, body);
  fpm_->respond(*req, "Content-Type: text/plain\r\n\r\nstored");
  ASSERT_TRUE(waitDone(call));
  EXPECT_EQ(call.writer.status, 200);
  EXPECT_EQ(call.writer.body, "stored");
}

TEST_F(ExchangeTest, ABusyPoolPausesTheClientsBody) {
  Call& call = start(Method::kPost, "4000000");
  ASSERT_TRUE(runUntil([&] { return !call.writer.body_paused; }));
  FakeFastcgiServer::Request* req = fpm_->waitForRequest(2000, /*whole_body=*/false);
  ASSERT_NE(req, nullptr);
  fpm_->setReading(false);  // PHP does not read: the socket fills, then our send queue
  std::string chunk(64 * 1024, 'c');
  size_t sent = 0;
  while (!call.writer.body_paused && sent < 4000000) {
    call.request.bodySink()->onBodyData(chunk);
    sent += chunk.size();
    runUntil([] { return false; }, 1);
  }
  ASSERT_TRUE(call.writer.body_paused) << sent;
  fpm_->setReading(true);
  EXPECT_TRUE(runUntil([&] { return !call.writer.body_paused; }));
  EXPECT_TRUE(runUntil([&] { return req->stdin_data.size() == sent; }));
}

TEST_F(ExchangeTest, AnUnreachablePoolIs502) {
  usePool("unix:/nonexistent/scalws-test.sock");
  Call& call = start();
  ASSERT_TRUE(waitDone(call));
  EXPECT_EQ(call.writer.status, 502);
#ifndef SCALWS_METRICS_OFF
  EXPECT_EQ(phpErrors(), 1u);
#endif
}

struct BadAnswer {
  const char* name;
  std::string stdout_data;
  std::string raw;  // sent as is instead of an answer
  uint8_t protocol_status = 0;
  uint16_t status;
};

TEST_F(ExchangeTest, BadAnswersGetTheirStatusAndTheConnectionCloses) {
  const BadAnswer cases[] = {
      {"malformed record", "", std::string("\x02\x06\x00\x01\x00\x00\x00\x00", 8), 0, 502},
      {"another request id", "", std::string("\x01\x06\x00\x07\x00\x01\x00\x00x", 9), 0, 502},
      {"bad CGI head", "no colon here\r\n\r\nbody", "", 0, 502},
      {"no CGI head before the end", "Status: 200", "", 0, 502},
      {"overloaded", "", "", 2, 503},
      {"cannot multiplex", "", "", 1, 502},
  };
  for (const BadAnswer& c : cases) {
    SCOPED_TRACE(c.name);
    Call& call = start();
    FakeFastcgiServer::Request* req = fpm_->waitForRequest();
    ASSERT_NE(req, nullptr);
    if (!c.raw.empty()) {
      fpm_->sendRaw(*req, c.raw);
    } else {
      fpm_->sendStdout(*req, c.stdout_data);
      fpm_->endRequest(*req, 0, c.protocol_status);
    }
    ASSERT_TRUE(waitDone(call));
    EXPECT_EQ(call.writer.status, c.status);
    if (c.status == 503) {
      EXPECT_EQ(call.writer.header("Retry-After"), "1");
    }
    // The connection cannot be trusted any more: closed, not kept.
    EXPECT_TRUE(fpm_->waitForClose(*req));
  }
}

TEST_F(ExchangeTest, NoAnswerWithinTheTimeoutIs504) {
  usePool(fpm_->address(), 2, /*timeout_ms=*/150);
  Call& call = start();
  ASSERT_NE(fpm_->waitForRequest(), nullptr);
  ASSERT_TRUE(waitDone(call, 3000));
  EXPECT_EQ(call.writer.status, 504);
}

TEST_F(ExchangeTest, RequestsQueueForTheLoopsShare) {
  usePool(fpm_->address(), /*max_conns=*/1, 2000, /*queue_timeout_ms=*/2000, /*queue=*/1);
  Call& first = start();
  FakeFastcgiServer::Request* req1 = fpm_->waitForRequest();
  ASSERT_NE(req1, nullptr);
  Call& second = start();  // waits for the one connection
  Call& third = start();   // the queue holds one: 503 at once
  ASSERT_TRUE(waitDone(third));
  EXPECT_EQ(third.writer.status, 503);
  EXPECT_EQ(third.writer.header("Retry-After"), "1");
  EXPECT_EQ(fpm_->waitForRequest(100), nullptr);  // the second is still queued
  fpm_->respond(*req1, kHello);
  ASSERT_TRUE(waitDone(first));
  FakeFastcgiServer::Request* req2 = fpm_->waitForRequest();
  ASSERT_NE(req2, nullptr);
  EXPECT_EQ(req2->connection, req1->connection);  // the same kept connection
  fpm_->respond(*req2, kHello);
  ASSERT_TRUE(waitDone(second));
  EXPECT_EQ(second.writer.status, 201);
}

TEST_F(ExchangeTest, AQueuedRequestTimesOutWith503) {
  usePool(fpm_->address(), /*max_conns=*/1, 2000, /*queue_timeout_ms=*/100);
  Call& first = start();
  ASSERT_NE(fpm_->waitForRequest(), nullptr);
  Call& second = start();
  ASSERT_TRUE(waitDone(second, 3000));
  EXPECT_EQ(second.writer.status, 503);
  EXPECT_FALSE(first.writer.done());
}

TEST_F(ExchangeTest, TheClientGoingAwayClosesThePoolConnection) {
  Call& call = start();
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  ASSERT_NE(call.writer.in_flight, nullptr);
  clientLeaves(call);
  // PHP is still running that request: its connection cannot be reused.
  EXPECT_TRUE(fpm_->waitForClose(*req));
  EXPECT_FALSE(call.writer.done());
  // The exchange is free again and the next request gets a fresh connection.
  Call& next = start();
  FakeFastcgiServer::Request* req2 = fpm_->waitForRequest();
  ASSERT_NE(req2, nullptr);
  EXPECT_NE(req2->connection, req->connection);
  fpm_->respond(*req2, kHello);
  ASSERT_TRUE(waitDone(next));
  EXPECT_EQ(pools().exchangeCountForTest(), 1u);
}

TEST_F(ExchangeTest, AQueuedRequestWhoseClientLeftLeavesTheQueue) {
  usePool(fpm_->address(), /*max_conns=*/1);
  Call& first = start();
  FakeFastcgiServer::Request* req1 = fpm_->waitForRequest();
  ASSERT_NE(req1, nullptr);
  Call& second = start();
  ASSERT_NE(second.writer.in_flight, nullptr);
  clientLeaves(second);
  EXPECT_EQ(pools().stateFor(spec_).queuedCount(), 0u);
  fpm_->respond(*req1, kHello);
  ASSERT_TRUE(waitDone(first));
  EXPECT_EQ(fpm_->waitForRequest(100), nullptr);
}

TEST_F(ExchangeTest, ABrokenPoolAfterTheHeadCutsTheResponse) {
  Call& call = start();
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  fpm_->sendStdout(*req, "Content-Type: text/plain\r\n\r\npart of it");
  ASSERT_TRUE(runUntil([&] { return call.writer.heads == 1; }));
  EXPECT_FALSE(call.writer.content_length.has_value());  // streamed: length unknown
  fpm_->closeConnection(*req);
  ASSERT_TRUE(waitDone(call));
  EXPECT_TRUE(call.writer.aborted_response);
  EXPECT_FALSE(call.writer.finished);
  EXPECT_EQ(call.writer.body, "part of it");
}

TEST_F(ExchangeTest, AKeptConnectionPhpClosedIsRetriedOnce) {
  Call& first = start();
  FakeFastcgiServer::Request* req1 = fpm_->waitForRequest();
  ASSERT_NE(req1, nullptr);
  fpm_->respond(*req1, kHello);
  ASSERT_TRUE(waitDone(first));
  // PHP-FPM ends the idle kept connection; the worker notices only when it uses it.
  fpm_->closeConnection(*req1);
  Call& second = start();
  FakeFastcgiServer::Request* req2 = fpm_->waitForRequest();
  ASSERT_NE(req2, nullptr);
  EXPECT_NE(req2->connection, req1->connection);
  fpm_->respond(*req2, kHello);
  ASSERT_TRUE(waitDone(second));
  EXPECT_EQ(second.writer.status, 201);
}

TEST_F(ExchangeTest, ASlowClientStopsReadingFromThePool) {
  Call& call = start();
  call.writer.hold = true;
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  std::string big(2 * 1024 * 1024, 'p');
  fpm_->respond(*req, "Content-Type: application/octet-stream\r\n\r\n" + big);
  // Reading stops past kClientHighWater, well before the whole answer.
  ASSERT_TRUE(runUntil([&] { return call.writer.observer != nullptr; }));
  size_t at_pause = call.writer.body.size();
  runUntil([] { return false; }, 50);
  EXPECT_EQ(call.writer.body.size(), at_pause);
  EXPECT_LT(at_pause, big.size());
  while (!call.writer.done()) {
    call.writer.drain();
    call.writer.hold = true;
    ASSERT_TRUE(runUntil([&] { return call.writer.observer != nullptr || call.writer.done(); }));
  }
  EXPECT_TRUE(call.writer.finished);
  EXPECT_EQ(call.writer.body, big);
}

TEST_F(ExchangeTest, AHeadRequestGetsNoLengthFromAnEmptyBody) {
  Call& call = start(Method::kHead);
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  fpm_->respond(*req, "Content-Type: text/html\r\n\r\n");
  ASSERT_TRUE(waitDone(call));
  EXPECT_EQ(call.writer.status, 200);
  EXPECT_FALSE(call.writer.content_length.has_value());
}

TEST_F(ExchangeTest, OverTcpToo) {
  fpm_ = std::make_unique<FakeFastcgiServer>(&uv_, FakeFastcgiServer::Transport::kTcp);
  usePool(fpm_->address());
  Call& call = start();
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  fpm_->respond(*req, kHello, "a warning from PHP\n");
  ASSERT_TRUE(waitDone(call));
  EXPECT_EQ(call.writer.body, "hello");
}

}  // namespace
}  // namespace scalws::worker::fastcgi
