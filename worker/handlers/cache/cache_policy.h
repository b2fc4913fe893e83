// RFC 9111 as a shared cache applies it, as pure functions of a request's and a response's
// facts and the clock: whether a response may be stored (§3), how long it stays fresh
// (§4.2.1), how old it is (§4.2.3), and whether a stored response may answer a request now
// (§4.2, §5.2.1 request directives, RFC 5861 stale-while-revalidate / stale-if-error).
//
// Decisions taken once, nginx-like where the RFC leaves room:
// - Only responses to GET are stored; HEAD, conditional and range requests are answered
//   from what GET stored. Statuses 206 and 304 are never stored as entries (a 304 only
//   refreshes one, §4.3.4), nor 1xx.
// - Heuristic freshness (§4.2.2) is off: without s-maxage, max-age or Expires a response is
//   stored only when cache.default_ttl names its status, for that long.
// - must-revalidate, proxy-revalidate and s-maxage (§5.2.2.10) forbid every stale answer,
//   stale-while-revalidate and stale-if-error included (the most restrictive directive
//   wins, §4.2.1).
// Times are milliseconds: wall clock (since the epoch) for Date, Expires and ages.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/config/cache_config.h"
#include "worker/handlers/cache/cache_control.h"
#include "worker/http/header_field.h"
#include "worker/http/method.h"

namespace scalws::worker::cache {

struct RequestFacts {
  Method method = Method::kGet;
  bool authorization = false;  // the request carried Authorization
  CacheControl cache_control;  // its directives (Pragma: no-cache folded in, §5.4)
};

// When the request went upstream and when its response head came back.
struct ResponseTiming {
  int64_t request_time_ms = 0;
  int64_t response_time_ms = 0;
};

// How a stored response ages: what the entry keeps to judge every later request.
struct Freshness {
  int64_t response_time_ms = 0;           // of the response (or of the 304 that refreshed it)
  uint64_t corrected_initial_age_ms = 0;  // §4.2.3
  uint64_t lifetime_ms = 0;               // §4.2.1
  uint64_t stale_while_revalidate_ms = 0;
  uint64_t stale_if_error_ms = 0;
  bool must_revalidate = false;  // no stale answer ever (must-/proxy-revalidate, s-maxage)
  bool no_cache = false;         // revalidate before every use
};

struct StorePlan {
  bool store = false;
  std::string_view why_not;  // a short reason when !store ("no-store", "private", ...)
  Freshness freshness;
  bool strip_set_cookie = false;
  // Fields not to store (qualified private="..." and no-cache="...", §5.2.2.4, §5.2.2.7).
  std::string_view private_fields;
  std::string_view no_cache_fields;
};

// §3: may this response to this request be stored, and how fresh is it.
StorePlan planStore(const common::config::CacheConfig& config, const RequestFacts& request,
                    uint16_t status, std::span<const HeaderField> response_headers,
                    const ResponseTiming& timing);

// §4.2.3: corrected_initial_age from the response's Age and Date.
uint64_t correctedInitialAgeMs(std::span<const HeaderField> response_headers,
                               const ResponseTiming& timing);
// §4.2.3 current_age at `now_ms`.
uint64_t currentAgeMs(const Freshness& f, int64_t now_ms);

enum class Reuse {
  kFresh,                 // answer with it
  kStaleWhileRevalidate,  // answer with it, revalidate in the background (RFC 5861 §3)
  kRevalidate,            // ask the upstream first (conditionally when it has validators)
};

// §4.2, §5.2.1: may the entry answer this request without asking the upstream.
Reuse decideReuse(const Freshness& f, const CacheControl& request, int64_t now_ms);
// RFC 5861 §4 and cache.stale_if_error: may a stale entry answer because the upstream
// failed (an error status or no answer at all).
bool staleIfErrorAllows(const Freshness& f, const CacheControl& request,
                        uint64_t config_stale_if_error_ms, int64_t now_ms);
// The statuses whose failure stale-if-error covers (RFC 5861 §4: 500, 502, 503, 504).
bool isErrorStatus(uint16_t status);

// §4.3.4: a 304 refreshes the entry's freshness from its own headers (the stored ones
// updated by it, in `merged_headers`).
Freshness refreshedFreshness(const common::config::CacheConfig& config, uint16_t stored_status,
                             std::span<const HeaderField> merged_headers,
                             const ResponseTiming& timing);

}  // namespace scalws::worker::cache
