// A listen address as written in [[listen]]: "127.0.0.1:8080", "[::]:8443", "*:80".
//
// The host must be a literal address (parsed with inet_pton; names are never resolved,
// a config must not depend on DNS at start-up); "*" means 0.0.0.0. IPv6 is bracketed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace scalws::common::config {

struct ListenAddress {
  std::string host;  // canonical (inet_ntop): "127.0.0.1", "::"
  uint16_t port = 0;
  bool v6 = false;
};

// The message of an error says what is wrong, without a position.
Result<ListenAddress> parseListenAddress(std::string_view address);

}  // namespace scalws::common::config
