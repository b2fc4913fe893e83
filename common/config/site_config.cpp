#include "common/config/site_config.h"

namespace scalws::common::config {

std::string SourceLocation::toString() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

const ServerConfig& serverOrDefaults(const SiteConfig& site) {
  static const ServerConfig kDefaults;
  return site.server ? *site.server : kDefaults;
}

}  // namespace scalws::common::config
