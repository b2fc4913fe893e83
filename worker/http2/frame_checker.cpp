#include "worker/http2/frame_checker.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>

namespace scalws::worker::http2 {
namespace {

uint32_t u31(const uint8_t* p) {
  return ((uint32_t{p[0]} & 0x7f) << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

FrameChecker::Finding streamError(int32_t id, const char* why) {
  return {FrameChecker::Action::kResetStream, id, NGHTTP2_STREAM_CLOSED, why};
}

FrameChecker::Finding connectionError(int32_t id, uint32_t code, const char* why) {
  return {FrameChecker::Action::kCloseConnection, id, code, why};
}

}  // namespace

FrameChecker::Result FrameChecker::scan(const uint8_t* data, size_t len) {
  Result result;
  size_t i = 0;
  // Where the current frame's header starts in this call (0 when it started earlier).
  size_t frame_start = 0;
  while (i < len && !stopped_) {
    if (preface_left_ > 0) {
      size_t take = std::min(preface_left_, len - i);
      preface_left_ -= take;
      i += take;
      continue;
    }
    if (payload_left_ > 0) {
      size_t take = std::min<size_t>(payload_left_, len - i);
      if (type_ == NGHTTP2_PRIORITY && length_ == 5) {
        std::copy_n(data + i, take, priority_ + priority_len_);
        priority_len_ = static_cast<uint8_t>(priority_len_ + take);
      }
      payload_left_ -= static_cast<uint32_t>(take);
      i += take;
      if (payload_left_ == 0 && type_ == NGHTTP2_PRIORITY && length_ == 5) {
        Finding f = checkPriority();
        if (f.action != Action::kNone) {
          stopped_ = f.action == Action::kCloseConnection;
          return {frame_start, i, f};
        }
      }
      continue;
    }
    if (header_len_ == 0) frame_start = i;
    size_t take = std::min<size_t>(9 - header_len_, len - i);
    std::copy_n(data + i, take, header_ + header_len_);
    header_len_ = static_cast<uint8_t>(header_len_ + take);
    i += take;
    if (header_len_ < 9) break;
    header_len_ = 0;
    length_ = (uint32_t{header_[0]} << 16) | (uint32_t{header_[1]} << 8) | header_[2];
    type_ = header_[3];
    flags_ = header_[4];
    stream_id_ = static_cast<int32_t>(u31(header_ + 5));
    payload_left_ = length_;
    priority_len_ = 0;
    Finding f = checkHeader();
    if (f.action != Action::kNone) {
      stopped_ = f.action == Action::kCloseConnection;
      return {frame_start, i, f};
    }
  }
  result.act_at = len;
  result.scanned = len;
  return result;
}

FrameChecker::Finding FrameChecker::checkHeader() {
  const int32_t id = stream_id_;
  if (type_ == NGHTTP2_PRIORITY && id == 0) {
    return connectionError(0, NGHTTP2_PROTOCOL_ERROR, "PRIORITY on stream 0");
  }
  // Only client-initiated streams at or below the highest one opened are ours to judge:
  // stream 0, even ids and idle streams are nghttp2's.
  if ((id & 1) == 0 || id > max_id_) {
    if (type_ == NGHTTP2_HEADERS && (id & 1) == 1) {
      open(id);
      if ((flags_ & NGHTTP2_FLAG_END_STREAM) != 0) peer_ended_.set(slot(id));
    }
    return {};
  }
  bool known = remembered(id);
  size_t s = slot(id);
  switch (type_) {
    case NGHTTP2_DATA:
      if (!known) return streamError(id, "DATA on a long-closed stream");
      if (!opened_.test(s)) return streamError(id, "DATA on a stream that was never opened");
      if (peer_ended_.test(s)) {
        return connectionError(id, NGHTTP2_STREAM_CLOSED, "DATA after END_STREAM");
      }
      if (peer_reset_.test(s)) return streamError(id, "DATA after RST_STREAM");
      if ((flags_ & NGHTTP2_FLAG_END_STREAM) != 0) peer_ended_.set(s);
      return {};
    case NGHTTP2_HEADERS:
      if (!known) return {};  // trailers of a stream reset long ago: nghttp2 ignores them
      if (!opened_.test(s)) {
        return connectionError(id, NGHTTP2_PROTOCOL_ERROR, "HEADERS with a stream id going back");
      }
      if (peer_ended_.test(s)) {
        return connectionError(id, NGHTTP2_STREAM_CLOSED, "HEADERS after END_STREAM");
      }
      if (peer_reset_.test(s)) return streamError(id, "HEADERS after RST_STREAM");
      if ((flags_ & NGHTTP2_FLAG_END_STREAM) != 0) peer_ended_.set(s);
      return {};
    case NGHTTP2_RST_STREAM:
      if (known && opened_.test(s)) peer_reset_.set(s);
      return {};
    default:
      return {};
  }
}

FrameChecker::Finding FrameChecker::checkPriority() const {
  // RFC 9113 §5.3.1: "A stream cannot depend on itself." nghttp2 treats it as a connection
  // error when it reads priorities; so do we (§5.4: a stream error may be one).
  if (static_cast<int32_t>(u31(priority_)) == stream_id_) {
    return connectionError(stream_id_, NGHTTP2_PROTOCOL_ERROR, "PRIORITY depending on itself");
  }
  return {};
}

bool FrameChecker::remembered(int32_t id) const {
  return id <= max_id_ && static_cast<uint32_t>(max_id_ - id) < 2 * kWindow;
}

void FrameChecker::open(int32_t id) {
  // The slots of the ids between the old highest and this one now describe new ids: clear
  // them (those ids were skipped, so never opened).
  uint32_t steps = static_cast<uint32_t>(id - max_id_) / 2;
  if (max_id_ == 0 || steps >= kWindow) {
    opened_.reset();
    peer_ended_.reset();
    peer_reset_.reset();
  } else {
    for (int32_t skipped = max_id_ + 2; skipped <= id; skipped += 2) {
      size_t s = slot(skipped);
      opened_.reset(s);
      peer_ended_.reset(s);
      peer_reset_.reset(s);
    }
  }
  max_id_ = id;
  opened_.set(slot(id));
}

}  // namespace scalws::worker::http2
