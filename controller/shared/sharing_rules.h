// When two instances may listen on one address: the rules `instance add`, `set`, `reload`
// and `start` check before anything changes.
//
// Two listeners that would take the same connections (instance_config.h's overlap) may
// share only when they name the very same host and port (one socket, one front), are both
// TLS or both plain (the front reads a ClientHello or a request head, not either), neither
// serves HTTP/3 (a UDP address has one instance: QUIC's packets are not steered by name
// here), each claims at least one name or is the default (else it would never get a
// connection), no name is claimed by both (claimed_names.h) and at most one is the default.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::controller {

using ClaimedNamesOf =
    std::function<common::Result<std::vector<std::string>>(const common::config::ListenConfig&)>;

// The first reason `mine` cannot run beside instance `other`'s `theirs`, as a message for
// the operator ("address 127.0.0.1:443: name shop.example is already claimed by instance
// shop"), or nullopt. An error when the names of a listener cannot be learnt (a certificate
// that does not read).
common::Result<std::optional<std::string>> sharingConflict(const common::config::SiteConfig& mine,
                                                           const std::string& other,
                                                           const common::config::SiteConfig& theirs,
                                                           const ClaimedNamesOf& names_of);

// "host:port" of a listener, the key of its shared address ("127.0.0.1:443", "[::]:443").
std::string sharedAddressKey(const common::config::ListenConfig& listen);

}  // namespace scalws::controller
