// The Prometheus responder: the pure request -> answer part, and the real server on a uv
// loop with a blocking client in a thread.
#include "controller/metrics/metrics_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "tests/support/free_port.h"

namespace scalws::controller {
namespace {

using ::scalws::testing::freePort;

MetricsHttpServer::Render text(const std::string& body) {
  return [body] { return body; };
}

TEST(MetricsHttpAnswer, GetMetricsAnswersTheText) {
  MetricsHttpAnswer a =
      metricsHttpAnswer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", text("m 1\n"));
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "m 1\n");
  EXPECT_EQ(a.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_FALSE(a.head);
  a = metricsHttpAnswer("GET /metrics?x=1 HTTP/1.0\r\n\r\n", text("m 1\n"));
  EXPECT_EQ(a.status, 200);
  a = metricsHttpAnswer("HEAD /metrics HTTP/1.1\r\n\r\n", text("m 1\n"));
  EXPECT_EQ(a.status, 200);
  EXPECT_TRUE(a.head);
}

TEST(MetricsHttpAnswer, EverythingElseIsRefusedWithoutRendering) {
  bool rendered = false;
  MetricsHttpServer::Render render = [&] {
    rendered = true;
    return std::string("secret");
  };
  EXPECT_EQ(metricsHttpAnswer("POST /metrics HTTP/1.1\r\n\r\n", render).status, 405);
  EXPECT_EQ(metricsHttpAnswer("GET / HTTP/1.1\r\n\r\n", render).status, 404);
  EXPECT_EQ(metricsHttpAnswer("GET /metrics/../x HTTP/1.1\r\n\r\n", render).status, 400);
  EXPECT_EQ(metricsHttpAnswer("GET /metrics\r\n\r\n", render).status, 400);
  EXPECT_EQ(metricsHttpAnswer("GET /metrics SPDY/3\r\n\r\n", render).status, 400);
  EXPECT_EQ(metricsHttpAnswer("\r\n\r\n", render).status, 400);
  EXPECT_FALSE(rendered);
}

class MetricsHttpServerTest : public ::testing::Test {
 protected:
  MetricsHttpServerTest() { uv_loop_init(&loop_); }
  ~MetricsHttpServerTest() override {
    uv_run(&loop_, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }

  // Sends `request` (then half-closes when asked), reads until EOF.
  static std::string exchange(uint16_t port, const std::string& request, bool half_close) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      close(fd);
      return "connect failed";
    }
    (void)!write(fd, request.data(), request.size());
    if (half_close) shutdown(fd, SHUT_WR);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    if (n < 0) out += "<read error>";
    close(fd);
    return out;
  }

  // Runs the loop while `client` runs in a thread; closes the server when it is done.
  void runWith(MetricsHttpServer& server, std::function<void()> client) {
    std::atomic<bool> done{false};
    std::thread t([&] {
      client();
      done = true;
    });
    uv_timer_t poll;
    uv_timer_init(&loop_, &poll);
    struct Ctx {
      std::atomic<bool>* done;
      MetricsHttpServer* server;
    } ctx{&done, &server};
    poll.data = &ctx;
    uv_timer_start(
        &poll,
        [](uv_timer_t* timer) {
          auto* c = static_cast<Ctx*>(timer->data);
          if (!c->done->load()) return;
          c->server->close();
          uv_close(reinterpret_cast<uv_handle_t*>(timer), nullptr);
        },
        5, 5);
    uv_run(&loop_, UV_RUN_DEFAULT);
    t.join();
  }

  uv_loop_t loop_{};
};

TEST_F(MetricsHttpServerTest, ServesOneRequestPerConnection) {
  uint16_t port = freePort();
  int scrapes = 0;
  common::Result<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::open(&loop_, "127.0.0.1:" + std::to_string(port), [&] {
        ++scrapes;
        return std::string("scalws_x_total{instance=\"a\"} 1\n");
      });
  ASSERT_TRUE(server.ok()) << server.status().message();
  EXPECT_EQ((*server)->port(), port);
  std::string ok, missing, post, pipelined, big;
  runWith(**server, [&] {
    ok = exchange(port, "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", false);
    missing = exchange(port, "GET /nope HTTP/1.1\r\n\r\n", true);
    post = exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", true);
    // A second request on the same connection is read and dropped, never answered.
    pipelined = exchange(port, "GET /metrics HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n", true);
    big = exchange(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a'), false);
  });
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_NE(ok.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(ok.find("Content-Length: 31\r\n"), std::string::npos) << ok;
  EXPECT_TRUE(ok.ends_with("\r\n\r\nscalws_x_total{instance=\"a\"} 1\n")) << ok;
  EXPECT_EQ(missing.rfind("HTTP/1.1 404 ", 0), 0u) << missing;
  EXPECT_EQ(post.rfind("HTTP/1.1 405 ", 0), 0u) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos);
  EXPECT_EQ(pipelined.rfind("HTTP/1.1 200 OK", 0), 0u);
  EXPECT_EQ(pipelined.find("HTTP/1.1", 5), std::string::npos) << pipelined;
  EXPECT_EQ(big.rfind("HTTP/1.1 431 ", 0), 0u) << big;
  EXPECT_EQ(scrapes, 2);
}

TEST_F(MetricsHttpServerTest, RefusesBadAddressesAndPortsInUse) {
  EXPECT_FALSE(MetricsHttpServer::open(&loop_, "localhost:9145", text("")).ok());
  EXPECT_FALSE(MetricsHttpServer::open(&loop_, "127.0.0.1", text("")).ok());
  uint16_t port = freePort();
  common::Result<std::unique_ptr<MetricsHttpServer>> first =
      MetricsHttpServer::open(&loop_, "127.0.0.1:" + std::to_string(port), text(""));
  ASSERT_TRUE(first.ok());
  common::Result<std::unique_ptr<MetricsHttpServer>> second =
      MetricsHttpServer::open(&loop_, "127.0.0.1:" + std::to_string(port), text(""));
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot listen"), std::string::npos);
}

}  // namespace
}  // namespace scalws::controller
