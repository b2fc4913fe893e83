#include "worker/http1/response_serializer.h"

#include <cstring>

#include "worker/http/status_text.h"

namespace scalws::worker::http1 {
namespace {

char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace

void appendResponseHead(ByteQueue& out, const ResponseHead& head, const HeadFraming& framing,
                        std::string_view date_line, std::string_view server_line) {
  std::string_view reason = statusReason(head.status);
  size_t size = 9 + 4 + reason.size() + 2 + date_line.size() + server_line.size() + 2;
  for (const HeaderField& h : head.headers) size += h.name.size() + h.value.size() + 4;
  size += 40 + 28 + 24;  // framing and connection lines at their longest

  char* const start = out.reserve(size);
  char* p = put(start, "HTTP/1.1 ");
  uint16_t s = head.status;
  *p++ = static_cast<char>('0' + s / 100);
  *p++ = static_cast<char>('0' + s / 10 % 10);
  *p++ = static_cast<char>('0' + s % 10);
  *p++ = ' ';
  p = put(p, reason);
  p = put(p, "\r\n");
  p = put(p, date_line);
  p = put(p, server_line);
  for (const HeaderField& h : head.headers) {
    p = put(p, h.name);
    p = put(p, ": ");
    p = put(p, h.value);
    p = put(p, "\r\n");
  }
  switch (framing.framing) {
    case Framing::kContentLength:
      p = put(p, "Content-Length: ");
      p += formatDecimal(framing.content_length, p);
      p = put(p, "\r\n");
      break;
    case Framing::kChunked:
      p = put(p, "Transfer-Encoding: chunked\r\n");
      break;
    case Framing::kNone:
    case Framing::kCloseDelimited:
      break;
  }
  if (framing.close) {
    p = put(p, "Connection: close\r\n");
  } else if (framing.keep_alive_header) {
    p = put(p, "Connection: keep-alive\r\n");
  }
  p = put(p, "\r\n");
  out.commit(static_cast<size_t>(p - start));
}

void appendChunkHeader(ByteQueue& out, uint64_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[20];
  size_t n = 0;
  char tmp[16];
  size_t t = 0;
  do {
    tmp[t++] = kHex[size & 0xf];
    size >>= 4;
  } while (size != 0);
  while (t > 0) buf[n++] = tmp[--t];
  buf[n++] = '\r';
  buf[n++] = '\n';
  out.append(std::string_view(buf, n));
}

}  // namespace scalws::worker::http1
