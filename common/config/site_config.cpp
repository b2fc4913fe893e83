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

std::vector<TlsCertificateConfig> TlsConfig::allCertificates() const {
  std::vector<TlsCertificateConfig> all;
  all.reserve(1 + certificates.size());
  all.push_back(TlsCertificateConfig{cert, key, ocsp, names, where});
  all.insert(all.end(), certificates.begin(), certificates.end());
  return all;
}

}  // namespace scalws::common::config
