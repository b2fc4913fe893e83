// Routes compiled at load: routes are tried in config order,
// and the answer is always the first route whose whole match holds. Exact paths and
// prefixes are found by hashing; only routes without a path condition (and the
// candidates found) are checked one by one. A regex is tried last within a route, after
// its cheaper conditions held.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/config/site_config.h"
#include "worker/http/request.h"

namespace scalws::worker {

class Router {
 public:
  explicit Router(const std::vector<common::config::RouteConfig>& routes);

  // Index of the first matching route, or -1 (404). When that route has a regex and
  // `captures` is given, its groups (views into request.path) are written there;
  // otherwise `captures` is cleared.
  int match(const Request& request, common::RegexCaptures* captures = nullptr) const;
  // Whether any route has a regex (whether captures are worth asking for).
  bool hasRegex() const { return has_regex_; }

 private:
  struct Compiled {
    const common::config::MatchConfig* match;
    bool any_host = true;
    bool any_method = true;
    bool any_scheme = true;
  };
  // The groups of the last regex route that matched, and which route that was.
  struct Captured {
    int route = -1;
    common::RegexCaptures* captures = nullptr;
  };
  bool fullMatch(int index, const Request& request, Captured& captured) const;
  static bool hostMatches(const std::vector<std::string>& hosts, std::string_view host);
  static bool methodMatches(const std::vector<std::string>& methods, std::string_view method);
  int firstFullMatch(const std::vector<int>& candidates, const Request& request, int bound,
                     Captured& captured) const;

  std::vector<Compiled> routes_;
  std::unordered_map<std::string_view, std::vector<int>> exact_;
  // Prefix routes grouped by prefix length, longest first is irrelevant: order is by index.
  struct PrefixGroup {
    size_t length;
    std::unordered_map<std::string_view, std::vector<int>> by_prefix;
  };
  std::vector<PrefixGroup> prefixes_;
  std::vector<int> general_;  // routes without exact or prefix
  bool has_regex_ = false;
};

}  // namespace scalws::worker
