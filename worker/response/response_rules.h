// What a route does to its responses (headers, errors, compress), compiled once per config
// snapshot from the route's keys layered over [site]'s.
//
// A route whose effective rules are empty gets no ResponseRules at all (a null pointer):
// the dispatcher then hands the handler the stream itself, and no request of the route
// does any work for these features. Routes that only inherit [site]'s share its object.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/response/compress/compress_rules.h"
#include "worker/response/error_pages.h"
#include "worker/response/header_edits.h"

namespace scalws::worker {

class ResponseRules {
 public:
  const HeaderEdits* headers() const { return headers_ ? &*headers_ : nullptr; }
  const ErrorPages* errors() const { return errors_ ? &*errors_ : nullptr; }
  const compress::CompressRules* compress() const { return compress_ ? &*compress_ : nullptr; }
  // Responses pass through a ResponseFilter (headers or compression); error pages alone
  // need none (sendError serves them).
  bool filtersResponses() const { return headers_.has_value() || compress_.has_value(); }

 private:
  friend class ResponseRulesSet;
  bool empty() const { return !headers_ && !errors_ && !compress_; }

  std::optional<HeaderEdits> headers_;
  std::optional<ErrorPages> errors_;
  std::optional<compress::CompressRules> compress_;
};

class ResponseRulesSet {
 public:
  // Opens every error page root (before any sandbox); errors name the config position.
  static common::Result<std::unique_ptr<ResponseRulesSet>> build(
      const common::config::SiteConfig& site);

  // [site]'s rules alone (for answers no route made); null when [site] has none.
  const ResponseRules* site() const { return site_; }
  // Route `index`'s; null when it has none.
  const ResponseRules* route(size_t index) const { return routes_[index]; }

 private:
  ResponseRulesSet() = default;
  common::Result<const ErrorRoot*> rootFor(const std::string& path,
                                           const common::config::SourceLocation& where);
  common::Status pagesOf(const common::config::ErrorPagesConfig& config,
                         std::vector<ErrorPages::Page>& out);
  // `route` null: the site's own rules.
  common::Result<const ResponseRules*> compile(const common::config::ResponseConfig& site,
                                               const common::config::ResponseConfig* route);

  std::vector<std::unique_ptr<ErrorRoot>> roots_;
  std::vector<std::string> root_paths_;  // beside roots_
  std::vector<std::unique_ptr<ResponseRules>> owned_;
  const ResponseRules* site_ = nullptr;
  std::vector<const ResponseRules*> routes_;
};

}  // namespace scalws::worker
