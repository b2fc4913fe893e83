// The routes of an instance worker's config that name a grant the controller did not give
// (an app, a PHP pool): one line per name, at the first route naming it, all refused at
// once so an operator sees every missing name in one error.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "common/config/config_types.h"
#include "common/status.h"

namespace scalws::worker {

class MissingGrants {
 public:
  // The route at `where` names `name` in `field` ("route.app.name"), and no `what` ("app")
  // of that name is assigned to the instance. A name already reported is not repeated.
  void add(const common::config::SourceLocation& where, std::string_view field,
           std::string_view what, const std::string& name);
  bool empty() const { return text_.empty(); }
  // Ok when nothing is missing; else invalid-argument with one line per missing name.
  common::Status status() const;

 private:
  std::string text_;
  std::set<std::string> reported_;
};

}  // namespace scalws::worker
