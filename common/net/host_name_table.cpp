#include "common/net/host_name_table.h"

namespace scalws::common::net {

bool HostNameTable::add(std::string_view name, uint32_t owner) {
  if (name.size() > 2 && name.substr(0, 2) == "*.") {
    return wildcard_.emplace(std::string(name.substr(2)), owner).second;
  }
  return exact_.emplace(std::string(name), owner).second;
}

uint32_t HostNameTable::claimant(std::string_view host) const {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (host.empty()) return kNone;
  if (auto it = exact_.find(host); it != exact_.end()) return it->second;
  size_t dot = host.find('.');
  if (dot == std::string_view::npos || dot == 0) return kNone;
  if (auto it = wildcard_.find(host.substr(dot + 1)); it != wildcard_.end()) return it->second;
  return kNone;
}

bool normalizeHostName(std::string_view in, std::string& out) {
  if (!in.empty() && in.back() == '.') in.remove_suffix(1);
  if (in.empty() || in.size() > 253) return false;
  std::string name(in);
  char previous = '.';
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok || (c == '.' && previous == '.')) return false;
    previous = c;
  }
  out = std::move(name);
  return true;
}

}  // namespace scalws::common::net
