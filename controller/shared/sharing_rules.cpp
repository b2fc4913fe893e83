#include "controller/shared/sharing_rules.h"

#include <algorithm>

#include "controller/instances/instance_config.h"

namespace scalws::controller {

using common::Result;
using common::config::ListenConfig;
using common::config::SiteConfig;

std::string sharedAddressKey(const ListenConfig& listen) {
  bool v6 = listen.host.find(':') != std::string::npos;
  return (v6 ? "[" + listen.host + "]" : listen.host) + ":" + std::to_string(listen.port);
}

namespace {

std::optional<std::string> conflict(std::string message) {
  return std::optional<std::string>(std::move(message));
}

Result<std::optional<std::string>> pairConflict(const ListenConfig& x, const std::string& other,
                                                const ListenConfig& y,
                                                const ClaimedNamesOf& names_of) {
  std::string where = "address " + x.address;
  if (x.host != y.host) return conflict(where + " is already used by instance " + other);
  if (x.tls.has_value() != y.tls.has_value()) {
    return conflict(where + ": instance " + other + " listens there " +
                    (y.tls ? "with" : "without") + " TLS and this listener " +
                    (x.tls ? "with" : "without") + " (an address is all TLS or all plain)");
  }
  if (x.http3 != y.http3) {
    return conflict(where + ": instance " + other + " listens there " +
                    (y.http3 ? "with" : "without") + " HTTP/3 and this listener " +
                    (x.http3 ? "with" : "without") +
                    " (an address serves HTTP/3 to all its instances or to none)");
  }
  // The front reads a connection's first bytes as a ClientHello or a request head; a PROXY
  // header before them would have to be parsed (and trusted) by the front.
  if (x.proxy_protocol || y.proxy_protocol) {
    return conflict(where +
                    ": a PROXY protocol listener needs an address of its own, and instance " +
                    other + " listens there too");
  }
  SCALWS_ASSIGN_OR_RETURN(std::vector<std::string> mine, names_of(x));
  SCALWS_ASSIGN_OR_RETURN(std::vector<std::string> theirs, names_of(y));
  std::sort(theirs.begin(), theirs.end());
  if (mine.empty() && !x.is_default) {
    return conflict(where + " is shared with instance " + other +
                    ": this listener claims no name (give it `names`, or `default = true`)");
  }
  if (theirs.empty() && !y.is_default) {
    return conflict(
        where + " is shared with instance " + other +
        ", whose listener there claims no name and is not the default (give it `names` or "
        "`default = true` first)");
  }
  if (x.is_default && y.is_default) {
    return conflict(where + ": instance " + other + " is already the default there");
  }
  for (const std::string& name : mine) {
    if (std::binary_search(theirs.begin(), theirs.end(), name)) {
      return conflict(where + ": name " + name + " is already claimed by instance " + other);
    }
  }
  return std::optional<std::string>();
}

}  // namespace

Result<std::optional<std::string>> sharingConflict(const SiteConfig& mine, const std::string& other,
                                                   const SiteConfig& theirs,
                                                   const ClaimedNamesOf& names_of) {
  for (const ListenConfig& x : mine.listens) {
    for (const ListenConfig& y : theirs.listens) {
      if (!listensOverlap(x, y)) continue;
      SCALWS_ASSIGN_OR_RETURN(std::optional<std::string> conflict,
                              pairConflict(x, other, y, names_of));
      if (conflict) return conflict;
    }
  }
  return std::optional<std::string>();
}

}  // namespace scalws::controller
