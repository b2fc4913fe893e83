// Fuzz target: what a PHP pool sends back, as the Exchange consumes it. The first byte picks
// the read size; records go through the RecordParser, STDOUT through the CgiHeadParser until
// the head is done. Malformed input must end in an error outcome, never a crash; a parser
// that reported kEnd or kError must stay there.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "worker/handlers/fastcgi/cgi_head_parser.h"
#include "worker/handlers/fastcgi/record_parser.h"

namespace {

using scalws::worker::fastcgi::CgiHeadParser;
using scalws::worker::fastcgi::ProtocolStatus;
using scalws::worker::fastcgi::RecordParser;
using scalws::worker::fastcgi::RecordParserCallbacks;

class Sink : public RecordParserCallbacks {
 public:
  void onStdout(std::string_view data) override {
    if (head_done_ || head_failed_) {
      body_ += data.size();
      return;
    }
    CgiHeadParser::Result r = head_.feed(data);
    if (r.consumed > data.size()) std::abort();
    if (r.outcome == CgiHeadParser::Outcome::kError) head_failed_ = true;
    if (r.outcome == CgiHeadParser::Outcome::kDone) {
      head_done_ = true;
      if (head_.status() < 200 || head_.status() > 599) std::abort();
      for (const auto& h : head_.headers()) body_ += h.name.size() + h.value.size();
      body_ += data.size() - r.consumed;
    }
  }
  void onStderr(std::string_view data) override { body_ += data.size(); }
  void onEndRequest(uint32_t, ProtocolStatus) override { ++ends_; }

  CgiHeadParser head_{4096};
  bool head_done_ = false;
  bool head_failed_ = false;
  size_t body_ = 0;
  int ends_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t step = (data[0] % 64) + 1;
  ++data;
  --size;
  Sink sink;
  RecordParser parser(sink);
  size_t pos = 0;
  RecordParser::Outcome last = RecordParser::Outcome::kNeedMore;
  while (pos < size) {
    size_t n = size - pos < step ? size - pos : step;
    RecordParser::Result r = parser.dispatch(reinterpret_cast<const char*>(data) + pos, n);
    if (r.consumed > n) std::abort();
    last = r.outcome;
    if (r.outcome != RecordParser::Outcome::kNeedMore) {
      // Ended or failed: the parser stays there whatever follows.
      RecordParser::Result again = parser.dispatch(reinterpret_cast<const char*>(data), size);
      if (again.outcome != last || again.consumed != 0) std::abort();
      break;
    }
    if (r.consumed != n) std::abort();
    pos += n;
  }
  if (sink.ends_ > 1) std::abort();
  if ((sink.ends_ == 1) != (last == RecordParser::Outcome::kEnd)) std::abort();
  return 0;
}
