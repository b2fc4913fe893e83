// Strict line-ending and character check of an HTTP/1 request head, fed incrementally.
//
// Debian 12's llhttp 8.1.0 predates upstream's fixes for bare-CR delimiters
// (CVE-2023-30589) and accepts obs-fold, NUL in values and whitespace-led lines, so every
// byte of a request head passes through here before llhttp sees it: CR only as part of
// CRLF, LF only after CR, no NUL or other control characters but HTAB, no line folding.
// The scanner finds the end of the head (the empty line) itself and stops there; what
// follows is body and is not its business.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scalws::worker::http1 {

class HeadScanner {
 public:
  enum class Verdict { kNeedMore, kHeadComplete, kBareCr, kBareLf, kControlChar, kObsFold };

  struct Result {
    Verdict verdict = Verdict::kNeedMore;
    size_t consumed = 0;  // bytes of head scanned in this call
  };

  Result feed(const char* data, size_t len);
  void reset() { *this = HeadScanner(); }

 private:
  enum class Line : uint8_t { kLeadingEmpty, kRequestLine, kHeaderStart, kHeader };
  Line line_ = Line::kLeadingEmpty;
  bool after_cr_ = false;
};

}  // namespace scalws::worker::http1
