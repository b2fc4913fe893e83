// What a route (or the whole site, [site]) does to the responses it sends, whatever
// action made them: header edits, custom error pages and compression on the fly.
//
// A route's values are layered over the site's when the worker builds its snapshot (the
// rules are in README.md, "Response headers, error pages and compression"): header edits
// and error pages merge, a route's `compress` replaces the site's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config_types.h"

namespace scalws::common::config {

// headers = { set = {...}, add = {...}, remove = [...] }. Names are lower-case tokens;
// applied in that order: every field named in `remove` or `set` goes, then `set`'s
// values, then `add`'s beside whatever the response already had.
struct HeaderRulesConfig {
  std::vector<HeaderPair> set;
  std::vector<HeaderPair> add;  // a name may appear more than once (several fields)
  std::vector<std::string> remove;
  SourceLocation where;
};

// One entry of `errors`: "404" → status 404, "5xx" → every 5xx without an entry of its own.
struct ErrorPageConfig {
  uint16_t status = 0;       // 400..599, or 0 for a class
  uint8_t status_class = 0;  // 4 or 5 when status is 0
  std::string page;          // beneath `root`, without the leading '/': "errors/404.html"
  std::string root;          // absolute: the directory the page is read beneath
  SourceLocation where;
};

// errors = { root = "...", 404 = "/404.html", "5xx" = "/50x.html" }.
struct ErrorPagesConfig {
  std::vector<ErrorPageConfig> pages;  // in file order
  std::string root;                    // absolute; "" when none was given or inherited
  SourceLocation where;
};

enum class CompressEncoding : uint8_t { kBrotli, kZstd, kGzip };

// compress = true | false | { encodings, types, min_size, level }.
struct CompressConfig {
  bool enabled = true;  // compress = false: off (a route turning the site's off)
  // Server preference among encodings the client accepts with the same q.
  std::vector<CompressEncoding> encodings = {CompressEncoding::kBrotli, CompressEncoding::kZstd,
                                             CompressEncoding::kGzip};
  // Media types, lower-case, exact ("text/html") or a whole top-level type ("text/*").
  std::vector<std::string> types = {"text/html",
                                    "text/plain",
                                    "text/css",
                                    "text/javascript",
                                    "text/xml",
                                    "text/markdown",
                                    "text/csv",
                                    "application/javascript",
                                    "application/json",
                                    "application/xml",
                                    "application/rss+xml",
                                    "application/atom+xml",
                                    "application/ld+json",
                                    "application/manifest+json",
                                    "application/wasm",
                                    "image/svg+xml",
                                    "image/x-icon",
                                    "font/ttf",
                                    "font/otf",
                                    "application/vnd.ms-fontobject"};
  Bytes min_size = 1024;  // a response with a smaller Content-Length goes as it is
  int gzip_level = 6;     // 1..9
  int brotli_level = 4;   // 0..11
  int zstd_level = 3;     // 1..19
  SourceLocation where;
};

struct ResponseConfig {
  std::optional<HeaderRulesConfig> headers;
  std::optional<ErrorPagesConfig> errors;
  std::optional<CompressConfig> compress;

  bool empty() const { return !headers && !errors && !compress; }
};

}  // namespace scalws::common::config
