#include "worker/http1/chunked_body_scanner.h"

#include <algorithm>

#include "worker/http/header_field.h"

namespace scalws::worker::http1 {
namespace {

// 16 hex digits fill 64 bits; llhttp refuses sizes that overflow too, this only keeps the
// scanner's own count honest.
constexpr uint8_t kMaxSizeDigits = 16;

int hexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 9110 §5.5: field-vchar = VCHAR / obs-text, with SP and HTAB between them.
bool isFieldValueByte(unsigned char c) {
  return (c >= 0x20 && c != 0x7f) || c == '\t';
}

}  // namespace

ChunkedBodyScanner::Result ChunkedBodyScanner::feed(const char* data, size_t len) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  size_t i = 0;
  while (i < len) {
    if (state_ == State::kData) {
      uint64_t take = std::min<uint64_t>(remaining_, len - i);
      remaining_ -= take;
      i += static_cast<size_t>(take);
      if (remaining_ == 0) state_ = State::kDataCr;
      continue;
    }
    const unsigned char c = bytes[i];
    switch (state_) {
      case State::kSize: {
        int v = hexValue(c);
        if (v >= 0) {
          if (++size_digits_ > kMaxSizeDigits) return error(i, "chunk size too long");
          size_ = (size_ << 4) | static_cast<uint64_t>(v);
          break;
        }
        if (size_digits_ == 0) return error(i, "chunk size is not hexadecimal");
        // RFC 9112 §7.1.1: BWS before ";" is tolerated; anything else ends the size.
        if (c == ';' || c == ' ' || c == '\t') {
          state_ = State::kExtension;
        } else if (c == '\r') {
          state_ = State::kSizeLf;
        } else {
          return error(i, "invalid byte after a chunk size");
        }
        break;
      }
      case State::kExtension:
        if (c == '\r') {
          state_ = State::kSizeLf;
        } else if (!isFieldValueByte(c)) {
          return error(i, "control character in a chunk extension");
        }
        break;
      case State::kSizeLf:
        if (c != '\n') return error(i, "bare CR in a chunk size line");
        if (size_ == 0) {
          state_ = State::kTrailerStart;  // the last chunk: trailers or the final CRLF follow
        } else {
          remaining_ = size_;
          state_ = State::kData;
        }
        break;
      case State::kDataCr:
        if (c != '\r') return error(i, "chunk data not followed by CRLF");
        state_ = State::kDataLf;
        break;
      case State::kDataLf:
        if (c != '\n') return error(i, "chunk data not followed by CRLF");
        state_ = State::kSize;
        size_ = 0;
        size_digits_ = 0;
        break;
      case State::kTrailerStart:
        if (c == '\r') {
          state_ = State::kFinalLf;
        } else if (c == ' ' || c == '\t') {
          // RFC 9112 §5.2: obs-fold (or whitespace before the first field) is rejected.
          return error(i, "folded or whitespace-led trailer line");
        } else if (isTokenChar(c)) {
          state_ = State::kTrailerName;
        } else {
          return error(i, "invalid trailer field name");
        }
        break;
      case State::kTrailerName:
        if (c == ':') {
          state_ = State::kTrailerValue;
        } else if (!isTokenChar(c)) {
          // Includes whitespace before the colon (RFC 9112 §5.1) and a bare CR or LF.
          return error(i, "invalid trailer field name");
        }
        break;
      case State::kTrailerValue:
        if (c == '\r') {
          state_ = State::kTrailerLf;
        } else if (!isFieldValueByte(c)) {
          return error(i, "control character in a trailer field");
        }
        break;
      case State::kTrailerLf:
        if (c != '\n') return error(i, "bare CR in a trailer field");
        state_ = State::kTrailerStart;
        break;
      case State::kFinalLf:
        if (c != '\n') return error(i, "bare CR at the end of a chunked body");
        return {Verdict::kComplete, i + 1, ""};
      case State::kData:
        break;  // handled above
    }
    ++i;
  }
  return {Verdict::kNeedMore, len, ""};
}

}  // namespace scalws::worker::http1
