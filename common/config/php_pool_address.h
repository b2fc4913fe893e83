// The address of a PHP-FPM pool as written in [php_pool.NAME] and given to
// `scalwsctl pool add --address`: "unix:/absolute/path" or "tcp:host:port" with a literal
// host ("localhost" is the one name accepted: it means 127.0.0.1, no lookup needed).
#pragma once

#include <string_view>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::common::config {

// Fills pool.address, kind and unix_path or host/port from `address`. On error (a message
// saying what is wrong, without a position) `pool` is unchanged.
Status parsePhpPoolAddress(std::string_view address, PhpPoolConfig& pool);

}  // namespace scalws::common::config
