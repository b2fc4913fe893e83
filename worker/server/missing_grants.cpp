#include "worker/server/missing_grants.h"

namespace scalws::worker {

void MissingGrants::add(const common::config::SourceLocation& where, std::string_view field,
                        std::string_view what, const std::string& name) {
  if (!reported_.insert(name).second) return;
  if (!text_.empty()) text_ += '\n';
  text_ += where.toString();
  text_ += ": ";
  text_ += field;
  text_ += ": no ";
  text_ += what;
  text_ += " is assigned to this instance as \"" + name + "\"";
}

common::Status MissingGrants::status() const {
  if (text_.empty()) return common::Status();
  return common::invalidArgument(text_);
}

}  // namespace scalws::worker
