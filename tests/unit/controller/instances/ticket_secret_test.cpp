#include "controller/instances/ticket_secret.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller {
namespace {

TEST(TicketSecretTest, MadeOnceWithMode0600AndReadBackUnchanged) {
  testing::TempDir dir;
  auto first = loadOrCreateHostTicketSecret(dir.path());
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->size(), 32u);
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/tls-ticket.secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = loadOrCreateHostTicketSecret(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
}

TEST(TicketSecretTest, RefusesAShortOrOpenFile) {
  testing::TempDir dir;
  std::string path = dir.path() + "/tls-ticket.secret";
  std::ofstream(path) << "short";
  ::chmod(path.c_str(), 0600);
  auto short_one = loadOrCreateHostTicketSecret(dir.path());
  ASSERT_FALSE(short_one.ok());
  EXPECT_NE(short_one.status().message().find("fewer than 32 bytes"), std::string::npos);
  std::ofstream(path) << std::string(40, 'k');
  ::chmod(path.c_str(), 0644);
  auto open_one = loadOrCreateHostTicketSecret(dir.path());
  ASSERT_FALSE(open_one.ok());
  EXPECT_NE(open_one.status().message().find("chmod 600"), std::string::npos);
}

TEST(TicketSecretTest, EachInstanceGetsItsOwnStableSecret) {
  std::string host(32, 'h');
  std::string a = instanceTicketSecret(host, "shop");
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a, instanceTicketSecret(host, "shop"));
  EXPECT_NE(a, instanceTicketSecret(host, "blog"));
  EXPECT_NE(a, instanceTicketSecret(std::string(32, 'i'), "shop"));
  EXPECT_EQ(a.find(host), std::string::npos);
}

}  // namespace
}  // namespace scalws::controller
