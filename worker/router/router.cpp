#include "worker/router/router.h"

#include <algorithm>

namespace scalws::worker {

using common::config::MatchConfig;
using common::config::RouteConfig;

Router::Router(const std::vector<RouteConfig>& routes) {
  routes_.reserve(routes.size());
  for (size_t i = 0; i < routes.size(); ++i) {
    const MatchConfig& m = routes[i].match;
    routes_.push_back(
        Compiled{&m, m.hosts.empty(), m.methods.empty(), m.scheme == MatchConfig::Scheme::kAny});
    has_regex_ = has_regex_ || m.regex != nullptr;
    int index = static_cast<int>(i);
    if (m.exact) {
      exact_[*m.exact].push_back(index);
    } else if (m.prefix) {
      size_t len = m.prefix->size();
      auto it = std::find_if(prefixes_.begin(), prefixes_.end(),
                             [&](const PrefixGroup& g) { return g.length == len; });
      if (it == prefixes_.end()) {
        prefixes_.push_back(PrefixGroup{len, {}});
        it = prefixes_.end() - 1;
      }
      it->by_prefix[*m.prefix].push_back(index);
    } else {
      general_.push_back(index);
    }
  }
}

bool Router::hostMatches(const std::vector<std::string>& hosts, std::string_view host) {
  for (const std::string& h : hosts) {
    if (h.size() > 2 && h[0] == '*' && h[1] == '.') {
      std::string_view suffix = std::string_view(h).substr(1);  // ".example.com"
      if (host.size() > suffix.size() && host.ends_with(suffix)) return true;
    } else if (host == h) {
      return true;
    }
  }
  return false;
}

bool Router::methodMatches(const std::vector<std::string>& methods, std::string_view method) {
  for (const std::string& m : methods) {
    if (m == method) return true;
    // A GET route answers HEAD too, as with nginx's limit_except.
    if (method == "HEAD" && m == "GET") return true;
  }
  return false;
}

bool Router::fullMatch(int index, const Request& r, Captured& captured) const {
  const Compiled& c = routes_[static_cast<size_t>(index)];
  const MatchConfig& m = *c.match;
  if (m.exact && r.path != *m.exact) return false;
  if (m.prefix && !r.path.starts_with(*m.prefix)) return false;
  if (m.suffix && !r.path.ends_with(*m.suffix)) return false;
  if (!c.any_host && !hostMatches(m.hosts, r.host)) return false;
  if (!c.any_method && !methodMatches(m.methods, r.method_name)) return false;
  if (!c.any_scheme &&
      ((r.peer != nullptr && r.peer->tls) != (m.scheme == MatchConfig::Scheme::kHttps))) {
    return false;
  }
  if (m.regex) {
    if (captured.captures == nullptr) return m.regex->matches(r.path);
    if (!m.regex->match(r.path, *captured.captures)) return false;
    captured.route = index;
  }
  return true;
}

int Router::firstFullMatch(const std::vector<int>& candidates, const Request& r, int bound,
                           Captured& captured) const {
  for (int i : candidates) {
    if (i >= bound) break;  // candidates are in config order
    if (fullMatch(i, r, captured)) return i;
  }
  return -1;
}

int Router::match(const Request& r, common::RegexCaptures* captures) const {
  int best = static_cast<int>(routes_.size());
  // A regex route that matched and then lost to an earlier route leaves its groups behind;
  // they are the winner's only when the winner is the last regex route that matched (each
  // later winner has a smaller index, so it was tried after).
  Captured captured{-1, captures};
  auto consider = [&](const std::vector<int>& candidates) {
    int found = firstFullMatch(candidates, r, best, captured);
    if (found >= 0) best = found;
  };
  if (!exact_.empty()) {
    if (auto it = exact_.find(r.path); it != exact_.end()) consider(it->second);
  }
  for (const PrefixGroup& g : prefixes_) {
    if (r.path.size() < g.length) continue;
    if (auto it = g.by_prefix.find(r.path.substr(0, g.length)); it != g.by_prefix.end()) {
      consider(it->second);
    }
  }
  consider(general_);
  if (best == static_cast<int>(routes_.size())) return -1;
  if (captures != nullptr && captured.route != best) *captures = {};
  return best;
}

}  // namespace scalws::worker
