#include "common/config/parse_context.h"

#include <algorithm>
#include <filesystem>

namespace scalws::common::config {

void ParseContext::error(const SourceLocation& where, std::string message) {
  errors_.push_back(Error{where, std::move(message)});
}

std::string ParseContext::resolvePath(std::string_view path) const {
  if (!path.empty() && path.front() == '/') return std::string(path);
  return (std::filesystem::path(base_dir_) / std::filesystem::path(path))
      .lexically_normal()
      .string();
}

Status ParseContext::toStatus() const {
  if (errors_.empty()) return okStatus();
  std::vector<const Error*> sorted;
  sorted.reserve(errors_.size());
  for (const Error& e : errors_) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Error* a, const Error* b) {
    if (a->where.line != b->where.line) return a->where.line < b->where.line;
    return a->where.column < b->where.column;
  });
  std::string message;
  for (const Error* e : sorted) {
    if (!message.empty()) message += '\n';
    message += e->where.toString();
    message += ": ";
    message += e->message;
  }
  return invalidArgument(std::move(message));
}

}  // namespace scalws::common::config
