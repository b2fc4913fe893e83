// TokenBucket: at most `burst` events at once and `per_second` on average; what a worker
// may send the controller (metrics messages, lines of stderr) is metered with one.
#pragma once

#include <algorithm>
#include <cstdint>

namespace scalws::controller {

class TokenBucket {
 public:
  TokenBucket(double per_second, double burst)
      : per_second_(per_second), burst_(burst), tokens_(burst) {}

  // Takes one token at `now_ms` (a monotonic clock, e.g. uv_now): false when none is left.
  bool take(uint64_t now_ms) {
    if (now_ms > last_ms_) {
      tokens_ =
          std::min(burst_, tokens_ + static_cast<double>(now_ms - last_ms_) * per_second_ / 1000.0);
      last_ms_ = now_ms;
    }
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  double per_second_;
  double burst_;
  double tokens_;
  uint64_t last_ms_ = 0;
};

}  // namespace scalws::controller
