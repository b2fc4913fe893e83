#include "worker/handlers/cache/stored_response.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <vector>

#include "common/http_date.h"
#include "worker/handlers/static/byte_range.h"
#include "worker/handlers/static/conditional_request.h"
#include "worker/http/error_response.h"

namespace scalws::worker::cache {
namespace {

// What an answer adds to the stored fields: Age, Cache-Status, Content-Range.
constexpr size_t kExtraFields = 3;
constexpr size_t kInlineFields = 24;

// RFC 9110 §15.4.5: what a 304 repeats of the response it stands for.
bool repeatedIn304(std::string_view name) {
  for (std::string_view kept :
       {"cache-control", "content-location", "etag", "expires", "vary", "last-modified"}) {
    if (equalsIgnoreCase(name, kept)) return true;
  }
  return false;
}

void sendBodySlice(ResponseWriter& writer, const StoredBody& body, uint64_t first,
                   uint64_t length) {
  if (length == 0) return;
  if (body.segments.empty()) {
    writer.sendBody(body.copy.substr(first, length), BodyLifetime::kCopy);
    return;
  }
  uint64_t at = 0;
  for (std::string_view segment : body.segments) {
    uint64_t end = at + segment.size();
    if (end > first && at < first + length) {
      uint64_t from = first > at ? first - at : 0;
      uint64_t to = std::min<uint64_t>(segment.size(), first + length - at);
      writer.sendBodyRetained(segment.substr(from, to - from), body.owner);
    }
    at = end;
  }
}

}  // namespace

std::string_view storedField(std::string_view head, std::string_view name) {
  std::array<HeaderField, kMaxStoredFields> fields;
  size_t count = 0;
  if (!splitStoredHead(head, fields, count)) return {};
  for (size_t i = 0; i < count; ++i) {
    if (equalsIgnoreCase(fields[i].name, name)) return fields[i].value;
  }
  return {};
}

void sendStoredResponse(Request& request, ResponseWriter& writer, const EntryView& entry,
                        const StoredBody& body, StoredAnswerOptions options) noexcept {
  // Most stored heads have a handful of fields: room for those stays on the stack, since
  // an array for the most a head may have would be initialised on every hit.
  HeaderField inline_fields[kInlineFields];
  std::vector<HeaderField> more;
  std::span<HeaderField> fields(inline_fields);
  size_t stored = std::min(storedFieldCount(entry.head), kMaxStoredFields);
  if (stored + kExtraFields > kInlineFields) {
    more.resize(stored + kExtraFields);
    fields = more;
  }
  size_t count = 0;
  if (!splitParsedHead(entry.head, fields.first(stored), count)) {
    sendError(request, writer, 502);  // the entry was checked when found: cannot happen
    return;
  }
  uint64_t age_ms = currentAgeMs(entry.info.freshness, options.now_ms);
  char age[24];
  size_t age_len =
      static_cast<size_t>(std::to_chars(age, age + sizeof(age), age_ms / 1000).ptr - age);
  if (!options.status.ttl) {
    options.status.ttl =
        (static_cast<int64_t>(entry.info.freshness.lifetime_ms) - static_cast<int64_t>(age_ms)) /
        1000;
  }
  char status_value[kCacheStatusMax];
  size_t status_len = renderCacheStatus(options.status, status_value);

  std::string_view etag;
  time_t last_modified = 0;
  for (size_t i = 0; i < count; ++i) {
    if (equalsIgnoreCase(fields[i].name, "etag")) etag = fields[i].value;
    if (equalsIgnoreCase(fields[i].name, "last-modified")) {
      last_modified = common::parseHttpDate(fields[i].value).value_or(0);
    }
  }
  auto extras = [&](size_t& n) {
    fields[n++] = HeaderField{"Age", std::string_view(age, age_len)};
    if (options.cache_status_header) {
      fields[n++] = HeaderField{"Cache-Status", std::string_view(status_value, status_len)};
    }
  };

  Validators validators{etag, last_modified};
  bool validated = entry.info.status == 200 && (!etag.empty() || last_modified != 0);
  if (validated) {
    switch (evaluatePreconditions(request, validators)) {
      case Precondition::kFailed:
        sendError(request, writer, 412);
        return;
      case Precondition::kNotModified: {
        size_t n = 0;
        for (size_t i = 0; i < count; ++i) {
          if (repeatedIn304(fields[i].name)) fields[n++] = fields[i];
        }
        extras(n);
        ResponseHead head;
        head.status = 304;
        head.headers = std::span<const HeaderField>(fields.data(), n);
        writer.sendHead(head);
        writer.finish();
        return;
      }
      case Precondition::kProceed:
        break;
    }
  }

  uint64_t length = entry.info.body_len;
  RangeRequest ranges;
  std::string_view range = request.header("range");
  if (request.method == Method::kGet && entry.info.status == 200 && !range.empty() &&
      ifRangeHolds(request.header("if-range"), validators)) {
    ranges = parseRange(range, length);
  }
  if (ranges.kind == RangeRequest::Kind::kUnsatisfiable) {
    char value[40];
    int n = std::snprintf(value, sizeof(value), "bytes */%llu",
                          static_cast<unsigned long long>(length));
    const HeaderField extra[] = {
        {"Content-Range", std::string_view(value, static_cast<size_t>(n))}};
    sendError(request, writer, 416, extra);
    return;
  }
  ResponseHead head;
  head.status = entry.info.status;
  uint64_t first = 0;
  uint64_t send = length;
  char content_range[64];
  size_t n = count;
  extras(n);
  if (ranges.kind == RangeRequest::Kind::kRanges && ranges.count == 1) {
    first = ranges.ranges[0].first;
    send = ranges.ranges[0].length;
    int len = std::snprintf(content_range, sizeof(content_range), "bytes %llu-%llu/%llu",
                            static_cast<unsigned long long>(first),
                            static_cast<unsigned long long>(ranges.ranges[0].last()),
                            static_cast<unsigned long long>(length));
    fields[n++] =
        HeaderField{"Content-Range", std::string_view(content_range, static_cast<size_t>(len))};
    head.status = 206;
  }
  head.headers = std::span<const HeaderField>(fields.data(), n);
  head.content_length = send;
  writer.sendHead(head);
  if (!request.isHead()) sendBodySlice(writer, body, first, send);
  writer.finish();
}

}  // namespace scalws::worker::cache
