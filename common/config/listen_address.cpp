#include "common/config/listen_address.h"

#include <arpa/inet.h>

#include "common/quoted.h"

namespace scalws::common::config {
namespace {

const char kExpected[] = "(expected \"host:port\", e.g. \"127.0.0.1:8080\" or \"[::]:8443\")";

Result<uint16_t> parsePort(std::string_view text) {
  uint32_t port = 0;
  bool digits = !text.empty() && text.size() <= 5;
  for (char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (!digits || port < 1 || port > 65535) {
    return invalidArgument("port must be between 1 and 65535, found " + quoted(text));
  }
  return static_cast<uint16_t>(port);
}

}  // namespace

Result<ListenAddress> parseListenAddress(std::string_view address) {
  ListenAddress out;
  std::string_view host;
  std::string_view port;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos) {
      return invalidArgument("address " + quoted(address) + " has no closing \"]\" " + kExpected);
    }
    host = address.substr(1, close - 1);
    std::string_view rest = address.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return invalidArgument("address " + quoted(address) + " has no port " + kExpected);
    }
    port = rest.substr(1);
    out.v6 = true;
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) {
      return invalidArgument("address " + quoted(address) + " has no port " + kExpected);
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return invalidArgument("address " + quoted(address) +
                             ": an IPv6 host is written in brackets, e.g. \"[::1]:8080\"");
    }
  }
  Result<uint16_t> parsed_port = parsePort(port);
  if (!parsed_port.ok()) return parsed_port.status();
  out.port = *parsed_port;

  if (!out.v6 && host == "*") host = "0.0.0.0";
  std::string host_text(host);  // inet_pton needs a NUL-terminated string
  unsigned char bytes[16];
  char canonical[INET6_ADDRSTRLEN];
  int family = out.v6 ? AF_INET6 : AF_INET;
  if (host_text.find('\0') != std::string::npos ||
      inet_pton(family, host_text.c_str(), bytes) != 1) {
    return invalidArgument("host " + quoted(host) + " is not a literal " +
                           (out.v6 ? "IPv6" : "IPv4") +
                           " address (host names are not resolved; use e.g. \"127.0.0.1\" or "
                           "\"[::1]\")");
  }
  if (inet_ntop(family, bytes, canonical, sizeof(canonical)) == nullptr) {
    return internalError("inet_ntop failed for " + quoted(host));
  }
  out.host = canonical;
  return out;
}

}  // namespace scalws::common::config
