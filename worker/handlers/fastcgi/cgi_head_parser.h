// Parses the CGI response header block at the start of a FastCGI STDOUT stream
// (RFC 3875 §6): "Name: value" lines up to an empty line, LF or CRLF ended. Bytes are fed as
// they arrive; the block is copied (it is small and may span records), the body is not.
//
// After kDone: status() is the Status header's code, 302 for a Location without Status
// (RFC 3875 §6.2.3), else 200; headers() are the ones to pass on, as views into the parser
// that stay valid until reset(). Status, and what the writer owns (Content-Length,
// Transfer-Encoding, Connection, Keep-Alive, Date, Server), are not passed on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "worker/http/header_field.h"

namespace scalws::worker::fastcgi {

class CgiHeadParser {
 public:
  enum class Outcome { kNeedMore, kDone, kError };
  struct Result {
    Outcome outcome = Outcome::kNeedMore;
    size_t consumed = 0;  // of the bytes given; the rest (kDone) is body
    const char* error = "";
  };

  explicit CgiHeadParser(size_t max_head = 64 * 1024) : max_head_(max_head) {}

  Result feed(std::string_view data);
  void reset();

  uint16_t status() const { return status_; }
  std::span<const HeaderField> headers() const { return headers_; }

 private:
  Result parseBlock(size_t block_end);

  size_t max_head_;
  std::string block_;
  std::vector<HeaderField> headers_;
  uint16_t status_ = 200;
};

}  // namespace scalws::worker::fastcgi
