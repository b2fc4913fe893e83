// Answers a request from a stored entry (stored_entry.h) through a ResponseWriter: the
// stored head copied as it is, with Age (RFC 9111 §5.1) and Cache-Status (RFC 9211) added,
// and the client's own preconditions and Range applied to it (RFC 9110 §13, §14):
//
// - If-None-Match / If-Modified-Since (and If-Match / If-Unmodified-Since) against the
//   stored ETag and Last-Modified: 304 with the fields §15.4.5 asks to repeat, or 412;
// - Range on a stored 200: one satisfiable range → 206 with Content-Range, unsatisfiable →
//   416; several ranges are answered with the whole body (a server may ignore Range);
// - HEAD: the head alone (the writer drops the body).
// The body comes from the copy in `body` or, for a pinned entry, from `segments` in the
// shared mapping, sent with sendBodyRetained() so `owner` (the pin) is held until the
// bytes left.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "worker/handlers/cache/cache_status.h"
#include "worker/handlers/cache/stored_entry.h"
#include "worker/http/ref_counted.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"

namespace scalws::worker::cache {

struct StoredBody {
  std::string_view copy;                       // the whole body, when copied
  std::span<const std::string_view> segments;  // else its pieces in the mapping
  RefCounted* owner = nullptr;                 // retained while `segments` are sent
};

struct StoredAnswerOptions {
  CacheStatus status;
  bool cache_status_header = true;
  int64_t now_ms = 0;  // wall clock, for Age and ttl
};

void sendStoredResponse(Request& request, ResponseWriter& writer, const EntryView& entry,
                        const StoredBody& body, StoredAnswerOptions options) noexcept;

// The first stored field named `name` in a rendered head, or empty.
std::string_view storedField(std::string_view head, std::string_view name);

}  // namespace scalws::worker::cache
