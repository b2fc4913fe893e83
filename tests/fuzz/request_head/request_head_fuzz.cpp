// Fuzzes the front's request-head reader (front/request_head.h).
//
// Input: the first bytes of a connection to a plain address. Every prefix is read as the
// front would see it arriving; once a prefix is decided every longer one gives the same
// answer, a host found is a normalised host name, and the bound is kept (a small bound
// never gives an answer a larger one contradicts, except kTooLarge).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/net/host_name_table.h"
#include "front/request_head.h"

using scalws::front::HostPeek;
using scalws::front::peekRequestHost;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  HostPeek decided;
  bool have = false;
  for (size_t n = 0; n <= bytes.size(); n += n < 512 ? 1 : 7) {
    HostPeek peek = peekRequestHost(bytes.substr(0, n));
    if (have && (peek.outcome != decided.outcome || peek.host != decided.host)) {
      std::fprintf(stderr, "a longer prefix changed the answer at %zu bytes\n", n);
      std::abort();
    }
    if (!have && peek.outcome != HostPeek::Outcome::kNeedMore) {
      decided = peek;
      have = true;
    }
    if (peek.outcome == HostPeek::Outcome::kHost) {
      std::string again;
      if (!scalws::common::net::normalizeHostName(peek.host, again) || again != peek.host) {
        std::fprintf(stderr, "a host that is not normalised: %s\n", peek.host.c_str());
        std::abort();
      }
    }
  }
  HostPeek small = peekRequestHost(bytes, 64);
  HostPeek whole = peekRequestHost(bytes);
  if (small.outcome != HostPeek::Outcome::kTooLarge &&
      small.outcome != HostPeek::Outcome::kNeedMore &&
      (small.outcome != whole.outcome || small.host != whole.host)) {
    std::fprintf(stderr, "a smaller bound gave another answer\n");
    std::abort();
  }
  return 0;
}
