#include "worker/handlers/cache/cache_policy.h"

#include <algorithm>

#include "common/http_date.h"

namespace scalws::worker::cache {
namespace {

std::string_view firstField(std::span<const HeaderField> headers, std::string_view name) {
  for (const HeaderField& h : headers) {
    if (equalsIgnoreCase(h.name, name)) return h.value;
  }
  return {};
}

bool hasField(std::span<const HeaderField> headers, std::string_view name) {
  for (const HeaderField& h : headers) {
    if (equalsIgnoreCase(h.name, name)) return true;
  }
  return false;
}

uint64_t secondsToMs(uint64_t s) {
  return s * 1000;  // s <= kMaxDeltaSeconds: no overflow
}

uint64_t positiveDifferenceMs(int64_t later_ms, int64_t earlier_ms) {
  return later_ms > earlier_ms ? static_cast<uint64_t>(later_ms - earlier_ms) : 0;
}

// The Date of the response in ms, or the time it arrived when it has none (or an invalid
// one): §4.2.3 date_value, and the base Expires is measured from.
int64_t dateValueMs(std::span<const HeaderField> headers, const ResponseTiming& timing) {
  std::string_view date = firstField(headers, "date");
  if (!date.empty()) {
    if (std::optional<time_t> t = common::parseHttpDate(date)) return int64_t{*t} * 1000;
  }
  return timing.response_time_ms;
}

struct Lifetime {
  bool known = false;  // the upstream said how long, or default_ttl did
  uint64_t ms = 0;
};

// §4.2.1, in its order: s-maxage (shared caches), max-age, Expires - Date; then
// cache.default_ttl for the status when the upstream said nothing about freshness.
Lifetime freshnessLifetime(const common::config::CacheConfig& config, uint16_t status,
                           const CacheControl& cc, std::span<const HeaderField> headers,
                           const ResponseTiming& timing) {
  if (cc.s_maxage) return {true, secondsToMs(*cc.s_maxage)};
  if (cc.max_age) return {true, secondsToMs(*cc.max_age)};
  if (hasField(headers, "expires")) {
    // §5.3: an invalid Expires ("0" among them) means already expired.
    std::optional<time_t> expires = common::parseHttpDate(firstField(headers, "expires"));
    if (!expires) return {true, 0};
    return {true, positiveDifferenceMs(int64_t{*expires} * 1000, dateValueMs(headers, timing))};
  }
  for (const common::config::CacheDefaultTtl& d : config.default_ttl) {
    if (d.status == status) return {true, d.ttl};
  }
  return {};
}

Freshness freshnessOf(const CacheControl& cc, std::span<const HeaderField> headers,
                      const ResponseTiming& timing, Lifetime lifetime) {
  Freshness f;
  f.response_time_ms = timing.response_time_ms;
  f.corrected_initial_age_ms = correctedInitialAgeMs(headers, timing);
  f.lifetime_ms = cc.no_cache ? 0 : lifetime.ms;
  f.no_cache = cc.no_cache;
  // §5.2.2.10: s-maxage also means proxy-revalidate.
  f.must_revalidate = cc.must_revalidate || cc.proxy_revalidate || cc.s_maxage.has_value();
  if (!f.must_revalidate) {
    f.stale_while_revalidate_ms = secondsToMs(cc.stale_while_revalidate.value_or(0));
    f.stale_if_error_ms = secondsToMs(cc.stale_if_error.value_or(0));
  }
  return f;
}

}  // namespace

uint64_t correctedInitialAgeMs(std::span<const HeaderField> headers, const ResponseTiming& timing) {
  // §5.1: the first member of a list-valued Age counts; an invalid one is ignored.
  uint64_t age_ms = 0;
  std::string_view age = firstField(headers, "age");
  age = trimOws(age.substr(0, age.find(',')));
  if (!age.empty()) {
    uint64_t s = 0;
    bool valid = true;
    for (char c : age) {
      if (c < '0' || c > '9') {
        valid = false;
        break;
      }
      s = std::min<uint64_t>(s * 10 + static_cast<uint64_t>(c - '0'), kMaxDeltaSeconds);
    }
    if (valid) age_ms = secondsToMs(s);
  }
  uint64_t apparent_age =
      positiveDifferenceMs(timing.response_time_ms, dateValueMs(headers, timing));
  uint64_t response_delay = positiveDifferenceMs(timing.response_time_ms, timing.request_time_ms);
  uint64_t corrected_age_value = age_ms + response_delay;
  return std::max(apparent_age, corrected_age_value);
}

uint64_t currentAgeMs(const Freshness& f, int64_t now_ms) {
  return f.corrected_initial_age_ms + positiveDifferenceMs(now_ms, f.response_time_ms);
}

StorePlan planStore(const common::config::CacheConfig& config, const RequestFacts& request,
                    uint16_t status, std::span<const HeaderField> headers,
                    const ResponseTiming& timing) {
  StorePlan plan;
  auto refuse = [&plan](std::string_view why) {
    plan.why_not = why;
    return plan;
  };
  // §3: a method the cache understands and defines as cacheable; we store GET only.
  if (request.method != Method::kGet) return refuse("method");
  // A final status the cache understands; never a partial answer or a 304 (§3, §3.3).
  if (status < 200 || status > 599 || status == 206 || status == 304) return refuse("status");
  CacheControl cc = parseCacheControl(headers);
  // §3: no-store in the request or the response; private in a shared cache.
  if (request.cache_control.no_store || cc.no_store) return refuse("no-store");
  if (cc.is_private) return refuse("private");
  // §3.5: a request with Authorization only when the response says a shared cache may.
  if (request.authorization && !cc.must_revalidate && !cc.is_public && !cc.s_maxage) {
    return refuse("authorization");
  }
  // §4.1: "Vary: *" never matches a later request.
  for (const HeaderField& h : headers) {
    if (equalsIgnoreCase(h.name, "vary") && headerListContains(h.value, "*")) {
      return refuse("vary");
    }
  }
  if (hasField(headers, "set-cookie")) {
    switch (config.set_cookie) {
      case common::config::CacheConfig::SetCookie::kBypass:
        return refuse("set-cookie");
      case common::config::CacheConfig::SetCookie::kStrip:
        plan.strip_set_cookie = true;
        break;
      case common::config::CacheConfig::SetCookie::kStore:
        break;
    }
  }
  Lifetime lifetime = freshnessLifetime(config, status, cc, headers, timing);
  if (!lifetime.known) return refuse("no-freshness");
  plan.store = true;
  plan.freshness = freshnessOf(cc, headers, timing, lifetime);
  plan.private_fields = cc.private_fields;
  plan.no_cache_fields = cc.no_cache_fields;
  return plan;
}

Freshness refreshedFreshness(const common::config::CacheConfig& config, uint16_t stored_status,
                             std::span<const HeaderField> merged_headers,
                             const ResponseTiming& timing) {
  CacheControl cc = parseCacheControl(merged_headers);
  Lifetime lifetime = freshnessLifetime(config, stored_status, cc, merged_headers, timing);
  return freshnessOf(cc, merged_headers, timing, lifetime);
}

Reuse decideReuse(const Freshness& f, const CacheControl& request, int64_t now_ms) {
  // §5.2.2.4 (response no-cache) and §5.2.1.4 (request no-cache): validate first.
  if (f.no_cache || request.no_cache) return Reuse::kRevalidate;
  uint64_t age = currentAgeMs(f, now_ms);
  // §5.2.1.1: the client accepts nothing older than max-age.
  if (request.max_age && age > secondsToMs(*request.max_age)) return Reuse::kRevalidate;
  bool fresh = f.lifetime_ms > age;
  // §5.2.1.3: nor anything that stays fresh for less than min-fresh.
  if (request.min_fresh && (!fresh || f.lifetime_ms - age < secondsToMs(*request.min_fresh))) {
    return Reuse::kRevalidate;
  }
  if (fresh) return Reuse::kFresh;
  if (f.must_revalidate) return Reuse::kRevalidate;  // §5.2.2.2
  uint64_t staleness = age - f.lifetime_ms;
  // §5.2.1.2: the client accepts this much staleness.
  if (request.max_stale && staleness <= secondsToMs(*request.max_stale)) return Reuse::kFresh;
  if (f.stale_while_revalidate_ms > 0 && staleness <= f.stale_while_revalidate_ms) {
    return Reuse::kStaleWhileRevalidate;
  }
  return Reuse::kRevalidate;
}

bool staleIfErrorAllows(const Freshness& f, const CacheControl& request,
                        uint64_t config_stale_if_error_ms, int64_t now_ms) {
  // §4.2.4: no-cache and must-revalidate forbid a stale answer, errors or not.
  if (f.must_revalidate || f.no_cache) return false;
  uint64_t age = currentAgeMs(f, now_ms);
  uint64_t staleness = age > f.lifetime_ms ? age - f.lifetime_ms : 0;
  uint64_t limit = std::max(f.stale_if_error_ms, config_stale_if_error_ms);
  // RFC 5861 §4: the request directive, when given, is the client's own limit.
  if (request.stale_if_error) limit = secondsToMs(*request.stale_if_error);
  return staleness <= limit && limit > 0;
}

bool isErrorStatus(uint16_t status) {
  return status == 500 || status == 502 || status == 503 || status == 504;
}

}  // namespace scalws::worker::cache
