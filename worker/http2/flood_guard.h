// Rate limits for what a peer can make an HTTP/2 server do for free: token buckets per
// connection, one per kind of frame that costs us work without costing the peer a
// request. Past a limit the session answers GOAWAY ENHANCE_YOUR_CALM and the connection
// closes (RFC 9113 §10.5: "An endpoint MAY treat activity that is suspicious as a
// connection error").
//
// - resets: RST_STREAM received, and streams we had to reset for the peer's errors — the
//   rapid-reset attack (CVE-2023-44487) opens and cancels streams to start work that no
//   one waits for;
// - settings and pings: each must be acknowledged (CVE-2019-9512/9515);
// - empty frames: DATA without payload nor END_STREAM, CONTINUATION without payload
//   (CVE-2019-9518).
// Time is passed in (milliseconds, any monotonic origin) so tests drive it.
#pragma once

#include <cstdint>

namespace scalws::worker::http2 {

class TokenBucket {
 public:
  TokenBucket(uint32_t burst, uint32_t per_second)
      : burst_(burst), per_second_(per_second), tokens_milli_(uint64_t{burst} * 1000) {}
  // Takes one token; false when none is left.
  bool take(uint64_t now_ms);

 private:
  uint32_t burst_;
  uint32_t per_second_;
  uint64_t tokens_milli_;  // thousandths of a token, refilled per_second_ per second
  uint64_t last_ms_ = 0;
  bool started_ = false;
};

struct FloodLimits {
  uint32_t reset_burst = 200;
  uint32_t resets_per_second = 50;
  uint32_t control_burst = 50;  // SETTINGS and PING together
  uint32_t control_per_second = 10;
  uint32_t empty_burst = 100;
  uint32_t empty_per_second = 20;
};

class FloodGuard {
 public:
  explicit FloodGuard(const FloodLimits& limits = {})
      : resets_(limits.reset_burst, limits.resets_per_second),
        control_(limits.control_burst, limits.control_per_second),
        empty_(limits.empty_burst, limits.empty_per_second) {}

  // Each returns false once the peer went past its limit.
  bool onReset(uint64_t now_ms) { return resets_.take(now_ms); }
  bool onControl(uint64_t now_ms) { return control_.take(now_ms); }
  bool onEmptyFrame(uint64_t now_ms) { return empty_.take(now_ms); }

 private:
  TokenBucket resets_;
  TokenBucket control_;
  TokenBucket empty_;
};

}  // namespace scalws::worker::http2
