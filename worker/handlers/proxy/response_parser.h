// The upstream response codec: bytes an upstream sent in, a head and body pieces out. It
// never touches a socket; the exchange feeds it what it read and acts on the callbacks.
//
// Strict on purpose: the proxy re-frames every response for its client, so anything whose
// framing could be read two ways is refused, not guessed at (RFC 9112 §6.3; the request
// smuggling family lives in such guesses):
// - lines end in CRLF only (no bare CR or LF), no NUL or other control characters but
//   HTAB in the head, no obs-fold, no whitespace between a field name and its colon;
// - Content-Length and Transfer-Encoding together, Content-Lengths that differ, one that
//   is not a plain decimal number, a transfer coding other than a lone "chunked",
//   Transfer-Encoding in an HTTP/1.0 response or on a 1xx/204/304, a non-zero
//   Content-Length on a 204 or any framing field on a 1xx: all errors;
// - a chunk size that is not hexadecimal or does not fit 64 bits, data not followed by
//   CRLF, over-long chunk extensions or trailers: errors.
// A response to HEAD, and a 204 or 304, ends with its head whatever its fields say (a
// Content-Length there describes the GET's body); bytes after it are the caller's to judge.
//
// Views: the head is reported once it is complete in the bytes given; until then
// dispatch() consumes nothing and the caller presents the same bytes again with more
// appended (the parser remembers how far it checked). Views passed to callbacks point into
// the caller's bytes and are valid during the call only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "worker/http/field_name.h"
#include "worker/http/header_field.h"

namespace scalws::worker::proxy {

enum class BodyFraming { kNone, kContentLength, kChunked, kUntilClose };

struct UpstreamResponseHead {
  uint16_t status = 0;
  bool http10 = false;
  std::span<const HeaderField> headers;  // names and values as sent, values trimmed
  // classifyFieldName of each of `headers`, in order, when the parser filled it (a head
  // built elsewhere may leave it empty): the filters need not recognise a name again.
  std::span<const FieldName> names;
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;  // the field's value when one was sent (also on HEAD/304)
  bool has_content_length = false;
  bool keep_alive = false;  // the connection may carry another request afterwards
};

class ResponseParserCallbacks {
 public:
  // A complete head: an interim 1xx (the final head follows) or the final one.
  virtual void onResponseHead(const UpstreamResponseHead& head) = 0;
  virtual void onResponseBody(std::string_view data) = 0;

 protected:
  ~ResponseParserCallbacks() = default;
};

struct ResponseLimits {
  size_t max_head = 64 * 1024;  // status line and header section
  uint32_t max_headers = 100;
  size_t max_chunk_line = 4096;  // size and extensions
  size_t max_trailers = 16 * 1024;
};

class ResponseParser {
 public:
  enum class Outcome {
    kNeedMore,  // everything given was used (or, in a head, kept for the next call)
    kComplete,  // the response ended; bytes after `consumed` are not part of it
    kUpgrade,   // a 101 head: bytes after `consumed` belong to the upgraded protocol
    kError,     // `error` says why; the connection cannot be used any more
  };
  struct Result {
    Outcome outcome = Outcome::kNeedMore;
    size_t consumed = 0;
    const char* error = "";
  };

  explicit ResponseParser(ResponseParserCallbacks& callbacks, ResponseLimits limits = {});

  // Ready for the response to one request; `head_request`: it answers HEAD.
  void reset(bool head_request);
  Result dispatch(const char* data, size_t len);
  // The upstream closed its sending side: ends a body delimited by the close, else an
  // error (the response was cut short).
  Result finishEof();

  bool inHead() const { return phase_ == Phase::kHead; }
  // True once a final (non-1xx) head was reported.
  bool headDone() const { return final_head_; }

 private:
  enum class Phase { kHead, kBody, kDone, kUpgraded, kError };
  enum class Chunk {
    kSize,
    kSizeSpace,
    kExtension,
    kSizeLf,
    kData,
    kDataCr,
    kDataLf,
    kTrailerStart,
    kTrailerName,
    kTrailerValue,
    kTrailerLf,
    kFinalLf,
  };

  // Finds the end of the head from scanned_ on, checking line endings and characters.
  // 0 while incomplete; the head's length (through the empty line) when found.
  size_t scanHead(const char* data, size_t len);
  // Parses a complete head of `len` bytes; false with error_ set.
  bool parseHead(const char* data, size_t len);
  bool decideFraming(UpstreamResponseHead& head);
  size_t feedBody(const char* data, size_t len);
  size_t feedChunked(const char* data, size_t len);
  Result fail(const char* why, size_t consumed);

  ResponseParserCallbacks& callbacks_;
  ResponseLimits limits_;
  std::vector<HeaderField> headers_;
  std::vector<FieldName> names_;  // parallel to headers_
  Phase phase_ = Phase::kHead;
  bool head_request_ = false;
  bool final_head_ = false;
  size_t scanned_ = 0;  // head bytes already checked
  bool scan_after_cr_ = false;
  bool scan_line_empty_ = true;
  BodyFraming framing_ = BodyFraming::kNone;
  uint64_t remaining_ = 0;  // kContentLength, or the current chunk's data
  Chunk chunk_ = Chunk::kSize;
  uint32_t size_digits_ = 0;
  size_t chunk_line_ = 0;
  size_t trailer_line_ = 0;
  size_t trailer_bytes_ = 0;
  const char* error_ = "";
};

}  // namespace scalws::worker::proxy
