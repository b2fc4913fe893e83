#include "worker/tls/sni_map.h"

namespace scalws::worker::tls {

bool SniMap::add(std::string_view name, size_t index) {
  if (name.size() > 2 && name.substr(0, 2) == "*.") {
    return wildcard_.emplace(std::string(name.substr(2)), index).second;
  }
  return exact_.emplace(std::string(name), index).second;
}

size_t SniMap::find(std::string_view server_name) const {
  if (!server_name.empty() && server_name.back() == '.') server_name.remove_suffix(1);
  // RFC 6066 §3: a host name of up to 255 bytes; anything longer matches nothing.
  if (server_name.empty() || server_name.size() > 255) return kDefault;
  char lower[256];
  for (size_t i = 0; i < server_name.size(); ++i) {
    char c = server_name[i];
    lower[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  }
  std::string key(lower, server_name.size());
  if (auto it = exact_.find(key); it != exact_.end()) return it->second;
  size_t dot = key.find('.');
  if (dot == std::string::npos || dot == 0) return kDefault;
  if (auto it = wildcard_.find(key.substr(dot + 1)); it != wildcard_.end()) return it->second;
  return kDefault;
}

}  // namespace scalws::worker::tls
