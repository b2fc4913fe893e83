// Conditional GET/HEAD on a static file (RFC 9110 §13): If-Match, If-Unmodified-Since,
// If-None-Match, If-Modified-Since in the order of §13.2.2, and If-Range (§13.1.5).
//
// Comparisons: If-Match and If-Range use the strong comparison (a W/ tag never matches),
// If-None-Match the weak one; "*" matches any existing file. A list may be split over
// several header lines; a malformed list matches nothing. Dates that do not parse are
// ignored, as the RFC asks. Our ETags are strong (see open_file.h).
#pragma once

#include <ctime>
#include <string_view>

#include "worker/http/request.h"

namespace scalws::worker {

struct Validators {
  std::string_view etag;  // with its quotes
  time_t last_modified = 0;
};

enum class Precondition {
  kProceed,      // serve the file (200, or 206 if a Range applies)
  kNotModified,  // 304
  kFailed,       // 412
};

// For GET and HEAD (the only methods the static handler serves).
Precondition evaluatePreconditions(const Request& request, const Validators& validators);

// True when a Range may be honoured: no If-Range, or its validator matches the current
// one (strong ETag comparison, or a date equal to Last-Modified).
bool ifRangeHolds(std::string_view if_range, const Validators& validators);

// Whether the entity-tag list `list` (a field value) holds `etag`. `weak`: weak
// comparison (W/ ignored on both sides) instead of strong.
bool entityTagListMatches(std::string_view list, std::string_view etag, bool weak);

}  // namespace scalws::worker
