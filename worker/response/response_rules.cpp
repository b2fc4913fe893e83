#include "worker/response/response_rules.h"

#include "common/log.h"

namespace scalws::worker {

using common::Result;
using common::config::ResponseConfig;

Result<const ErrorRoot*> ResponseRulesSet::rootFor(const std::string& path,
                                                   const common::config::SourceLocation& where) {
  for (size_t i = 0; i < root_paths_.size(); ++i) {
    if (root_paths_[i] == path) return roots_[i].get();
  }
  auto root = ErrorRoot::open(path);
  if (!root.ok()) {
    return common::invalidArgument(where.toString() + ": error pages: " + root.status().message());
  }
  root_paths_.push_back(path);
  roots_.push_back(std::move(root).value());
  return roots_.back().get();
}

common::Status ResponseRulesSet::pagesOf(const common::config::ErrorPagesConfig& config,
                                         std::vector<ErrorPages::Page>& out) {
  for (const common::config::ErrorPageConfig& page : config.pages) {
    auto root = rootFor(page.root, page.where);
    if (!root.ok()) return root.status();
    FileIdentity id;
    if (!(*root)->dir().statPath(page.page.c_str(), id) || !id.isRegular()) {
      // Not fatal: the page may be deployed after the config; until then the built-in
      // page answers.
      LOG_WARN("%s: error page \"/%s\" is not a file beneath %s (the built-in page answers)",
               page.where.toString().c_str(), page.page.c_str(), page.root.c_str());
    }
    out.push_back(ErrorPages::Page{page.status, page.status_class, page.page, *root});
  }
  return common::Status();
}

Result<const ResponseRules*> ResponseRulesSet::compile(const ResponseConfig& site,
                                                       const ResponseConfig* route) {
  auto rules = std::make_unique<ResponseRules>();
  const auto* site_headers = site.headers ? &*site.headers : nullptr;
  const auto* route_headers = route != nullptr && route->headers ? &*route->headers : nullptr;
  if (site_headers != nullptr || route_headers != nullptr) {
    HeaderEdits edits(site_headers, route_headers);
    if (!edits.empty()) rules->headers_.emplace(std::move(edits));
  }
  std::vector<ErrorPages::Page> route_pages;
  std::vector<ErrorPages::Page> site_pages;
  if (route != nullptr && route->errors) {
    common::Status status = pagesOf(*route->errors, route_pages);
    if (!status.ok()) return status;
  }
  if (site.errors) {
    common::Status status = pagesOf(*site.errors, site_pages);
    if (!status.ok()) return status;
  }
  if (!route_pages.empty() || !site_pages.empty()) {
    rules->errors_.emplace(std::move(route_pages), std::move(site_pages));
  }
  // A route's compress (true, false or a table) replaces the site's.
  const auto& compress = route != nullptr && route->compress ? route->compress : site.compress;
  if (compress && compress->enabled) rules->compress_.emplace(*compress);
  if (rules->empty()) return static_cast<const ResponseRules*>(nullptr);
  owned_.push_back(std::move(rules));
  return static_cast<const ResponseRules*>(owned_.back().get());
}

Result<std::unique_ptr<ResponseRulesSet>> ResponseRulesSet::build(
    const common::config::SiteConfig& site) {
  std::unique_ptr<ResponseRulesSet> set(new ResponseRulesSet());
  std::string errors;
  auto site_rules = set->compile(site.response, nullptr);
  if (!site_rules.ok()) {
    errors = site_rules.status().message();
  } else {
    set->site_ = *site_rules;
  }
  for (const common::config::RouteConfig& route : site.routes) {
    if (route.response.empty()) {
      set->routes_.push_back(set->site_);
      continue;
    }
    auto rules = set->compile(site.response, &route.response);
    if (!rules.ok()) {
      if (!errors.empty()) errors += '\n';
      errors += rules.status().message();
      set->routes_.push_back(nullptr);
      continue;
    }
    set->routes_.push_back(*rules);
  }
  if (!errors.empty()) return common::invalidArgument(errors);
  return set;
}

}  // namespace scalws::worker
