// Renders an HTTP/1.1 response head into an ByteQueue: status line, Date, Server, the
// handler's headers, framing (Content-Length or chunked) and Connection, in one block of
// memory so the head and a small body leave in one writev.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "worker/http/decimal.h"
#include "worker/http/response_writer.h"
#include "worker/http/status_text.h"
#include "worker/net/byte_queue.h"

namespace scalws::worker::http1 {

enum class Framing { kNone, kContentLength, kChunked, kCloseDelimited };

struct HeadFraming {
  Framing framing = Framing::kContentLength;
  uint64_t content_length = 0;
  bool close = false;
  bool keep_alive_header = false;  // HTTP/1.0 client asked for keep-alive
};

using worker::formatDecimal;
using worker::statusHasBody;

void appendResponseHead(ByteQueue& out, const ResponseHead& head, const HeadFraming& framing,
                        std::string_view date_line, std::string_view server_line);
// "<hex size>\r\n" for a chunk of `size` bytes.
void appendChunkHeader(ByteQueue& out, uint64_t size);

}  // namespace scalws::worker::http1
