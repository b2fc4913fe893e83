#include "worker/http/rewrite.h"

#include <string>

#include "worker/http/path_normalizer.h"

namespace scalws::worker {
namespace {

// A rewritten target must fit a request line as the server accepts one anyway.
constexpr size_t kMaxRewritten = 8192;

}  // namespace

common::config::UriTemplate::Values templateValues(const Request& r) {
  return {r.host, r.originalUri(), r.path, r.query, r.captures};
}

const char* applyRewrite(Request& r, const common::config::UriTemplate& rewrite, bool first) {
  // One buffer per thread: a rewrite allocates only what the request keeps (its arena).
  thread_local std::string out;
  out.clear();
  if (!rewrite.expand(templateValues(r), out, kMaxRewritten)) return "the result is too long";
  std::string_view result = out;
  // The "?" that drops the old query is not part of the new one.
  if (rewrite.endsWithQuestionMark() && !result.empty()) result.remove_suffix(1);
  size_t q = result.find('?');
  std::string_view path = result.substr(0, q);
  std::string_view query = q == std::string_view::npos ? std::string_view() : result.substr(q + 1);
  std::string joined;  // only when an old query is appended
  if (rewrite.placesQuery()) {
    // As the template wrote it.
  } else if (!rewrite.hasQuery()) {
    query = r.query;
  } else if (rewrite.endsWithQuestionMark()) {
    // As the template wrote it, without the old one.
  } else if (!r.query.empty()) {
    joined.reserve(query.size() + 1 + r.query.size());
    joined.append(query);
    if (!query.empty()) joined.push_back('&');
    joined.append(r.query);
    query = joined;
  }
  std::string_view raw_path = r.arena->copy(path);
  PathNormalization norm = normalizePath(raw_path, *r.arena);
  if (!norm.ok) return "the result is not a valid path";
  if (first && (r.target.empty() || r.target.front() != '/')) {
    // The client's target stays readable in origin form once raw_path changes.
    r.target = r.originalUri();
  }
  r.query = query.data() == r.query.data() ? r.query : r.arena->copy(query);
  r.raw_path = raw_path;
  r.path = norm.path;
  return nullptr;
}

}  // namespace scalws::worker
