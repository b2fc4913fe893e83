#include "worker/http1/head_scanner.h"

#include <emmintrin.h>

#include <array>

namespace scalws::worker::http1 {
namespace {

// Bytes that change nothing in the middle of a line: everything but CR, LF and the
// control characters (HTAB is allowed). The scan skips runs of them in a tight loop.
constexpr std::array<bool, 256> makePlainTable() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = (c >= 0x20 && c != 0x7f) || c == '\t';
  return t;
}
constexpr std::array<bool, 256> kPlain = makePlainTable();

// Skips plain bytes 16 at a time: a block is plain when no byte is below 0x20 or 0x7f.
// (HTAB counts as not plain here and takes the byte loop, which accepts it.)
size_t skipPlain(const unsigned char* p, size_t i, size_t len) {
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i del = _mm_set1_epi8(0x7f);
  while (i + 16 <= len) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i at_least_space = _mm_cmpeq_epi8(_mm_max_epu8(x, space), x);
    __m128i special =
        _mm_or_si128(_mm_andnot_si128(at_least_space, _mm_set1_epi8(-1)), _mm_cmpeq_epi8(x, del));
    int mask = _mm_movemask_epi8(special);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    i += 16;
  }
  while (i < len && kPlain[p[i]]) ++i;
  return i;
}

}  // namespace

HeadScanner::Result HeadScanner::feed(const char* data, size_t len) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  for (size_t i = 0; i < len; ++i) {
    if (!after_cr_ && (line_ == Line::kRequestLine || line_ == Line::kHeader)) {
      i = skipPlain(bytes, i, len);
      if (i == len) break;
    }
    const unsigned char c = bytes[i];
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
