#include "common/net/port_number.h"

#include <gtest/gtest.h>

namespace scalws::common::net {
namespace {

TEST(PortNumber, DecimalZeroTo65535) {
  uint16_t port = 1;
  EXPECT_TRUE(parsePortNumber("0", port));
  EXPECT_EQ(port, 0);
  EXPECT_TRUE(parsePortNumber("8080", port));
  EXPECT_EQ(port, 8080);
  EXPECT_TRUE(parsePortNumber("65535", port));
  EXPECT_EQ(port, 65535);
  EXPECT_TRUE(parsePortNumber("00443", port));
  EXPECT_EQ(port, 443);
}

TEST(PortNumber, AnythingElseLeavesThePortAlone) {
  uint16_t port = 7;
  for (const char* bad :
       {"", "65536", "99999", "123456", "-1", "+80", " 80", "80 ", "8o", "0x50"}) {
    EXPECT_FALSE(parsePortNumber(bad, port)) << bad;
    EXPECT_EQ(port, 7) << bad;
  }
}

}  // namespace
}  // namespace scalws::common::net
