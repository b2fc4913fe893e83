#include "worker/handlers/fastcgi/pool_spec.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace scalws::worker::fastcgi {

using common::config::PhpPoolConfig;

bool PoolSpec::sameAddress(const PoolSpec& other) const {
  return address_len == other.address_len &&
         std::memcmp(&address, &other.address, address_len) == 0;
}

uint32_t poolShare(uint32_t max_conns, uint32_t loops) {
  return std::max<uint32_t>(1, max_conns / std::max<uint32_t>(1, loops));
}

common::Result<PoolSpec> resolvePoolSpec(const PhpPoolConfig& config, uint32_t loops) {
  PoolSpec spec;
  spec.name = config.name;
  spec.address_text = config.address;
  if (config.kind == PhpPoolConfig::Kind::kUnix) {
    auto* sun = reinterpret_cast<sockaddr_un*>(&spec.address);
    if (config.unix_path.size() >= sizeof(sun->sun_path)) {
      return common::invalidArgument("php_pool." + config.name + ": socket path too long");
    }
    sun->sun_family = AF_UNIX;
    std::memcpy(sun->sun_path, config.unix_path.data(), config.unix_path.size());
    spec.address_len =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + config.unix_path.size() + 1);
  } else {
    auto* sin = reinterpret_cast<sockaddr_in*>(&spec.address);
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&spec.address);
    if (inet_pton(AF_INET, config.host.c_str(), &sin->sin_addr) == 1) {
      sin->sin_family = AF_INET;
      sin->sin_port = htons(config.port);
      spec.address_len = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, config.host.c_str(), &sin6->sin6_addr) == 1) {
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons(config.port);
      spec.address_len = sizeof(sockaddr_in6);
    } else {
      return common::invalidArgument("php_pool." + config.name + ": \"" + config.host +
                                     "\" is not an address");
    }
  }
  if (config.max_conns.has_value()) {
    spec.keep_conn = true;
    spec.share = poolShare(*config.max_conns, loops);
    if (*config.max_conns < loops) {
      LOG_WARN(
          "php_pool.%s: max_conns %u is less than the %u serving loops; each loop keeps 1 "
          "connection, %u in total",
          config.name.c_str(), *config.max_conns, loops, loops);
    }
  }
  spec.timeout_ms = config.timeout;
  spec.queue_timeout_ms = config.queue_timeout;
  spec.queue_limit = config.queue;
  return spec;
}

}  // namespace scalws::worker::fastcgi
