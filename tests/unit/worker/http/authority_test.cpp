#include "worker/http/authority.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace scalws::worker {
namespace {

// RFC 3986 §3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ).
bool allowedInRegName(int c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return c != 0 &&
         std::string_view("-._~%!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos;
}

TEST(AuthorityTest, EveryByteOfAHostIsJudgedByTheRegNameGrammar) {
  for (int c = 0; c < 256; ++c) {
    if (c == ':' || c == '[') continue;  // they start the port and an IPv6 literal
    std::string host = std::string("a") + static_cast<char>(c) + "b";
    std::string authority = host + ":8080";  // `got` views into it
    bool valid = false;
    std::string_view got = hostWithoutPort(authority, valid);
    EXPECT_EQ(valid, allowedInRegName(c)) << "byte " << c;
    if (valid) {
      EXPECT_EQ(got, host);
    }
  }
}

TEST(AuthorityTest, SameAuthorityIgnoresCaseAndAMissingPort) {
  EXPECT_TRUE(sameAuthority("Example.COM:443", "example.com:443"));
  EXPECT_TRUE(sameAuthority("example.com", "example.com:8443"));
  EXPECT_FALSE(sameAuthority("example.com:443", "example.com:8443"));
  EXPECT_FALSE(sameAuthority("example.com", "example.org"));
  EXPECT_FALSE(sameAuthority("exa mple.com", "exa mple.com"));
}

}  // namespace
}  // namespace scalws::worker
