// One request's trip to a PHP pool and back: waits for a pool connection, sends
// BEGIN_REQUEST + PARAMS, streams the request body as STDIN, parses STDOUT (CGI head, then
// body) and STDERR, and answers through the ResponseWriter it keeps.
//
// Flow control both ways: the client body is paused (ResponseWriter::
// setBodyReadPaused) while no connection is ready or more than kSendHighWater bytes wait
// to go to the pool; reading from the pool stops while the client has more than
// kClientHighWater bytes queued, and resumes from the writer's writable notification.
// Memory per request is therefore bounded whatever the body and response sizes.
//
// Errors: pool unreachable → 502, malformed records or CGI head → 502 (connection closed),
// queue full or queue timeout → 503 + Retry-After, no progress within the pool's timeout
// → 504. After the head went out an error can only cut the response short
// (abortResponse()). The client going away arrives as abort().
//
// Lifetime: owned by LoopPools and recycled; between start() and the end of the request
// it is registered as the writer's InFlight and the request's BodySink. It never touches
// itself after handing the writer its last call (finish() may start the next request on
// the connection, which may take this very object from the free list).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "worker/handlers/fastcgi/cgi_head_parser.h"
#include "worker/handlers/fastcgi/pool_state.h"
#include "worker/handlers/fastcgi/record_parser.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/loop/timeout_queue.h"

namespace scalws::worker::fastcgi {

class LoopPools;

class Exchange final : public InFlight,
                       public BodySink,
                       public WritableObserver,
                       public PoolWaiter,
                       public PoolConnectionUser,
                       private TimeoutEntry,
                       private RecordParserCallbacks {
 public:
  static constexpr size_t kSendHighWater = 64 * 1024;
  static constexpr size_t kClientHighWater = 256 * 1024;

  explicit Exchange(LoopPools& pools);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // `params`: encoded name-value pairs (cgi_params.h), copied before this returns.
  void start(Request& request, ResponseWriter& writer, PoolState& pool, std::string_view params);

  // InFlight
  void abort() noexcept override;
  // BodySink
  void onBodyData(std::string_view data) noexcept override;
  void onBodyEnd() noexcept override;
  // WritableObserver
  void onWritable() noexcept override;
  // PoolWaiter
  void onPoolConnection(PoolConnection& connection) noexcept override;
  void onPoolUnreachable(int err) noexcept override;
  // PoolConnectionUser
  void onPoolConnected() noexcept override;
  void onPoolConnectFailed(int err) noexcept override;
  void onPoolEvent(int status, int events) noexcept override;

 private:
  enum class State { kFree, kQueued, kConnecting, kActive };

  // TimeoutEntry
  void onTimeout() noexcept override;
  // RecordParserCallbacks
  void onStdout(std::string_view data) override;
  void onStderr(std::string_view data) override;
  void onEndRequest(uint32_t app_status, ProtocolStatus status) override;

  void acquire();
  void attach(PoolConnection& connection);
  void becomeActive();
  bool flushSend();
  void readPool();
  // False once the exchange ended (nothing of it may be touched afterwards).
  bool processRead(size_t n);
  bool deliverPending(bool final_piece);
  void complete(bool leftover);
  void onPoolBroken(const char* why);
  void fail(uint16_t status, const char* why);
  void pauseBody(bool paused);
  void updateWatch();
  void armTimer(uint64_t ms);
  void logStderrLine(std::string_view line);
  // Releases everything this request held except the writer; the object is free after.
  void teardown();
  void cleanupAfterAbort();
  template <typename F>
  bool callWriter(F&& f);

  LoopPools& pools_;
  State state_ = State::kFree;
  Request* request_ = nullptr;
  ResponseWriter* writer_ = nullptr;
  PoolState* pool_ = nullptr;
  PoolConnection* conn_ = nullptr;

  std::string send_;  // records not yet taken by the pool socket
  size_t send_pos_ = 0;
  bool stdin_ended_ = false;
  bool body_paused_ = false;
  bool client_paused_ = false;
  bool reused_ = false;
  bool retried_ = false;

  std::unique_ptr<char[]> read_buf_;
  RecordParser parser_;
  CgiHeadParser head_;
  bool got_stdout_ = false;
  bool head_done_ = false;
  bool head_sent_ = false;
  bool end_seen_ = false;
  ProtocolStatus protocol_status_ = ProtocolStatus::kRequestComplete;
  const char* head_error_ = nullptr;
  static constexpr size_t kMaxPending = 16;
  std::string_view pending_[kMaxPending];
  size_t pending_count_ = 0;

  bool calling_writer_ = false;
  bool in_parse_ = false;
  bool aborted_ = false;
  std::string stderr_line_;
};

}  // namespace scalws::worker::fastcgi
