// Routes compiled at load: routes are tried in config order,
// and the answer is always the first route whose whole match holds. Exact paths and
// prefixes are found by hashing; only routes without a path condition (and the
// candidates found) are checked one by one.
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

  // Index of the first matching route, or -1 (404).
  int match(const Request& request) const;

 private:
  struct Compiled {
    const common::config::MatchConfig* match;
    bool any_host = true;
    bool any_method = true;
  };
  bool fullMatch(int index, const Request& request) const;
  static bool hostMatches(const std::vector<std::string>& hosts, std::string_view host);
  static bool methodMatches(const std::vector<std::string>& methods, std::string_view method);
  int firstFullMatch(const std::vector<int>& candidates, const Request& request, int bound) const;

  std::vector<Compiled> routes_;
  std::unordered_map<std::string_view, std::vector<int>> exact_;
  // Prefix routes grouped by prefix length, longest first is irrelevant: order is by index.
  struct PrefixGroup {
    size_t length;
    std::unordered_map<std::string_view, std::vector<int>> by_prefix;
  };
  std::vector<PrefixGroup> prefixes_;
  std::vector<int> general_;  // routes without exact or prefix
};

}  // namespace scalws::worker
