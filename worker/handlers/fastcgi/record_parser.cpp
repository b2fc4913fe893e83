#include "worker/handlers/fastcgi/record_parser.h"

#include <algorithm>
#include <cstring>

namespace scalws::worker::fastcgi {

void RecordParser::reset() {
  state_ = State::kHeader;
  header_len_ = 0;
  content_left_ = padding_left_ = end_len_ = 0;
  error_ = "";
}

RecordParser::Result RecordParser::fail(const char* why, size_t consumed) {
  state_ = State::kFailed;
  error_ = why;
  return Result{Outcome::kError, consumed, why};
}

const char* RecordParser::checkHeader() const {
  if (current_.version != kVersion1) return "record version is not 1";
  if (current_.request_id != kRequestId) return "record for another request id";
  switch (current_.type) {
    case RecordType::kStdout:
    case RecordType::kStderr:
      return nullptr;
    case RecordType::kEndRequest:
      return current_.content_length == 8 ? nullptr : "END_REQUEST body is not 8 bytes";
    default:
      return "unexpected record type";
  }
}

RecordParser::Result RecordParser::dispatch(const char* data, size_t len) {
  if (state_ == State::kFailed) return Result{Outcome::kError, 0, error_};
  if (state_ == State::kDone) return Result{Outcome::kEnd, 0, ""};
  size_t pos = 0;
  while (pos < len) {
    switch (state_) {
      case State::kHeader: {
        size_t n = std::min(kHeaderSize - header_len_, len - pos);
        std::memcpy(header_ + header_len_, data + pos, n);
        header_len_ += n;
        pos += n;
        if (header_len_ < kHeaderSize) break;
        header_len_ = 0;
        current_ = decodeHeader(header_);
        if (const char* why = checkHeader()) return fail(why, pos);
        content_left_ = current_.content_length;
        padding_left_ = current_.padding_length;
        end_len_ = 0;
        state_ = State::kContent;
        // An empty STDOUT/STDERR record ends that stream; nothing to deliver.
        if (content_left_ == 0) state_ = padding_left_ > 0 ? State::kPadding : State::kHeader;
        break;
      }
      case State::kContent: {
        size_t n = std::min(content_left_, len - pos);
        std::string_view piece(data + pos, n);
        pos += n;
        content_left_ -= n;
        if (current_.type == RecordType::kStdout) {
          callbacks_.onStdout(piece);
        } else if (current_.type == RecordType::kStderr) {
          callbacks_.onStderr(piece);
        } else {
          std::memcpy(end_body_ + end_len_, piece.data(), n);
          end_len_ += n;
        }
        if (content_left_ > 0) break;
        state_ = padding_left_ > 0 ? State::kPadding : State::kHeader;
        if (current_.type == RecordType::kEndRequest && padding_left_ == 0) {
          state_ = State::kDone;
        }
        break;
      }
      case State::kPadding: {
        size_t n = std::min(padding_left_, len - pos);
        pos += n;
        padding_left_ -= n;
        if (padding_left_ == 0) {
          state_ = current_.type == RecordType::kEndRequest ? State::kDone : State::kHeader;
        }
        break;
      }
      case State::kDone:
      case State::kFailed:
        break;
    }
    if (state_ == State::kDone) {
      uint32_t app_status = (uint32_t{end_body_[0]} << 24) | (uint32_t{end_body_[1]} << 16) |
                            (uint32_t{end_body_[2]} << 8) | uint32_t{end_body_[3]};
      callbacks_.onEndRequest(app_status, static_cast<ProtocolStatus>(end_body_[4]));
      return Result{Outcome::kEnd, pos, ""};
    }
  }
  return Result{Outcome::kNeedMore, pos, ""};
}

}  // namespace scalws::worker::fastcgi
