#include "worker/handlers/static/conditional_request.h"

#include <optional>

#include "common/http_date.h"
#include "worker/http/header_field.h"

namespace scalws::worker {
namespace {

enum class ListMatch { kAbsent, kNoMatch, kMatch };

// Every line of a list header counts (RFC 9110 §5.3: lines combine with commas).
ListMatch matchAllLines(const Request& request, std::string_view name, std::string_view etag,
                        bool weak) {
  ListMatch result = ListMatch::kAbsent;
  for (const HeaderField& h : request.headers) {
    if (!equalsIgnoreCase(h.name, name)) continue;
    std::string_view value = trimOws(h.value);
    if (value == "*" || entityTagListMatches(value, etag, weak)) return ListMatch::kMatch;
    result = ListMatch::kNoMatch;
  }
  return result;
}

std::optional<time_t> dateHeader(const Request& request, std::string_view name) {
  std::string_view value = request.header(name);
  if (value.empty()) return std::nullopt;
  return common::parseHttpDate(trimOws(value));
}

}  // namespace

bool entityTagListMatches(std::string_view list, std::string_view etag, bool weak) {
  bool ours_weak = etag.starts_with("W/");
  std::string_view our_opaque = ours_weak ? etag.substr(2) : etag;
  size_t i = 0;
  while (i < list.size()) {
    char c = list[i];
    if (c == ' ' || c == '\t' || c == ',') {
      ++i;
      continue;
    }
    bool theirs_weak = false;
    if (list.substr(i).starts_with("W/")) {
      theirs_weak = true;
      i += 2;
    }
    if (i >= list.size() || list[i] != '"') return false;  // malformed: nothing matches
    size_t close = list.find('"', i + 1);
    if (close == std::string_view::npos) return false;
    std::string_view opaque = list.substr(i, close - i + 1);
    i = close + 1;
    if (opaque != our_opaque) continue;
    if (weak || (!theirs_weak && !ours_weak)) return true;
  }
  return false;
}

Precondition evaluatePreconditions(const Request& request, const Validators& v) {
  // §13.2.2 step 1-2: If-Match, else If-Unmodified-Since.
  ListMatch if_match = matchAllLines(request, "if-match", v.etag, /*weak=*/false);
  if (if_match == ListMatch::kNoMatch) return Precondition::kFailed;
  if (if_match == ListMatch::kAbsent) {
    if (auto date = dateHeader(request, "if-unmodified-since")) {
      if (v.last_modified > *date) return Precondition::kFailed;
    }
  }
  // Step 3-4: If-None-Match, else If-Modified-Since (GET/HEAD only; ours always are).
  ListMatch if_none = matchAllLines(request, "if-none-match", v.etag, /*weak=*/true);
  if (if_none == ListMatch::kMatch) return Precondition::kNotModified;
  if (if_none == ListMatch::kAbsent) {
    if (auto date = dateHeader(request, "if-modified-since")) {
      if (v.last_modified <= *date) return Precondition::kNotModified;
    }
  }
  return Precondition::kProceed;
}

bool ifRangeHolds(std::string_view if_range, const Validators& v) {
  if_range = trimOws(if_range);
  if (if_range.empty()) return true;
  if (if_range.front() == '"' || if_range.starts_with("W/")) {
    // A weak tag never satisfies If-Range (strong comparison).
    return !if_range.starts_with("W/") && if_range == v.etag;
  }
  std::optional<time_t> date = common::parseHttpDate(if_range);
  return date.has_value() && *date == v.last_modified;
}

}  // namespace scalws::worker
