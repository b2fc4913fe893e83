// The HTTP/1.1 request codec: bytes in, Request views and callbacks out. It never touches a
// socket; the connection feeds it what it read and acts on the callbacks.
//
// Views in the Request point into the bytes given to dispatch(). The caller keeps a
// message's bytes in one contiguous buffer until the response is done; if it must move
// them while a head is incomplete it calls rebase(). The codec pauses after each complete
// message so responses stay in order; resume() starts the next one.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "worker/http/request.h"
#include "worker/http1/chunked_body_scanner.h"
#include "worker/http1/head_scanner.h"

namespace scalws::worker::http1 {

// RFC 9112 §3 bounds nothing, but no registered method comes close to this.
inline constexpr size_t kMaxMethodLength = 32;

struct CodecLimits {
  size_t max_request_line = 8 * 1024;
  size_t max_header_size = 32 * 1024;
  uint32_t max_headers = 100;
  size_t max_chunk_extension = 1024;
};

class RequestCodecCallbacks {
 public:
  // A valid head. Return false to stop parsing here (the connection will close).
  virtual bool onRequestHead(Request& request) = 0;
  virtual void onRequestBody(std::string_view data) = 0;
  virtual void onRequestComplete() = 0;

 protected:
  ~RequestCodecCallbacks() = default;
};

class RequestCodec {
 public:
  enum class Outcome {
    kNeedMore,         // everything consumed, the message is not complete yet
    kMessageComplete,  // paused after a message; call resume() before the next dispatch
    kStopped,          // onRequestHead returned false
    kError,            // error_status says what to answer; the connection must close
  };
  struct DispatchResult {
    Outcome outcome = Outcome::kNeedMore;
    size_t consumed = 0;
    uint16_t error_status = 0;
    const char* error_reason = "";
  };
  enum class Phase { kIdle, kHead, kBody };

  RequestCodec(const CodecLimits& limits, RequestCodecCallbacks& callbacks, Request& request);
  RequestCodec(const RequestCodec&) = delete;
  RequestCodec& operator=(const RequestCodec&) = delete;

  DispatchResult dispatch(const char* data, size_t len);
  void resume();
  void rebase(const char* old_base, const char* new_base);
  // The peer closed its side; returns kError when a message was cut short.
  DispatchResult finishEof();

  Phase phase() const { return phase_; }
  // Set from onRequestHead (the route decides): 413 past it.
  void setBodyLimit(uint64_t max_body) { body_limit_ = max_body; }
  void setLimits(const CodecLimits& limits) { limits_ = limits; }

 private:
  static int onMessageBegin(llhttp_t* p);
  static int onMethod(llhttp_t* p, const char* at, size_t len);
  static int onUrl(llhttp_t* p, const char* at, size_t len);
  static int onHeaderField(llhttp_t* p, const char* at, size_t len);
  static int onHeaderValue(llhttp_t* p, const char* at, size_t len);
  static int onHeadersComplete(llhttp_t* p);
  static int onBody(llhttp_t* p, const char* at, size_t len);
  static int onChunkHeader(llhttp_t* p);
  static int onChunkExtension(llhttp_t* p, const char* at, size_t len);
  static int onMessageComplete(llhttp_t* p);

  // llhttp over data[from, to): false when `result` is final for this call (paused,
  // stopped, an error, or a refused request line whose status is still undecided).
  bool execute(const char* data, size_t from, size_t to, DispatchResult& result);
  DispatchResult& errorResult(DispatchResult& result) const;
  int fail(uint16_t status, const char* reason);
  int completeHead();
  // Turns llhttp's refusal into a status once the bytes up to `available_end` decide it.
  void decideParserError(const char* available_end);
  static void extend(std::string_view& span, const char* at, size_t len);

  CodecLimits limits_;
  RequestCodecCallbacks& callbacks_;
  Request& request_;
  llhttp_settings_t settings_{};
  llhttp_t parser_{};
  HeadScanner scanner_;
  ChunkedBodyScanner chunked_scanner_;
  Phase phase_ = Phase::kIdle;
  bool scanning_head_ = true;
  bool chunked_ = false;  // the current message's body is chunked (known after its head)
  bool last_was_value_ = false;
  bool stopped_ = false;
  uint16_t error_status_ = 0;
  const char* error_reason_ = "";
  // llhttp refused the request line but the status (400, 501, 505) needs more bytes.
  llhttp_errno_t undecided_error_ = HPE_OK;
  const char* error_pos_ = nullptr;
  const char* head_start_ = nullptr;  // first byte of the message in the caller's buffer
  std::string_view method_;
  std::string_view url_;
  std::vector<HeaderField> headers_;
  size_t header_bytes_ = 0;
  uint64_t body_limit_ = UINT64_MAX;
  uint64_t body_received_ = 0;
  size_t chunk_extension_bytes_ = 0;
};

}  // namespace scalws::worker::http1
