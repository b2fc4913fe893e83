// Framing: a 4-byte little-endian payload length, then the payload (a Message's JSON).
//
// The codec never touches a socket. encodeFrame appends to a buffer the caller owns;
// FrameDecoder takes bytes in any chunking and hands back whole Messages in order.
// Payloads are 1..kMaxFramePayload bytes; a frame over 1 MiB is refused, never buffered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::ipc {

inline constexpr size_t kFrameHeaderSize = 4;
inline constexpr size_t kMaxFramePayload = size_t{1} << 20;  // 1 MiB

// Appends the frame for `message` to `out`. kResourceExhausted (and `out` unchanged) when
// the payload would exceed kMaxFramePayload. Invalid UTF-8 in strings is replaced, so
// this never throws.
common::Status encodeFrame(const Message& message, std::string& out);

class FrameDecoder {
 public:
  // Buffers `bytes` (copied). Never fails; errors surface from next().
  void feed(std::string_view bytes);

  // The next whole message, std::nullopt when more bytes are needed, or an error:
  // - a length of 0 or over kMaxFramePayload (kInvalidArgument / kResourceExhausted):
  //   the stream cannot be resynchronised, so the decoder is broken() and every later
  //   call returns the same error;
  // - a payload that is not a valid Message (see parseMessage): that frame is consumed
  //   and the decoder can go on with the next one.
  // wireCodeForParseError(status) gives the code for the error reply either way.
  common::Result<std::optional<Message>> next();

  bool broken() const { return broken_.has_value(); }
  // True when no partial frame is buffered (every byte fed so far was consumed).
  bool idle() const { return buffer_.size() == offset_; }
  size_t bufferedBytes() const { return buffer_.size() - offset_; }

 private:
  std::string buffer_;
  size_t offset_ = 0;  // start of the first unconsumed byte in buffer_
  std::optional<common::Status> broken_;
};

}  // namespace scalws::ipc
