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
//
// States (State below; moveTo() is the one place the state changes, and does what entering
// a state takes: timers, the poll, the writer's notifications):
//
//   kFree → kQueued → kConnecting → kAwaitingHead → kHeadParsed → kStreaming ⇄ kClientBlocked
//     (kQueued and kConnecting are skipped when a connection is at hand)
//   kAwaitingHead → kQueued | kConnecting | kAwaitingHead   a dead kept connection, retried once
//   any → kFree                answered, failed, or the client went away
//   any → kAborted → kFree     the client went away during a writer call or the record
//                              parser: cleanup once they returned
//
// The request body (STDIN) goes its own way beside these: stdin_ended_ says whether its
// end was sent on. It comes from the client, or, for a body of unknown length collected
// first, from a BodySpool that replays it with the same pause/resume as the client's.
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

class BodySpool;
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
  // `spool`: the body, when it was collected first; the exchange releases it at its end.
  void start(Request& request, ResponseWriter& writer, PoolState& pool, std::string_view params,
             BodySpool* spool = nullptr);

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
  enum class State : uint8_t {
    kFree,           // in LoopPools' free list
    kQueued,         // waiting for a pool connection (queue timeout armed)
    kConnecting,     // a new connection is connecting (pool timeout armed)
    kAwaitingHead,   // connected: records go out, STDOUT is read until the CGI head is whole
    kHeadParsed,     // the head is whole, not yet given to the writer (within one read)
    kStreaming,      // head sent; STDOUT goes on to the writer as it arrives
    kClientBlocked,  // streaming, but the client's queue is full: the pool is not read
    kAborted,        // the client went away while we were on the stack; cleanup pending
  };

  // The one place state_ changes: checks the transition and does what entering `next`
  // takes.
  void moveTo(State next);
  // A pool connection is lent to us and usable (records go out, answers come in).
  bool connected() const {
    return state_ == State::kAwaitingHead || state_ == State::kHeadParsed ||
           state_ == State::kStreaming || state_ == State::kClientBlocked;
  }
  bool headSent() const { return state_ == State::kStreaming || state_ == State::kClientBlocked; }

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
  // Asks the writer to hold back (or go on reading) the client's body; the writer keeps
  // that state and ignores a repeated request.
  void pauseBody(bool paused);
  void updateWatch();
  void armTimer(uint64_t ms);
  void logStderrLine(std::string_view line);
  // Releases everything this request held except the writer; the object is free after.
  void teardown();
  void cleanupAfterAbort();
  // Runs a writer call, which may abort us from inside; false when it did (then nothing of
  // the exchange may be used any more).
  template <typename F>
  bool callWriter(F&& f);

  LoopPools& pools_;
  State state_ = State::kFree;
  Request* request_ = nullptr;
  ResponseWriter* writer_ = nullptr;
  PoolState* pool_ = nullptr;
  PoolConnection* conn_ = nullptr;
  BodySpool* spool_ = nullptr;

  std::string send_;  // records not yet taken by the pool socket
  size_t send_pos_ = 0;
  bool stdin_ended_ = false;  // the request body's end (or the absence of a body) was sent on
  uint8_t attempts_ = 0;      // pool connections tried: a dead kept one is retried once

  std::unique_ptr<char[]> read_buf_;
  RecordParser parser_;
  CgiHeadParser head_;
  uint64_t stdout_bytes_ = 0;  // of the answer, from this connection
  ProtocolStatus protocol_status_ = ProtocolStatus::kRequestComplete;
  const char* head_error_ = nullptr;
  static constexpr size_t kMaxPending = 16;
  std::string_view pending_[kMaxPending];
  size_t pending_count_ = 0;

  uint8_t busy_ = 0;  // writer calls and parser runs on the stack: abort() must wait for them
  std::string stderr_line_;
};

}  // namespace scalws::worker::fastcgi
