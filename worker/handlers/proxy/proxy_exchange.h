// One request's trip through the proxy: chooses a server (UpstreamPool), takes a kept or
// new connection to it, sends the rebuilt head (request_head.h) and streams the body,
// parses the answer (ResponseParser) and streams it to the client through the
// ResponseWriter it keeps.
//
// Flow control both ways: the client body is paused (ResponseWriter::setBodyReadPaused)
// until a connection is ready and while more than kSendHighWater bytes wait to go
// upstream; reading from the upstream stops while the client has more than
// kClientHighWater bytes queued and resumes from the writer's writable notification. So
// memory per request is bounded whatever the body and response sizes.
//
// Retries: a failure before a byte of the request reached the upstream (connect refused or
// timed out, the first write failed) moves to another server (up to `retries` more); so
// does a failure before any answer byte once request bytes were sent, for idempotent
// methods whose bytes are all still here (a body up to kReplayLimit is kept for that). The
// same failure on a reused kept connection is retried once on a fresh connection to the
// same server without counting against it (it closed the connection while we reused it).
//
// Errors before the head reached the client: 503 when every server is down, 504 when the
// upstream timed out, 502 otherwise (unreachable, reset, a malformed or badly framed
// answer); each logged. After the head: the response is cut (abortResponse()). The
// client going away arrives as abort().
//
// Lifetime: owned by UpstreamPools and recycled; between start() and the end of its
// request it is the writer's InFlight and the request's BodySink. It never touches itself
// after handing the writer its last call (finish() may start the next request on the
// connection, which may take this very object from the free list).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "worker/handlers/proxy/proxy_route.h"
#include "worker/handlers/proxy/request_head.h"
#include "worker/handlers/proxy/response_parser.h"
#include "worker/handlers/proxy/upstream_connection.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/loop/timeout_queue.h"

namespace scalws::worker::proxy {

class UpstreamPools;
class UpstreamPool;

class ProxyExchange final : public InFlight,
                            public BodySink,
                            public WritableObserver,
                            public UpstreamConnectionUser,
                            private TimeoutEntry,
                            private ResponseParserCallbacks {
 public:
  static constexpr size_t kSendHighWater = 64 * 1024;
  static constexpr size_t kClientHighWater = 256 * 1024;
  static constexpr size_t kReplayLimit = 64 * 1024;
  static constexpr size_t kMaxResponseHead = 64 * 1024;

  explicit ProxyExchange(UpstreamPools& pools);
  ~ProxyExchange();
  ProxyExchange(const ProxyExchange&) = delete;
  ProxyExchange& operator=(const ProxyExchange&) = delete;

  void start(Request& request, ResponseWriter& writer, UpstreamPool& pool, const ProxyRoute& route);

  // InFlight
  void abort() noexcept override;
  // BodySink
  void onBodyData(std::string_view data) noexcept override;
  void onBodyEnd() noexcept override;
  // WritableObserver
  void onWritable() noexcept override;
  // UpstreamConnectionUser
  void onUpstreamConnected() noexcept override;
  void onUpstreamConnectFailed(int err) noexcept override;
  void onUpstreamEvent(int status, int events) noexcept override;

 private:
  enum class State {
    kFree,        // in the free list
    kConnecting,  // a new connection is connecting (or in its TLS handshake)
    kExchanging,  // request going out, answer coming in
  };
  enum class Body { kNone, kStreaming, kEnded };          // the client's request body
  enum class Reply { kAwaitingHead, kStreaming, kDone };  // the answer to the client
  enum class Failure { kConnect, kConnectTimeout, kBroken, kTimeout, kBadAnswer };

  // TimeoutEntry
  void onTimeout() noexcept override;
  // ResponseParserCallbacks
  void onResponseHead(const UpstreamResponseHead& head) override;
  void onResponseBody(std::string_view data) override;

  void attempt();
  void becomeActive();
  bool flushSend();
  void readUpstream();
  void onUpstreamEof();
  // False once the exchange ended or stopped reading (nothing of it may be touched
  // afterwards when it ended).
  bool processRead();
  bool deliver(bool complete);
  void complete(bool leftover);
  void upstreamFailed(Failure failure, const char* why);
  void fail(uint16_t status, const char* why);
  // The server and its time, for the access log (Request::upstream_address).
  void noteUpstream();
  void releaseConnection(bool reusable);
  void pauseBody(bool paused);
  void updateWatch();
  void updateTimer();
  // A tunnel's client bytes wait for the upstream's 101 (then the Tunnel takes them).
  bool sendPending() const {
    return head_pos_ < head_.size() || (!tunnel_ && body_pos_ < body_.size());
  }
  bool startTunnel(size_t consumed);
  bool requestSent() const { return body_state_ != Body::kStreaming && !sendPending(); }
  void teardown();
  void cleanupAfterAbort();
  template <typename F>
  bool callWriter(F&& f);

  UpstreamPools& pools_;
  State state_ = State::kFree;
  Request* request_ = nullptr;
  ResponseWriter* writer_ = nullptr;
  UpstreamPool* pool_ = nullptr;
  const ProxyRoute* route_ = nullptr;
  UpstreamConnection* conn_ = nullptr;
  int server_ = -1;
  uint64_t tried_ = 0;     // a bit per server index
  uint32_t attempts_ = 0;  // servers tried
  bool reused_ = false;    // conn_ came from the idle list
  bool fresh_retry_ = false;
  uint64_t sent_ns_ = 0;         // when the request started going upstream
  uint64_t bytes_received_ = 0;  // from the current connection
  uint64_t bytes_sent_ = 0;      // to the current connection

  // The request going upstream.
  RequestHeadOptions head_options_;
  bool tunnel_ = false;          // a WebSocket upgrade the route lets through
  char websocket_key_[25] = {};  // base64 of 16 bytes and its NUL
  std::string head_;
  size_t head_pos_ = 0;
  std::string body_;  // framed body bytes; all of them while replayable_
  size_t body_pos_ = 0;
  bool replayable_ = true;
  Body body_state_ = Body::kNone;
  bool body_paused_ = false;
  bool body_abandoned_ = false;  // the answer came first: the rest of the body is not sent

  // The answer coming back.
  ResponseParser parser_;
  std::unique_ptr<char[]> read_buf_;
  size_t read_cap_ = 0;
  size_t read_len_ = 0;  // bytes held: an incomplete head waiting for the rest
  Reply reply_ = Reply::kAwaitingHead;
  bool head_ready_ = false;  // a final head was parsed and not yet given to the writer
  UpstreamResponseHead head_info_;
  std::vector<HeaderField> out_headers_;
  char* body_out_ = nullptr;  // this read's body bytes, gathered in place in read_buf_
  size_t body_out_len_ = 0;
  bool upstream_keep_alive_ = false;
  bool client_paused_ = false;

  bool calling_writer_ = false;
  bool in_parse_ = false;
  bool aborted_ = false;
};

}  // namespace scalws::worker::proxy
