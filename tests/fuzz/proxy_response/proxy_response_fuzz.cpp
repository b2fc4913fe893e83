// Fuzz target: what an upstream sends back, as the proxy's exchange feeds it to the
// ResponseParser. The first byte picks the read size and whether the request was HEAD;
// bytes the parser did not consume are presented again with the next read, as the exchange
// does. Whatever the input: no crash, consumed never past what was given, a body no larger
// than the input, a Content-Length body delivered exactly, and an ended parser stays ended.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "worker/handlers/proxy/response_parser.h"

namespace {

using scalws::worker::proxy::BodyFraming;
using scalws::worker::proxy::ResponseParser;
using scalws::worker::proxy::ResponseParserCallbacks;
using scalws::worker::proxy::UpstreamResponseHead;

class Sink : public ResponseParserCallbacks {
 public:
  void onResponseHead(const UpstreamResponseHead& head) override {
    if (head.status < 100 || head.status > 599) std::abort();
    if (head.framing == BodyFraming::kChunked && head.has_content_length) std::abort();
    if (head.status >= 200) {
      ++final_heads;
      framing = head.framing;
      length = head.content_length;
    }
    body = 0;
  }
  void onResponseBody(std::string_view data) override {
    if (final_heads != 1 || data.empty()) std::abort();
    body += data.size();
  }
  int final_heads = 0;
  BodyFraming framing = BodyFraming::kNone;
  uint64_t length = 0;
  uint64_t body = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t step = (data[0] % 64) + 1;
  bool head_request = (data[0] & 0x80) != 0;
  ++data;
  --size;
  Sink sink;
  scalws::worker::proxy::ResponseLimits limits;
  limits.max_head = 4096;  // reachable by the fuzzer
  limits.max_trailers = 512;
  ResponseParser parser(sink, limits);
  parser.reset(head_request);
  std::string pending;
  size_t pos = 0;
  ResponseParser::Outcome last = ResponseParser::Outcome::kNeedMore;
  while (pos < size) {
    size_t n = size - pos < step ? size - pos : step;
    pending.append(reinterpret_cast<const char*>(data) + pos, n);
    pos += n;
    ResponseParser::Result r = parser.dispatch(pending.data(), pending.size());
    if (r.consumed > pending.size()) std::abort();
    pending.erase(0, r.consumed);
    last = r.outcome;
    if (r.outcome != ResponseParser::Outcome::kNeedMore) {
      ResponseParser::Result again = parser.dispatch(pending.data(), pending.size());
      if (again.outcome != r.outcome || again.consumed != 0) std::abort();
      break;
    }
  }
  if (last == ResponseParser::Outcome::kNeedMore) last = parser.finishEof().outcome;
  if (sink.body > size) std::abort();
  if (last == ResponseParser::Outcome::kComplete && sink.framing == BodyFraming::kContentLength &&
      sink.body != sink.length) {
    std::abort();
  }
  if (sink.final_heads > 1) std::abort();
  return 0;
}
