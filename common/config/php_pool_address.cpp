#include "common/config/php_pool_address.h"

#include <sys/un.h>

#include <string>

#include "common/config/listen_address.h"

namespace scalws::common::config {

Status parsePhpPoolAddress(std::string_view address, PhpPoolConfig& pool) {
  if (address.starts_with("unix:")) {
    std::string_view path = address.substr(5);
    if (path.empty() || path.front() != '/') {
      return invalidArgument("the unix socket path must be absolute, found \"" + std::string(path) +
                             "\"");
    }
    if (path.size() >= sizeof(sockaddr_un::sun_path)) {
      return invalidArgument("the unix socket path is longer than " +
                             std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
    }
    if (path.find('\0') != std::string_view::npos) return invalidArgument("must not contain NUL");
    pool.address = std::string(address);
    pool.kind = PhpPoolConfig::Kind::kUnix;
    pool.unix_path = std::string(path);
    pool.host.clear();
    pool.port = 0;
    return Status();
  }
  if (address.starts_with("tcp:")) {
    std::string literal(address.substr(4));
    if (literal.starts_with("localhost:")) literal = "127.0.0.1" + literal.substr(9);
    Result<ListenAddress> parsed = parseListenAddress(literal);
    if (!parsed.ok()) return parsed.status();
    pool.address = std::string(address);
    pool.kind = PhpPoolConfig::Kind::kTcp;
    pool.unix_path.clear();
    pool.host = parsed->host;
    pool.port = parsed->port;
    return Status();
  }
  return invalidArgument("expected \"unix:/path/to/socket\" or \"tcp:host:port\", found \"" +
                         std::string(address) + "\"");
}

}  // namespace scalws::common::config
