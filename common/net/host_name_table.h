// HostNameTable: who answers a host name on an address several instances share. The front
// (front/) routes each connection by it, from the TLS ClientHello's SNI or the HTTP/1.1
// Host, and each worker behind the front checks every request's Host or :authority by the
// same table (421 Misdirected Request when the name is another's), so both ends decide
// alike.
//
// Owners are small numbers the caller gives meaning to (an index into its list of
// instances; "this instance" and "another" in a worker). Exact names win over wildcards;
// a wildcard "*.example.com" stands for exactly one label (RFC 6125 §6.4.3: it matches
// "a.example.com", not "example.com" nor "a.b.example.com"); a name nothing matches goes to
// the default owner, when there is one. Built once, then read-only: lookups allocate
// nothing and may run on any number of threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace scalws::common::net {

class HostNameTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // `name` is lower-case ("a.example.com" or "*.example.com"). The first owner to claim a
  // name keeps it; false for a name already taken.
  bool add(std::string_view name, uint32_t owner);
  void setDefault(uint32_t owner) { default_ = owner; }
  uint32_t defaultOwner() const { return default_; }

  // Whoever claims `host` by name (exact, then wildcard), else kNone. `host` is lower-case
  // as the parsers give it (SNI, Host, :authority without port); one trailing dot (a fully
  // qualified name) is ignored.
  uint32_t claimant(std::string_view host) const;
  // claimant(), else the default owner (kNone without one).
  uint32_t find(std::string_view host) const {
    uint32_t owner = claimant(host);
    return owner != kNone ? owner : default_;
  }

  size_t size() const { return exact_.size() + wildcard_.size(); }
  bool empty() const { return size() == 0 && default_ == kNone; }

 private:
  std::map<std::string, uint32_t, std::less<>> exact_;
  std::map<std::string, uint32_t, std::less<>> wildcard_;  // keyed by what follows "*."
  uint32_t default_ = kNone;
};

// The host name of a TLS server_name or an HTTP authority, lower-cased in place of a copy:
// ASCII letters are folded, a trailing dot dropped. False (and `out` untouched) for a name
// that is not a DNS-like name (empty, over 253 bytes, a byte outside letters, digits, '-',
// '.', '_', or an empty label).
bool normalizeHostName(std::string_view in, std::string& out);

}  // namespace scalws::common::net
