// The template of a redirect's `to` and of a route's `rewrite`: literal URI text with
// placeholders, parsed (and checked) once when the config loads, expanded per request.
//
//   {host}   the request's host, lower-case, without the port
//   {uri}    the path and query as the client sent them (percent-encoding kept)
//   {path}   the request's path (after any rewrite), percent-encoded where a path needs it
//   {query}  the query (after any rewrite), without "?"; empty when there is none
//   $0..$9   the whole match and the groups of the route's `match.regex`
//   $$       a "$"
//
// Captured text comes from the decoded path, so it is percent-encoded as it is written:
// as a path segment before the first "?" of the result, as a query component after it
// ("&", "=", "+" and "#" included). A template holds only visible ASCII; a literal "{" or
// "}" outside a placeholder, a space or a "$" before anything else is refused. A rewrite
// starts with "/" (or {path}, {uri}) and has no fragment; a redirect also takes an
// absolute URL ("https://..."), a scheme-relative one ("//host/...") and a fragment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/regex/regex.h"
#include "common/status.h"

namespace scalws::common::config {

class UriTemplate {
 public:
  enum class Kind { kRedirect, kRewrite };

  // What the placeholders stand for in one request. `uri` and `query` are as received (or
  // as a rewrite made them), `path` decoded; `captures` may be null when the route has no
  // regex (the loader refuses $N then).
  struct Values {
    std::string_view host;
    std::string_view uri;
    std::string_view path;
    std::string_view query;
    const RegexCaptures* captures = nullptr;
  };

  UriTemplate() = default;
  // The message of a refused template says what and where (offset in the text).
  static Result<UriTemplate> parse(std::string_view text, Kind kind);

  const std::string& text() const { return text_; }
  // The highest $N used (0 when none, or only $0): the route's regex must have as many
  // groups.
  uint32_t highestCapture() const { return highest_capture_; }
  bool usesCaptures() const { return uses_captures_; }
  // Whether the query is placed by the template itself ({query} or {uri}).
  bool placesQuery() const { return places_query_; }
  // Whether a literal "?" starts a new query, and whether the text ends with one (a
  // rewrite that ends in "?" drops the old query: nginx's rule).
  bool hasQuery() const { return has_query_; }
  bool endsWithQuestionMark() const { return ends_with_question_mark_; }

  // Appends the expansion to `out`; false (and `out` undefined) past `max` bytes.
  bool expand(const Values& values, std::string& out, size_t max) const;

 private:
  enum class Part : uint8_t { kLiteral, kHost, kUri, kPath, kQuery, kCapture };
  struct Piece {
    Part part = Part::kLiteral;
    uint8_t group = 0;    // kCapture
    std::string literal;  // kLiteral
  };

  std::string text_;
  std::vector<Piece> pieces_;
  uint32_t highest_capture_ = 0;
  bool uses_captures_ = false;
  bool places_query_ = false;
  bool has_query_ = false;
  bool ends_with_question_mark_ = false;
};

// Percent-encodes `text` for a path (RFC 3986 pchar and "/" kept) or a query component
// (unreserved and a few sub-delims kept; "&", "=", "+", "#", "%" and "?" encoded).
void appendPathEncoded(std::string& out, std::string_view text);
void appendQueryEncoded(std::string& out, std::string_view text);

}  // namespace scalws::common::config
