// Address ranges for route.policy.allow: "10.0.0.0/8", "::1/128", or a bare address
// ("127.0.0.1" is /32, "::1" is /128).
#pragma once

#include <string_view>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::common::config {

// Refuses a prefix length past the family's width and an address with bits set past the
// prefix ("10.0.0.1/8": almost always a typo for a host or for the network). The message
// says what is wrong, without a position.
Result<Cidr> parseCidr(std::string_view text);

}  // namespace scalws::common::config
