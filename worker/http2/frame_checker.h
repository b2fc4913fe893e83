// RFC 9113 rules on a client's frames that nghttp2 1.52, as this server configures it,
// leaves unchecked. The session runs every byte from the peer through scan() before
// nghttp2 sees it, feeds nghttp2 up to the frame a finding is about, and then acts on the
// finding; see Session::receive().
//
// - Stream states (§5.1): DATA or HEADERS on a stream the peer ended with END_STREAM is a
//   connection error STREAM_CLOSED; on a stream the peer reset with RST_STREAM, a stream
//   error STREAM_CLOSED. DATA on a stream the peer never opened but whose id is below one
//   it did (implicitly closed, §5.1.1) is a stream error STREAM_CLOSED (§6.1); HEADERS
//   there is a connection error PROTOCOL_ERROR (§5.1.1: stream ids only grow). nghttp2
//   keeps no closed streams (it would only for RFC 7540 priorities), so it ignores all of
//   these.
// - Frames on a stream *we* reset, sent before the peer saw our RST_STREAM, are no fault
//   (trailers or DATA in flight): the peer has neither ended nor reset such a stream, so
//   they pass, and nghttp2 ignores them.
// - PRIORITY (§5.3.1, §6.3): on stream 0, or a stream depending on itself, a connection
//   error PROTOCOL_ERROR. With SETTINGS_NO_RFC7540_PRIORITIES nghttp2 drops PRIORITY
//   frames unread.
//
// What the checker remembers about a stream is a few bits over a window of the most
// recent client stream ids; older streams count as closed for DATA (a stream error at
// most) and are left to nghttp2 for HEADERS. The session acts on a stream error only when
// nghttp2 has no open stream of that id, so a long upload that fell out of the window goes
// on. Everything else (frame sizes, idle streams, flow control, HPACK, concurrency) stays
// nghttp2's.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>

namespace scalws::worker::http2 {

class FrameChecker {
 public:
  enum class Action : uint8_t {
    kNone,
    kResetStream,      // RST_STREAM error_code on stream_id; the connection goes on
    kCloseConnection,  // GOAWAY error_code; nothing more is read
  };
  struct Finding {
    Action action = Action::kNone;
    int32_t stream_id = 0;
    uint32_t error_code = 0;
    const char* why = "";
  };
  struct Result {
    // Bytes of this call's input that precede the frame the finding is about: they go to
    // nghttp2 before the finding is acted on. `scanned`: bytes looked at, all of them
    // when there is no finding; the next scan() starts there.
    size_t act_at = 0;
    size_t scanned = 0;
    Finding finding;
  };

  // The next bytes from the peer, the client connection preface first. Stops after the
  // first frame (header, or payload for PRIORITY) that breaks a rule.
  Result scan(const uint8_t* data, size_t len);

 private:
  static constexpr size_t kWindow = 1024;  // client stream ids remembered: 2 KiB of id space
  static constexpr size_t kPrefaceLength = 24;

  Finding checkHeader();
  Finding checkPriority() const;
  bool remembered(int32_t id) const;
  static size_t slot(int32_t id) { return (static_cast<uint32_t>(id) >> 1) % kWindow; }
  void open(int32_t id);

  size_t preface_left_ = kPrefaceLength;
  uint8_t header_[9] = {};
  uint8_t header_len_ = 0;
  uint32_t payload_left_ = 0;
  uint8_t type_ = 0;
  uint8_t flags_ = 0;
  int32_t stream_id_ = 0;
  uint32_t length_ = 0;
  uint8_t priority_[5] = {};  // a PRIORITY frame's payload, as it arrives
  uint8_t priority_len_ = 0;
  bool stopped_ = false;  // a connection error was found: nothing more is looked at

  int32_t max_id_ = 0;  // the highest client stream id opened with HEADERS
  std::bitset<kWindow> opened_;
  std::bitset<kWindow> peer_ended_;  // END_STREAM received
  std::bitset<kWindow> peer_reset_;  // RST_STREAM received
};

}  // namespace scalws::worker::http2
