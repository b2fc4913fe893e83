// A route's `headers` (merged with [site]'s), compiled: what every response head of the
// route goes through before it is framed.
//
// Applied in one pass: every field named in `remove` or `set` is dropped, then `set`'s
// fields and `add`'s are appended. Merging a route over the site: the route's `set` of a
// name replaces the site's set or add of that name, the route's `remove` of a name drops
// the site's set or add of it too, and both `add` lists apply (site first).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/config/response_config.h"
#include "worker/http/header_field.h"

namespace scalws::worker {

class HeaderEdits {
 public:
  // Either may be null (not both, or the edits are empty).
  HeaderEdits(const common::config::HeaderRulesConfig* site,
              const common::config::HeaderRulesConfig* route);

  bool empty() const { return drop_.empty() && append_.empty(); }
  // `in` edited, into `out` (cleared first). The fields point into `in` and this object.
  void apply(std::span<const HeaderField> in, std::vector<HeaderField>& out) const;

 private:
  std::vector<std::string> drop_;                   // lower-case names
  std::vector<common::config::HeaderPair> append_;  // set's, then add's
};

}  // namespace scalws::worker
