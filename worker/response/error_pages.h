// A route's `errors` (merged with [site]'s), compiled: the page an error status is
// answered with instead of the built-in one.
//
// Every error the server makes goes through sendError (error_response.h), which asks
// here first: 404 without a route, 403 by `allow`, 413, the static handler's 403/404/405,
// the proxy's and PHP's 502/503/504, ... An upstream's (or PHP's) own error response is
// its answer, not ours, and passes as it is (as nginx does without proxy_intercept_errors).
//
// The page keeps the original status and the fields the error needs (Allow, Retry-After,
// Content-Range); its type comes from its extension. It is read through the loop's
// open-file cache beneath its root (openat2, RESOLVE_BENEATH), like a static file, so a
// cached page costs a statx. A page that is missing or unreadable falls back to the
// built-in page (logged at debug; a page missing when the config is loaded is logged as
// a warning then).
//
// Lookup: the route's exact status, the route's class ("5xx"), then the site's exact
// status and the site's class.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/handlers/static/doc_root.h"
#include "worker/handlers/static/mime_types.h"
#include "worker/handlers/static/open_file_cache.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"

namespace scalws::worker {

// A directory error pages are read beneath, opened once with the snapshot.
class ErrorRoot {
 public:
  static common::Result<std::unique_ptr<ErrorRoot>> open(const std::string& path);

  const DocRoot& dir() const { return dir_; }
  std::string_view scope() const { return scope_; }
  const MimeTypes& mime() const { return mime_; }

 private:
  explicit ErrorRoot(DocRoot dir);

  DocRoot dir_;
  MimeTypes mime_;
  std::string scope_;  // open-file cache key prefix, as a static route on this root has
};

class ErrorPages {
 public:
  struct Page {
    uint16_t status = 0;       // or 0 for a class
    uint8_t status_class = 0;  // 4, 5
    std::string path;          // relative to the root, NUL-terminated by std::string
    const ErrorRoot* root = nullptr;
  };

  ErrorPages(std::vector<Page> route_pages, std::vector<Page> site_pages);

  const Page* find(uint16_t status) const;

  // Answers `status` with its page through `writer`: false, with nothing sent, when there
  // is no page for it or it cannot be opened.
  bool send(Request& request, ResponseWriter& writer, uint16_t status,
            std::span<const HeaderField> extra, bool close) const noexcept;
  // The same with the cache and clock given (what send() takes from the request's loop).
  bool send(Request& request, ResponseWriter& writer, uint16_t status,
            std::span<const HeaderField> extra, bool close, OpenFileCache& cache,
            uint64_t now_ms) const noexcept;

 private:
  static const Page* findIn(std::span<const Page> pages, uint16_t status);

  std::vector<Page> route_pages_;
  std::vector<Page> site_pages_;
};

}  // namespace scalws::worker
