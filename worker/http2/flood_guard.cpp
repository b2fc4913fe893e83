#include "worker/http2/flood_guard.h"

#include <algorithm>

namespace scalws::worker::http2 {

bool TokenBucket::take(uint64_t now_ms) {
  if (!started_) {
    started_ = true;
    last_ms_ = now_ms;
  } else if (now_ms > last_ms_) {
    uint64_t refill = (now_ms - last_ms_) * per_second_;  // thousandths of a token
    tokens_milli_ = std::min<uint64_t>(uint64_t{burst_} * 1000, tokens_milli_ + refill);
    last_ms_ = now_ms;
  }
  if (tokens_milli_ < 1000) return false;
  tokens_milli_ -= 1000;
  return true;
}

}  // namespace scalws::worker::http2
