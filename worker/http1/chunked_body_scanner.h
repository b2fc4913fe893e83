// Strict framing check of a chunked request body (RFC 9112 §7.1), fed incrementally.
//
// Debian 12's llhttp 8.1.0 is lax after the head: it takes any two bytes as the CRLF that
// ends a chunk's data, accepts "0\r\n\rX" as the end of the body (so "X..." becomes the
// next request: request smuggling, the CVE-2025-23167 class) and obs-fold in trailers. The
// codec runs every byte of a chunked body through this scanner before llhttp sees it, with
// the head's strictness: CR only in CRLF, no control characters, no folded or
// whitespace-led trailer lines, field names that are tokens. The scanner finds the end of
// the body itself; what follows is the next request and not its business.
//
// Chunk data is skipped without being looked at; chunk extensions are checked for bytes
// only (their length limit and grammar stay with the codec and llhttp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace scalws::worker::http1 {

class ChunkedBodyScanner {
 public:
  enum class Verdict { kNeedMore, kComplete, kError };

  struct Result {
    Verdict verdict = Verdict::kNeedMore;
    size_t consumed = 0;     // kComplete: bytes up to and including the final LF
    const char* error = "";  // kError: what was wrong, for the log
  };

  Result feed(const char* data, size_t len);
  void reset() { *this = ChunkedBodyScanner(); }

 private:
  enum class State : uint8_t {
    kSize,          // hex digits of a chunk size
    kExtension,     // after the size: ";name=value" bytes up to CR
    kSizeLf,        // CR seen at the end of the size line
    kData,          // remaining_ bytes of chunk data
    kDataCr,        // the CR after chunk data
    kDataLf,        // the LF after chunk data
    kTrailerStart,  // first byte of a trailer line, or CR of the final empty line
    kTrailerName,   // field name up to ':'
    kTrailerValue,  // field value up to CR
    kTrailerLf,     // CR seen at the end of a trailer line
    kFinalLf,       // CR of the final empty line seen
  };

  Result error(size_t at, const char* why) { return {Verdict::kError, at, why}; }

  State state_ = State::kSize;
  uint8_t size_digits_ = 0;
  uint64_t size_ = 0;
  uint64_t remaining_ = 0;
};

}  // namespace scalws::worker::http1
