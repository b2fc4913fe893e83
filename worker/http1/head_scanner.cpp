#include "worker/http1/head_scanner.h"

namespace scalws::worker::http1 {

HeadScanner::Result HeadScanner::feed(const char* data, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    const unsigned char c = static_cast<unsigned char>(data[i]);
    if (after_cr_) {
      if (c != '\n') return {Verdict::kBareCr, i};
      after_cr_ = false;
      switch (line_) {
        case Line::kLeadingEmpty:  // RFC 9112 §2.2: empty lines before the request line
          break;
        case Line::kRequestLine:
        case Line::kHeader:
          line_ = Line::kHeaderStart;
          break;
        case Line::kHeaderStart:  // an empty line ends the head
          return {Verdict::kHeadComplete, i + 1};
      }
      continue;
    }
    if (c == '\r') {
      after_cr_ = true;
      continue;
    }
    if (c == '\n') return {Verdict::kBareLf, i};
    if ((c < 0x20 && c != '\t') || c == 0x7f) return {Verdict::kControlChar, i};
    switch (line_) {
      case Line::kLeadingEmpty:
        line_ = Line::kRequestLine;
        break;
      case Line::kHeaderStart:
        // RFC 9112 §5.2: obs-fold is rejected; a line may not start with whitespace.
        if (c == ' ' || c == '\t') return {Verdict::kObsFold, i};
        line_ = Line::kHeader;
        break;
      case Line::kRequestLine:
      case Line::kHeader:
        break;
    }
  }
  return {Verdict::kNeedMore, len};
}

}  // namespace scalws::worker::http1
