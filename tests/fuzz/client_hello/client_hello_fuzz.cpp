// Fuzzes the front's ClientHello reader (front/client_hello.h).
//
// Input: the first bytes of a connection to a TLS address. Every prefix is read as the front
// would see it arriving, and the answers must fit together: once a prefix is decided (a
// name, no name, invalid) every longer prefix gives the same answer, and a name found is a
// normalised host name.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/net/host_name_table.h"
#include "front/client_hello.h"

using scalws::front::peekServerName;
using scalws::front::ServerNamePeek;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ServerNamePeek decided;
  bool have = false;
  // Every prefix for short inputs; past 512 bytes every 7th, so a run stays quick.
  for (size_t n = 0; n <= bytes.size(); n += n < 512 ? 1 : 7) {
    ServerNamePeek peek = peekServerName(bytes.substr(0, n));
    if (have && (peek.outcome != decided.outcome || peek.name != decided.name)) {
      std::fprintf(stderr, "a longer prefix changed the answer at %zu bytes\n", n);
      std::abort();
    }
    if (!have && peek.outcome != ServerNamePeek::Outcome::kNeedMore) {
      decided = peek;
      have = true;
    }
    if (peek.outcome == ServerNamePeek::Outcome::kName) {
      std::string again;
      if (!scalws::common::net::normalizeHostName(peek.name, again) || again != peek.name) {
        std::fprintf(stderr, "a name that is not normalised: %s\n", peek.name.c_str());
        std::abort();
      }
    }
  }
  return 0;
}
