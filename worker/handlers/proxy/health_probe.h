// Active health checks of one server in one loop (upstream.health): every `interval` a
// fresh connection sends `GET path` with `Connection: close` and waits at most `timeout`
// for the status line; a status in `expect` passes, anything else (refused, timed out, a
// malformed answer, another status) fails. The pool turns the results into the server's
// state (server_health.h).
//
// Owned by the UpstreamPool; loop thread only. stop() closes a probe in progress, so a
// stopping loop can end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "worker/handlers/proxy/response_parser.h"
#include "worker/handlers/proxy/upstream_connection.h"
#include "worker/loop/timeout_queue.h"

namespace scalws::worker::proxy {

class UpstreamPool;

class HealthProbe final : private TimeoutEntry,
                          private UpstreamConnectionUser,
                          private ResponseParserCallbacks {
 public:
  HealthProbe(UpstreamPool& pool, int server);
  ~HealthProbe();
  HealthProbe(const HealthProbe&) = delete;
  HealthProbe& operator=(const HealthProbe&) = delete;

  // The first probe starts at once, the next ones `interval` after each result.
  void start();
  void stop();

 private:
  enum class State { kWaiting, kConnecting, kSending, kReading, kStopped };

  void onTimeout() noexcept override;
  void onUpstreamConnected() noexcept override;
  void onUpstreamConnectFailed(int err) noexcept override;
  void onUpstreamEvent(int status, int events) noexcept override;
  void onResponseHead(const UpstreamResponseHead& head) override;
  void onResponseBody(std::string_view) override {}

  void probe();
  void send();
  void read();
  void finish(bool passed, const char* why);

  UpstreamPool& pool_;
  int server_;
  State state_ = State::kWaiting;
  UpstreamConnection* conn_ = nullptr;
  std::string request_;
  size_t sent_ = 0;
  std::string received_;  // the head so far
  ResponseParser parser_;
  uint16_t status_ = 0;
};

}  // namespace scalws::worker::proxy
