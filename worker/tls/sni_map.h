// Server name → certificate, as a TLS listener with several certificates chooses them
// (RFC 6066 §3). Exact names win over wildcards; a wildcard "*.example.com" stands for
// exactly one label (RFC 6125 §6.4.3: "a.example.com", not "example.com" nor
// "a.b.example.com"); a name nothing matches, or no SNI at all, gets the default (index 0).
// Built once per listener with the config snapshot; lookups are read-only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace scalws::worker::tls {

class SniMap {
 public:
  static constexpr size_t kDefault = 0;

  // `name` is lower-case ("a.example.com" or "*.example.com"). The first certificate to
  // claim a name keeps it; returns false for a name already taken.
  bool add(std::string_view name, size_t index);
  // The certificate for `server_name` as the client sent it (any case, an optional
  // trailing dot); kDefault when nothing matches or the name is empty.
  size_t find(std::string_view server_name) const;
  size_t size() const { return exact_.size() + wildcard_.size(); }

 private:
  std::unordered_map<std::string, size_t> exact_;
  std::unordered_map<std::string, size_t> wildcard_;  // keyed by what follows "*."
};

}  // namespace scalws::worker::tls
