// One HTTP/1.1 client connection: reads into a pooled buffer, feeds the RequestCodec,
// hands each request head to the RequestDispatcher, and is the HttpStream (so the
// ResponseWriter) the handler answers through. Responses leave strictly in request order;
// pipelined requests already in the buffer are parsed only after the previous response
// finished.
//
// Lifetime: owned by its WorkerLoop; it is destroyed from the closed callback of its socket's
// watch (SocketConnection), on a later turn, never inside one of its own callbacks. An asynchronous
// handler that still holds the writer when the connection dies gets InFlight::abort() first.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>

#include "common/config/site_config.h"
#include "worker/http/http_stream.h"
#include "worker/http1/request_codec.h"
#include "worker/loop/socket_connection.h"
#include "worker/loop/timeout_queue.h"
#include "worker/net/byte_queue.h"
#include "worker/net/transport.h"

namespace scalws::worker {
class WorkerLoop;
class ConfigSnapshot;
}  // namespace scalws::worker

namespace scalws::worker::http1 {

class Connection final : public SocketConnection<Connection>,
                         private RequestCodecCallbacks,
                         public HttpStream {
 public:
  // Takes the transport (and with it the socket) of an accepted connection.
  Connection(WorkerLoop& loop, std::unique_ptr<Transport> transport, const PeerInfo& peer);
  ~Connection() override;

  // False when the socket cannot be watched; the caller closes the fd and frees this.
  bool start();
  void beginShutdown() override;
  void forceClose() override;

  // ResponseWriter
  void sendHead(const ResponseHead& head) noexcept override;
  void sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept override;
  void sendBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void sendFile(const FileSlice& file) noexcept override;
  void sendBodyRetained(std::string_view data, RefCounted* owner) noexcept override;
  void finish() noexcept override;
  size_t queuedBytes() const noexcept override { return out_.pendingBytes(); }
  void setBodyReadPaused(bool paused) noexcept override;
  void abortResponse() noexcept override;

 private:
  // The connection's one state; moveTo() holds the table of transitions. The response's
  // own progress (started, finished) is HttpStream's.
  //
  //   kIdle ─bytes─► kReadingHead ─head─► kReadingBody ◄─pause/unpause─► kBodyPaused
  //     ▲                  │                   │                             │
  //     │                  └─codec error───────┴──body complete─► kRequestDone ◄┘
  //     └──── response finished, keep-alive ─────────────────────────┘   │  ▲
  //                                  response finished, close ─► kLingering │
  //   kRequestDone ─101 to an Upgrade─► kTunnel ◄─pause/unpause─► kTunnelPaused
  //                                        └──── finish ───► kRequestDone
  //   any ─close()─► kClosed
  enum class State : uint8_t {
    kIdle,          // between requests, no bytes of the next one yet
    kReadingHead,   // part of a head has arrived
    kReadingBody,   // head dispatched; its body is still arriving
    kBodyPaused,    // the handler asked for no more body for now (setBodyReadPaused)
    kRequestDone,   // the whole request is in (or will not be read): the response ends it
    kTunnel,        // after a 101: bytes both ways, unframed, between client and handler
    kTunnelPaused,  // the handler asked for no more client bytes for now
    kLingering,     // final response sent; closing, or write side shut and draining the client
    kClosed,        // watch released; waiting for the closed callback
  };
  // How the response's body is framed (RFC 9112 §6): none (HEAD, 204, 304), as is
  // (Content-Length or close-delimited), or chunked.
  enum class BodyFraming : uint8_t { kNone, kPlain, kChunked };

  // RequestCodecCallbacks
  bool onRequestHead(Request& request) override;
  void onRequestBody(std::string_view data) override;
  void onRequestComplete() override;
  // TimeoutEntry
  void onTimeout() noexcept override;
  // HttpStream
  void onExpectContinue(bool will_read) noexcept override;
  void beginResumedDispatch() noexcept override;
  void endResumedDispatch() noexcept override;

  static CodecLimits limitsFor(const common::config::ServerConfig& server);
  friend class SocketConnection<Connection>;
  void onSocketEvent(int status, int events);

  void onReadable();
  void onWritable();
  void process();
  void onCodecError(uint16_t status, const char* reason);
  void onResponseDone();
  void finishRequest();
  void flushOutput();
  void afterIdle();
  void startLingering();
  // At a close after a response: true when the client has nothing more on its way that a
  // close could turn into a reset of our response.
  bool clientDoneSending();
  void close();
  void updatePoll();
  void armTimer(Timer timer);
  bool ensureReadSpace();
  void releaseReadBuffer();
  // One read into the buffer's free room. Above 0: the bytes, appended and counted; 0:
  // the client finished sending; below 0: nothing to read now, or an error closed us.
  ssize_t readIntoBuffer();
  bool shouldRead() const;
  void adoptCurrentSnapshot();
  void moveTo(State next);
  bool inRequest() const {
    return state_ == State::kReadingBody || state_ == State::kBodyPaused ||
           state_ == State::kRequestDone || tunnel();
  }
  bool readingBody() const { return state_ == State::kReadingBody || state_ == State::kBodyPaused; }
  bool tunnel() const { return state_ == State::kTunnel || state_ == State::kTunnelPaused; }
  // In a tunnel: hands the client's bytes to the handler as they come.
  void readTunnel();
  void deliverTunnelBytes();

  State state_ = State::kIdle;
  std::shared_ptr<const ConfigSnapshot> snapshot_;

  // Reading.
  std::unique_ptr<char[]> read_buf_;
  size_t read_cap_ = 0;
  size_t read_len_ = 0;
  size_t parse_pos_ = 0;
  size_t head_start_ = 0;  // where the current message begins in read_buf_
  size_t body_start_ = 0;  // where the current request's body bytes begin in read_buf_
  RequestCodec codec_;

  // The request in progress (the response's own state is HttpStream's).
  BodyFraming framing_ = BodyFraming::kPlain;
  bool in_dispatch_ = false;    // inside process(): output is flushed once it returns
  bool resumed_outer_ = false;  // in_dispatch_ when a resumed dispatch began
  // Why the connection will not be reused: decided per request (Connection: close, the
  // request limit, an error), by the loop (shutdown), or by the client (it half-closed).
  bool close_after_response_ = false;
  bool shutting_down_ = false;
  bool read_eof_ = false;
  // The last request was read to its end (head and body); false for a request cut short by
  // an error or the response, and for a tunnel, whose client may still be sending.
  bool request_read_whole_ = false;
  // The last read of a plain socket took less than it asked for: the socket was empty then.
  bool last_read_emptied_socket_ = false;
  bool client_closes_ = false;  // the request said Connection: close (or was HTTP/1.0)
  uint32_t requests_served_ = 0;

  ByteQueue::Mark response_mark_;  // where the current response starts in out_
};

}  // namespace scalws::worker::http1
