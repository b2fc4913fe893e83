#include "common/config/cidr.h"

#include <arpa/inet.h>

#include <cstring>
#include <string>

#include "common/quoted.h"
namespace scalws::common::config {

Result<Cidr> parseCidr(std::string_view text) {
  Cidr cidr;
  cidr.text = std::string(text);
  std::string_view address = text;
  std::string_view length;
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    address = text.substr(0, slash);
    length = text.substr(slash + 1);
  }
  std::string address_text(address);
  if (address_text.find('\0') != std::string::npos) {
    return invalidArgument("invalid address range " + quoted(text));
  }
  cidr.v6 = address_text.find(':') != std::string::npos;
  int family = cidr.v6 ? AF_INET6 : AF_INET;
  if (inet_pton(family, address_text.c_str(), cidr.addr) != 1) {
    return invalidArgument(quoted(text) + " is not an address range (expected e.g. " +
                           "\"10.0.0.0/8\", \"::1/128\" or \"127.0.0.1\")");
  }
  const unsigned width = cidr.v6 ? 128 : 32;
  unsigned prefix = width;
  if (slash != std::string_view::npos) {
    bool digits = !length.empty() && length.size() <= 3;
    prefix = 0;
    for (char c : length) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      prefix = prefix * 10 + static_cast<unsigned>(c - '0');
    }
    if (!digits || prefix > width) {
      return invalidArgument("prefix length of " + quoted(text) + " must be between 0 and " +
                             std::to_string(width));
    }
  }
  cidr.prefix_len = static_cast<uint8_t>(prefix);
  const unsigned bytes = width / 8;
  for (unsigned bit = prefix; bit < bytes * 8; ++bit) {
    if (cidr.addr[bit / 8] & (0x80u >> (bit % 8))) {
      Cidr network = cidr;
      for (unsigned b = prefix; b < bytes * 8; ++b) {
        network.addr[b / 8] = static_cast<uint8_t>(network.addr[b / 8] & ~(0x80u >> (b % 8)));
      }
      char canonical[INET6_ADDRSTRLEN];
      inet_ntop(family, network.addr, canonical, sizeof(canonical));
      return invalidArgument(quoted(text) + " has bits set past the prefix length (did you mean " +
                             quoted(std::string(canonical) + "/" + std::to_string(prefix)) + "?)");
    }
  }
  return cidr;
}

}  // namespace scalws::common::config
