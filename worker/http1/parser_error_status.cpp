#include "worker/http1/parser_error_status.h"

#include <cstddef>
#include <string_view>

#include "worker/http1/request_codec.h"  // kMaxMethodLength

namespace scalws::worker::http1 {

TransferCodings classifyTransferEncoding(std::span<const HeaderField> headers) {
  bool chunked_last = false;
  bool others = false;
  int chunked_count = 0;
  for (const HeaderField& h : headers) {
    if (!equalsIgnoreCase(h.name, "transfer-encoding")) continue;
    std::string_view list = h.value;
    while (true) {
      size_t comma = list.find(',');
      std::string_view item = trimOws(list.substr(0, comma));
      if (!item.empty()) {
        bool chunked = equalsIgnoreCase(item, "chunked");
        chunked_count += chunked ? 1 : 0;
        others |= !chunked;
        chunked_last = chunked;
      }
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  if (!chunked_last || chunked_count != 1) return TransferCodings::kChunkedNotLast;
  return others ? TransferCodings::kChunkedLastWithOthers : TransferCodings::kChunkedOnly;
}

uint16_t statusForParserError(llhttp_errno_t err, const char* head_start, const char* error_pos,
                              const char* available_end, std::span<const HeaderField> headers) {
  switch (err) {
    case HPE_INVALID_METHOD: {
      // RFC 9110 §9.1: a well-formed but unknown method is "not implemented"; garbage
      // where the method should be is a bad request. llhttp stops at the first byte that
      // no method it knows continues with, so the rest of the token is looked at here, as
      // far as it has arrived: the answer must not depend on how the bytes were split.
      if (head_start == nullptr || head_start > error_pos) return 400;
      const char* p = head_start;
      while (p < available_end && (*p == '\r' || *p == '\n')) ++p;
      const char* method = p;
      for (; p < available_end; ++p) {
        if (*p == ' ') return p == method ? 400 : 501;
        if (!isTokenChar(static_cast<unsigned char>(*p))) return 400;
        // No registered method is near this long (the longest, UPDATEREDIRECTREF, has
        // 17 bytes): a token this long is not a method a client means but junk or a
        // probe of the parser, and it gets the plain 400 of an invalid request line.
        if (p - method >= static_cast<ptrdiff_t>(kMaxMethodLength)) return 400;
      }
      return 0;  // the token goes on: undecided until it ends
    }
    case HPE_INVALID_VERSION: {
      // RFC 9112 §2.3: HTTP-version = "HTTP/" DIGIT "." DIGIT. A well-formed version we
      // do not speak (HTTP/3.0, HTTP/0.9 as llhttp sees them) is 505 (RFC 9110 §15.6.6);
      // anything else, "HTTP/01.1" or "HTTP/1.1x" included, is 400. HTTP/1.x minors
      // llhttp refuses (1.3) stay 400. llhttp stops at the first byte it refuses; the
      // version's remaining bytes are judged as far as they have arrived.
      if (head_start == nullptr || error_pos < head_start) return 400;
      std::string_view line(head_start, static_cast<size_t>(error_pos - head_start) + 1);
      size_t at = line.rfind(" HTTP/");
      if (at == std::string_view::npos) return 400;
      std::string_view version(head_start + at + 6,
                               static_cast<size_t>(available_end - head_start) - at - 6);
      constexpr std::string_view kShape = "0.0\r";  // digit, dot, digit, end of line
      for (size_t i = 0; i < kShape.size(); ++i) {
        if (i == version.size()) return 0;  // undecided until the line ends
        char c = version[i];
        bool fits = kShape[i] == '0' ? (c >= '0' && c <= '9') : c == kShape[i];
        if (!fits) return 400;
      }
      return version[0] != '1' ? 505 : 400;
    }
    case HPE_INVALID_TRANSFER_ENCODING:
      return classifyTransferEncoding(headers) == TransferCodings::kChunkedLastWithOthers ? 501
                                                                                          : 400;
    default:
      return 400;
  }
}

}  // namespace scalws::worker::http1
