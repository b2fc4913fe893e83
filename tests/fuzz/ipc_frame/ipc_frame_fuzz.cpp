// Fuzzes the IPC frame decoder and message parser (ipc/frame.h, ipc/message.h).
//
// Input: byte 0 picks the chunk size the stream is fed in (so chunk boundaries land
// everywhere); the rest is the byte stream from a peer. Every message decoded must
// re-encode, and decoding that encoding must give the same bytes again. The whole input
// is also parsed as one payload.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ipc/frame.h"
#include "ipc/message.h"

namespace {

using scalws::ipc::encodeFrame;
using scalws::ipc::FrameDecoder;
using scalws::ipc::Message;

void checkRoundTrip(const Message& message) {
  std::string first;
  if (!encodeFrame(message, first).ok()) return;  // grew past 1 MiB when re-encoded
  FrameDecoder decoder;
  decoder.feed(first);
  auto again = decoder.next();
  if (!again.ok() || !again->has_value()) {
    std::fprintf(stderr, "re-encoded message does not decode: %s\n",
                 again.ok() ? "incomplete" : again.status().message().c_str());
    std::abort();
  }
  std::string second;
  if (!encodeFrame(**again, second).ok() || second != first) {
    std::fprintf(stderr, "round trip changed the message\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t chunk = size_t{data[0]} + 1;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  FrameDecoder decoder;
  for (size_t pos = 0; pos < stream.size() && !decoder.broken(); pos += chunk) {
    decoder.feed(stream.substr(pos, chunk));
    for (;;) {
      auto next = decoder.next();
      if (!next.ok()) {
        if (decoder.broken()) break;
        continue;  // a bad payload: that frame is consumed, the next may be fine
      }
      if (!next->has_value()) break;
      checkRoundTrip(**next);
    }
  }

  auto whole = scalws::ipc::parseMessage(stream);
  if (whole.ok()) checkRoundTrip(*whole);
  return 0;
}
