// Cache-Control (RFC 9111 §5.2) as the cache reads it, from a request or a response.
//
// A field value is a comma-separated list of `directive [ "=" ( token / quoted-string ) ]`;
// names are case-insensitive; several field lines are one list. Delta-seconds past 2^31
// saturate there (§1.2.2). Parsing never fails: what does not parse is read the way that
// errs towards not reusing a response —
// - a max-age, s-maxage or min-fresh whose value is not delta-seconds counts as 0 (§4.2.1:
//   an invalid freshness makes the response stale), and so does a stale-while-revalidate
//   or stale-if-error that does not parse (no stale serving);
// - a directive given twice keeps its first value (§4.2.1: "the first occurrence").
// The qualified forms `private="field, ..."` and `no-cache="field, ..."` keep their field
// lists (a shared cache stores the response without those fields, §5.2.2.4 and §5.2.2.7).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "worker/http/header_field.h"

namespace scalws::worker::cache {

// RFC 9111 §1.2.2: the largest delta-seconds a cache has to represent.
inline constexpr uint64_t kMaxDeltaSeconds = 2147483648u;

struct CacheControl {
  // Response directives.
  bool no_store = false;
  bool no_cache = false;             // unqualified: reuse only after revalidation
  std::string_view no_cache_fields;  // qualified: these fields are not stored
  bool is_private = false;           // unqualified: a shared cache does not store it
  std::string_view private_fields;   // qualified: these fields are not stored
  bool is_public = false;
  bool must_revalidate = false;
  bool proxy_revalidate = false;
  std::optional<uint64_t> max_age;  // seconds
  std::optional<uint64_t> s_maxage;
  std::optional<uint64_t> stale_while_revalidate;  // RFC 5861
  std::optional<uint64_t> stale_if_error;          // RFC 5861 (also a request directive)
  // Request directives.
  std::optional<uint64_t> max_stale;  // "max-stale" alone: any staleness (kMaxDeltaSeconds)
  std::optional<uint64_t> min_fresh;
  bool only_if_cached = false;
  // Whether any Cache-Control line was present at all.
  bool present = false;
};

// Every `cache-control` line of `headers`, as one list.
CacheControl parseCacheControl(std::span<const HeaderField> headers);
// One field value.
void parseCacheControlInto(std::string_view value, CacheControl& out);

// Whether the comma-separated field list `list` (a qualified directive's value) names
// `field`, case-insensitively.
bool fieldListNames(std::string_view list, std::string_view field);

}  // namespace scalws::worker::cache
