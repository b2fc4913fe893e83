// HttpServer: the framing of answers, and the authenticator's three ways (allow, deny,
// check on the thread pool) on a real loop with blocking clients in threads. A check that
// runs while the loop keeps serving others is what keeps bcrypt off the controller's loop.
#include "controller/http/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "tests/support/free_port.h"

namespace scalws::controller::http {
namespace {

TEST(HttpAnswer, SerializesFramingAndExtraHeaders) {
  HttpAnswer a = HttpAnswer::error(404, "Not Found", "nope\n");
  a.headers.emplace_back("X-A", "1");
  EXPECT_EQ(a.serialize(),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 5\r\nX-A: 1\r\nConnection: close\r\n\r\nnope\n");
  a.head = true;
  EXPECT_TRUE(a.serialize().ends_with("Content-Length: 5\r\nX-A: 1\r\nConnection: close\r\n\r\n"));
}

using ::scalws::testing::freePort;

// Sends `request`, reads until EOF (or, with close_early, closes at once).
std::string exchange(uint16_t port, const std::string& request, bool close_early = false) {
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
  std::string out;
  if (!close_early) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// "Authorization: ok" passes at once, none is denied, "slow-good"/"slow-bad" are checked on
// the thread pool; "slow-wait" is allowed only once `released` is set (by another client
// served meanwhile), "slow-gone" waits for `released` too and its client has left.
class FakeAuth : public Authenticator {
 public:
  Decision decide(const HttpRequest& r) override {
    if (r.authorization == "ok") return {Decision::Kind::kAllow, nullptr};
    if (r.authorization.empty()) return {Decision::Kind::kDeny, nullptr};
    std::string value = r.authorization;
    std::shared_ptr<std::atomic<bool>> released = released_;
    return {Decision::Kind::kCheck, [value, released] {
              if (value == "slow-wait" || value == "slow-gone") {
                auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                while (!released->load() && std::chrono::steady_clock::now() < deadline) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(2));
                }
                return released->load();
              }
              return value == "slow-good";
            }};
  }
  void verified(const HttpRequest& r, bool allowed) override {
    verified_ += r.authorization + (allowed ? "+" : "-") + " ";
  }
  HttpAnswer denied() const override {
    HttpAnswer a = HttpAnswer::error(401, "Unauthorized", "who?\n");
    a.headers.emplace_back("WWW-Authenticate", "Basic realm=\"t\"");
    return a;
  }
  std::shared_ptr<std::atomic<bool>> released_ = std::make_shared<std::atomic<bool>>(false);
  std::string verified_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  HttpServerTest() { uv_loop_init(&loop_); }
  ~HttpServerTest() override {
    uv_run(&loop_, UV_RUN_DEFAULT);  // what the closed server left (a check in flight)
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }

  void runWith(HttpServer& server, std::function<void()> client) {
    std::atomic<bool> done{false};
    std::thread t([&] {
      client();
      done = true;
    });
    uv_timer_t poll;
    uv_timer_init(&loop_, &poll);
    struct Ctx {
      std::atomic<bool>* done;
      HttpServer* server;
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

TEST_F(HttpServerTest, AuthenticatorAllowsDeniesAndChecksOffTheLoop) {
  uint16_t port = freePort();
  FakeAuth auth;
  int handled = 0;
  auto server = HttpServer::open(
      &loop_, "127.0.0.1:" + std::to_string(port), "--test",
      [&](const HttpRequest& r) {
        ++handled;
        HttpAnswer a;
        a.body = "hello " + r.path + "\n";
        return a;
      },
      &auth);
  ASSERT_TRUE(server.ok()) << server.status().message();
  std::string allowed, denied, good, bad, waited, quick, bad_head;
  runWith(**server, [&] {
    allowed = exchange(port, "GET /a HTTP/1.1\r\nAuthorization: ok\r\n\r\n");
    denied = exchange(port, "GET /a HTTP/1.1\r\n\r\n");
    good = exchange(port, "GET /g HTTP/1.1\r\nAuthorization: slow-good\r\n\r\n");
    bad = exchange(port, "GET /b HTTP/1.1\r\nAuthorization: slow-bad\r\n\r\n");
    bad_head = exchange(port, "GET /../x HTTP/1.1\r\nAuthorization: ok\r\n\r\n");
    // A check that only passes once another request was answered meanwhile.
    std::thread waiting(
        [&] { waited = exchange(port, "GET /w HTTP/1.1\r\nAuthorization: slow-wait\r\n\r\n"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    quick = exchange(port, "GET /q HTTP/1.1\r\nAuthorization: ok\r\n\r\n");
    *auth.released_ = true;
    waiting.join();
    // A client that leaves while its check runs: nothing is answered, nothing leaks.
    *auth.released_ = false;
    exchange(port, "GET /x HTTP/1.1\r\nAuthorization: slow-gone\r\n\r\n", true);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    *auth.released_ = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  EXPECT_EQ(allowed.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << allowed;
  EXPECT_TRUE(allowed.ends_with("hello /a\n"));
  EXPECT_EQ(denied.rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0u) << denied;
  EXPECT_NE(denied.find("WWW-Authenticate: Basic realm=\"t\"\r\n"), std::string::npos);
  EXPECT_TRUE(good.ends_with("hello /g\n")) << good;
  EXPECT_EQ(bad.rfind("HTTP/1.1 401 ", 0), 0u) << bad;
  EXPECT_EQ(bad_head.rfind("HTTP/1.1 400 ", 0), 0u) << bad_head;
  EXPECT_TRUE(quick.ends_with("hello /q\n")) << quick;
  EXPECT_TRUE(waited.ends_with("hello /w\n")) << waited;
  EXPECT_NE(auth.verified_.find("slow-good+ slow-bad- "), std::string::npos) << auth.verified_;
  EXPECT_NE(auth.verified_.find("slow-wait+"), std::string::npos) << auth.verified_;
  EXPECT_EQ(handled, 4);  // /a, /g, /q, /w: never a denied or malformed one
}

}  // namespace
}  // namespace scalws::controller::http
