// A protocol adapter for dispatcher tests (an HttpStream that records what it is asked to
// send instead of framing it) and a snapshot built from TOML.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/config/config_loader.h"
#include "worker/config_snapshot.h"
#include "worker/http/http_stream.h"

namespace scalws::worker::test_support {

inline std::shared_ptr<const ConfigSnapshot> snapshotFor(std::string_view toml) {
  auto config = common::config::loadSiteConfigString(toml, "test.toml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  auto snap = ConfigSnapshot::build(std::move(config).value());
  EXPECT_TRUE(snap.ok()) << snap.status().message();
  return std::move(snap).value();
}

class TestStream final : public HttpStream {
 public:
  TestStream() : HttpStream(512) {
    peer_.address.ss_family = AF_INET;
    auto* in = reinterpret_cast<sockaddr_in*>(&peer_.address);
    inet_pton(AF_INET, "192.0.2.7", &in->sin_addr);
    request_.peer = &peer_;
  }

  void sendHead(const ResponseHead& head) noexcept override {
    if (!beginResponse(head.status)) return;
    close_requested = head.close_connection;
    for (const HeaderField& h : head.headers) {
      headers.emplace_back(std::string(h.name), std::string(h.value));
    }
  }
  void sendBody(std::string_view data, BodyLifetime) noexcept override {
    if (!acceptsBody()) return;
    countBody(data.size());
    body.append(data);
  }
  void sendFile(const FileSlice&) noexcept override {}
  void finish() noexcept override { finished += endResponse() ? 1 : 0; }
  size_t queuedBytes() const noexcept override { return 0; }
  void onExpectContinue(bool will_read) noexcept override { continues.push_back(will_read); }
  void setBodyReadPaused(bool paused) noexcept override { body_paused = paused; }
  void beginResumedDispatch() noexcept override { ++resumed_begun; }
  void endResumedDispatch() noexcept override { ++resumed_ended; }

  // What a protocol adapter calls.
  using HttpStream::deliverBody;
  using HttpStream::deliverBodyEnd;
  using HttpStream::die;
  using HttpStream::reset;
  using HttpStream::rewind;

  void get(std::string_view path, std::string_view method = "GET") {
    request_.method_name = method;
    request_.method = methodFromName(method);
    request_.target = path;
    request_.raw_path = path;
  }

  std::string header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return v;
    }
    return "";
  }

  PeerInfo peer_;
  bool close_requested = false;
  int finished = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::vector<bool> continues;
  bool body_paused = false;
  int resumed_begun = 0;
  int resumed_ended = 0;
};

}  // namespace scalws::worker::test_support
