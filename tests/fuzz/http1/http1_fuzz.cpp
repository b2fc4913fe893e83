// Fuzz target: the HTTP/1.1 request codec fed arbitrary bytes, split where the input says,
// driven the way the connection drives it (contiguous buffer, resume after each message).
// Also runs every head through the path normalizer, as the connection does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "worker/http/path_normalizer.h"
#include "worker/http1/request_codec.h"

namespace {

using scalws::worker::Arena;
using scalws::worker::Request;
using scalws::worker::http1::CodecLimits;
using scalws::worker::http1::RequestCodec;
using scalws::worker::http1::RequestCodecCallbacks;

class Sink : public RequestCodecCallbacks {
 public:
  bool onRequestHead(Request& r) override {
    Arena arena;
    (void)scalws::worker::normalizePath(r.raw_path, arena);
    for (const auto& h : r.headers) checksum_ += h.name.size() + h.value.size();
    return true;
  }
  void onRequestBody(std::string_view data) override { checksum_ += data.size(); }
  void onRequestComplete() override { ++complete_; }
  size_t checksum_ = 0;
  size_t complete_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t step = data[0] % 16 + 1;  // chunk size for this run: 1..16 bytes, or whole
  if (data[0] >= 240) step = size;
  ++data;
  --size;

  CodecLimits limits;
  limits.max_request_line = 256;
  limits.max_header_size = 1024;
  limits.max_headers = 16;
  Sink sink;
  Arena arena;
  Request request;
  request.arena = &arena;
  RequestCodec codec(limits, sink, request);
  std::string buffer;
  buffer.reserve(size);
  size_t parsed = 0;
  for (size_t fed = 0; fed < size;) {
    size_t n = std::min(step, size - fed);
    buffer.append(reinterpret_cast<const char*>(data) + fed, n);
    fed += n;
    while (parsed < buffer.size()) {
      auto r = codec.dispatch(buffer.data() + parsed, buffer.size() - parsed);
      parsed += r.consumed;
      if (parsed > buffer.size()) __builtin_trap();  // consumed more than given
      if (r.outcome == RequestCodec::Outcome::kError) return 0;
      if (r.outcome == RequestCodec::Outcome::kNeedMore) break;
      if (r.outcome == RequestCodec::Outcome::kMessageComplete) {
        arena.reset();
        codec.resume();
      }
    }
  }
  return 0;
}
