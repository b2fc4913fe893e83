// What the proxy handler tests share: a real WorkerLoop on its own uv loop built from a
// site config, a Request made by hand, and a ResponseWriter that records what it was told,
// with the hooks an asynchronous handler steers (pause, abort, writable notifications).
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/config/config_loader.h"
#include "worker/config_snapshot.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::proxy::testing {

class RecordingWriter final : public ResponseWriter {
 public:
  void sendHead(const ResponseHead& head) noexcept override {
    ++heads;
    status = head.status;
    content_length = head.content_length;
    headers.clear();
    for (const HeaderField& h : head.headers) headers.emplace_back(h.name, h.value);
  }
  void sendBody(std::string_view data, BodyLifetime) noexcept override { body.append(data); }
  void sendFile(const FileSlice&) noexcept override {}
  void finish() noexcept override {
    ++finished;
    in_flight = nullptr;
  }
  size_t queuedBytes() const noexcept override { return queued; }
  void notifyWhenWritable(WritableObserver* o) noexcept override { observer = o; }
  void setInFlight(InFlight* f) noexcept override { in_flight = f; }
  void setBodyReadPaused(bool paused) noexcept override { body_paused = paused; }
  void abortResponse() noexcept override {
    ++aborted;
    in_flight = nullptr;
  }

  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (equalsIgnoreCase(n, name)) return v;
    }
    return std::nullopt;
  }
  bool done() const { return finished > 0 || aborted > 0; }

  int heads = 0;
  int finished = 0;
  int aborted = 0;
  uint16_t status = 0;
  std::optional<uint64_t> content_length;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  size_t queued = 0;
  bool body_paused = false;
  WritableObserver* observer = nullptr;
  InFlight* in_flight = nullptr;
};

// A request as a codec would hand it over.
struct TestRequest {
  explicit TestRequest(WorkerLoop* loop, std::string method = "GET", std::string path = "/",
                       std::vector<std::pair<std::string, std::string>> fields = {}) {
    method_ = std::move(method);
    path_ = std::move(path);
    fields_ = std::move(fields);
    peer.address_len = sizeof(sockaddr_in);
    auto* sin = reinterpret_cast<sockaddr_in*>(&peer.address);
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(0xc0000201);  // 192.0.2.1
    bool has_host = false;
    for (const auto& [n, v] : fields_) {
      headers.push_back(HeaderField{n, v});
      has_host = has_host || equalsIgnoreCase(n, "host");
    }
    if (!has_host) headers.insert(headers.begin(), HeaderField{"Host", "shop.example"});
    request.method_name = method_;
    request.method = methodFromName(method_);
    request.target = path_;
    size_t q = path_.find('?');
    request.raw_path = std::string_view(path_).substr(0, q);
    request.path = request.raw_path;
    request.query =
        q == std::string::npos ? std::string_view() : std::string_view(path_).substr(q + 1);
    request.host = "shop.example";
    request.headers = headers;
    request.peer = &peer;
    request.loop = loop;
    request.arena = &arena;
    request.id = 1;
  }
  void withBody(uint64_t length, bool chunked = false) {
    request.has_body = true;
    request.chunked = chunked;
    request.content_length = chunked ? 0 : length;
  }

  std::string method_, path_;
  std::vector<std::pair<std::string, std::string>> fields_;
  std::vector<HeaderField> headers;
  PeerInfo peer;
  Arena arena;
  Request request;
};

// A site with one proxy route in front of `upstream_toml` (an [upstream.app] body).
inline std::shared_ptr<const ConfigSnapshot> proxySnapshot(const std::string& upstream_toml,
                                                           const std::string& proxy_extra = "") {
  std::string text =
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nproxy = { upstream = \"app\"" +
      proxy_extra + " }\n[upstream.app]\n" + upstream_toml + "\n";
  auto site = common::config::loadSiteConfigString(text, "proxy_test.toml");
  EXPECT_TRUE(site.ok()) << site.status().message();
  if (!site.ok()) return nullptr;
  auto snapshot = ConfigSnapshot::build(std::move(site).value());
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().message();
  return snapshot.ok() ? std::move(snapshot).value() : nullptr;
}

// A WorkerLoop on a private uv loop, stepped by the test.
class LoopFixture : public ::testing::Test {
 protected:
  void startLoop(std::shared_ptr<const ConfigSnapshot> snapshot) {
    ASSERT_NE(snapshot, nullptr);
    snapshot_ = snapshot;
    uv_loop_init(&uv_);
    loop_ = std::make_unique<WorkerLoop>(&uv_, 0, snapshot_, -1);
  }
  void TearDown() override {
    if (!loop_) return;
    loop_->postShutdown();
    // Bounded: a test that failed half-way may leave an exchange holding an upstream
    // connection, which no client connection will abort here.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (uv_run(&uv_, UV_RUN_NOWAIT) != 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the loop still has handles open after the test";
        loop_.release();  // NOLINT: leaked on purpose, its handles are still registered
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    loop_.reset();
    EXPECT_EQ(uv_loop_close(&uv_), 0);
  }
  Handler& handler() { return *snapshot_->handler(0); }
  // Steps the loop until `done` holds or `timeout` passed; false on timeout.
  bool runUntil(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      uv_run(&uv_, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
  void runFor(std::chrono::milliseconds d) {
    runUntil([] { return false; }, d);
  }

  uv_loop_t uv_{};
  std::shared_ptr<const ConfigSnapshot> snapshot_;
  std::unique_ptr<WorkerLoop> loop_;
};

}  // namespace scalws::worker::proxy::testing
