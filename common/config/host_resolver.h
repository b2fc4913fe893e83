// Turns the host names of [upstream] servers into literal addresses when a config loads,
// so the request path never waits on DNS.
//
// processResolver() asks getaddrinfo() and remembers every answer. A worker seals it once
// it enters its sandbox, where DNS is out of reach (Landlock allows TCP connects to the
// upstream ports only, seccomp no datagram sockets, and /etc/resolv.conf is not readable):
// a reload from inside then gets the addresses the name had at start, and a name it never
// resolved is refused with a message saying that the worker must be restarted. Thread-safe;
// never used on a request path.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace scalws::common::config {

class HostResolver {
 public:
  virtual ~HostResolver() = default;
  // The literal addresses (canonical text, IPv4 first) of `host`, or why there are none.
  virtual Result<std::vector<std::string>> resolve(const std::string& host) = 0;
};

// The process's resolver (getaddrinfo, SOCK_STREAM, AI_ADDRCONFIG), remembering answers.
HostResolver& processResolver();
// From now on processResolver() answers only from what it remembered.
void sealProcessResolver();

// "localhost", "api.internal": RFC 1123 labels of letters, digits and '-', dot-separated,
// at most 253 characters. Literal addresses are not names.
bool isHostName(std::string_view text);

}  // namespace scalws::common::config
