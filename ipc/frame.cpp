#include "ipc/frame.h"

namespace scalws::ipc {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;

uint32_t readLength(const char* p) {
  auto b = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

}  // namespace

Status encodeFrame(const Message& message, std::string& out) {
  // replace: a handler's string with invalid UTF-8 must not throw from dump().
  std::string payload = toJson(message).dump(-1, ' ', false, Json::error_handler_t::replace);
  if (payload.size() > kMaxFramePayload) {
    return Status(StatusCode::kResourceExhausted, "ipc: message of " +
                                                      std::to_string(payload.size()) +
                                                      " bytes exceeds the 1 MiB frame limit");
  }
  auto length = static_cast<uint32_t>(payload.size());
  char header[kFrameHeaderSize] = {
      static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
      static_cast<char>((length >> 16) & 0xff), static_cast<char>((length >> 24) & 0xff)};
  out.append(header, kFrameHeaderSize);
  out.append(payload);
  return common::okStatus();
}

void FrameDecoder::feed(std::string_view bytes) {
  if (broken_) return;
  // Drop what was consumed before growing, so the buffer holds at most one frame plus
  // the chunk being fed.
  if (offset_ > 0 && offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  } else if (offset_ > buffer_.size() / 2) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  buffer_.append(bytes);
}

Result<std::optional<Message>> FrameDecoder::next() {
  if (broken_) return *broken_;
  size_t available = buffer_.size() - offset_;
  if (available < kFrameHeaderSize) return std::optional<Message>();
  uint32_t length = readLength(buffer_.data() + offset_);
  if (length == 0) {
    broken_ = common::invalidArgument("ipc: bad frame: zero-length frame");
  } else if (length > kMaxFramePayload) {
    broken_ = Status(
        StatusCode::kResourceExhausted,
        "ipc: bad frame: frame of " + std::to_string(length) + " bytes exceeds the 1 MiB limit");
  }
  if (broken_) {
    buffer_.clear();  // nothing after a bad length can be trusted; free it now
    offset_ = 0;
    return *broken_;
  }
  if (available - kFrameHeaderSize < length) return std::optional<Message>();
  std::string_view payload(buffer_.data() + offset_ + kFrameHeaderSize, length);
  offset_ += kFrameHeaderSize + length;
  auto message = parseMessage(payload);
  if (!message.ok()) return message.status();
  message->wire_bytes = length;
  return std::optional<Message>(std::move(*message));
}

}  // namespace scalws::ipc
