// Htpasswd: what a credentials file (the dashboard's, a route's auth) accepts, refuses (with
// file:line:col), and how a password is checked. The hashes were made with crypt(3) (bcrypt at cost
// 4, to keep the test fast; SHA-crypt at 5000 rounds).
#include "common/auth/htpasswd.h"

#include <gtest/gtest.h>

namespace scalws::common::auth {
namespace {

constexpr const char* kBcrypt = "$2y$04$t/myUsudaPyGnsKKmI8HOuAevd1YCocjnwvvUuEZ8d.uWAs8McKk6";
constexpr const char* kBcryptB = "$2b$04$t/myUsudaPyGnsKKmI8HOuAevd1YCocjnwvvUuEZ8d.uWAs8McKk6";
constexpr const char* kSha512 =  // password "pa:ss"
    "$6$rounds=5000$/2k3blfHA8nfsBLZ$n5MGWOvRjgQqfmS99LxTIhF5Tj4qyufM5SkNlWE9AvKg57pi7NL.tx5qryq"
    "ar/bdbPYyG5SME4UlI/57ZkZl10";
constexpr const char* kSha256 =  // password "hunter2"
    "$5$rounds=5000$VS4KJrtCdxmVtIWX$s8qpB6l92GnG7OGVD0TTTvO.W9Z5TpUXTY8sJRvcs20";

std::string file() {
  return std::string("# operators\n\nann:") + kBcrypt + "\nbob:" + kSha512 + "\r\ncid:" + kSha256 +
         ":extra field\ndan:" + kBcryptB;
}

TEST(Htpasswd, ChecksBcryptAndShaCrypt) {
  Result<Htpasswd> users = Htpasswd::parse(file(), "/etc/scalws/users");
  ASSERT_TRUE(users.ok()) << users.status().message();
  ASSERT_EQ(users->entries().size(), 4u);
  EXPECT_TRUE(users->check("ann", "s3cret"));
  EXPECT_FALSE(users->check("ann", "s3cret "));
  EXPECT_FALSE(users->check("ann", ""));
  EXPECT_TRUE(users->check("bob", "pa:ss"));
  EXPECT_FALSE(users->check("bob", "pa"));
  EXPECT_TRUE(users->check("cid", "hunter2"));
  EXPECT_TRUE(users->check("dan", "s3cret"));
  EXPECT_FALSE(users->check("eve", "s3cret"));  // unknown user
  EXPECT_FALSE(users->check("", "s3cret"));
}

TEST(Htpasswd, RefusesWeakOrMalformedFilesNamingThePlace) {
  struct Case {
    std::string text;
    const char* where;
  };
  const Case cases[] = {
      {"ann:plaintext\n", "f:1:5: "},
      {"# c\nann:$apr1$abc$defghijklmnopqrstuvwx\n", "f:2:5: "},
      {"ann:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n", "f:1:5: "},
      {"ann:$1$abcdefgh$abcdefghijklmnopqrstuv\n", "f:1:5: "},  // MD5-crypt
      {"ann\n", "f:1:1: "},
      {":" + std::string(kBcrypt) + "\n", "f:1:1: "},
      {"ann:$6$\n", "f:1:5: "},                                          // malformed
      {"ann:" + std::string(kBcrypt).substr(0, 59) + "\n", "f:1:5: "},   // cut short
      {"ann:" + std::string(kSha512).substr(0, 117) + "\n", "f:1:5: "},  // cut short
      {"ann:" + std::string(kSha256) + "=\n", "f:1:5: "},                // one too many
      {"ann:$2y$04$t/myUsudaPyGnsKKmI8HOuAevd1YCocjnwvvUuEZ8d.uWAs8McK!6\n", "f:1:5: "},
      {"ann:" + std::string(kBcrypt) + "\nann:" + kSha256 + "\n", "f:2:1: "},
      {"", "f:1:1: "},
      {"# only a comment\n", "f:1:1: "},
  };
  for (const Case& c : cases) {
    Result<Htpasswd> users = Htpasswd::parse(c.text, "f");
    ASSERT_FALSE(users.ok()) << c.text;
    EXPECT_EQ(users.status().message().rfind(c.where, 0), 0u)
        << c.text << " -> " << users.status().message();
  }
}

TEST(Htpasswd, LoadingDoesNotHashEveryEntry) {
  // bcrypt at cost 31 takes days per hash: this test returns at once only because entries
  // are checked by their shape when the file is read.
  std::string slow = "zed:$2y$31$t/myUsudaPyGnsKKmI8HOuAevd1YCocjnwvvUuEZ8d.uWAs8McKk6\n";
  Result<Htpasswd> users = Htpasswd::parse(slow + file(), "f");
  ASSERT_TRUE(users.ok()) << users.status().message();
  EXPECT_EQ(users->entries().size(), 5u);
}

TEST(Htpasswd, LoadNamesAMissingFile) {
  Result<Htpasswd> users = Htpasswd::load("/nonexistent/scalws-users");
  ASSERT_FALSE(users.ok());
  EXPECT_NE(users.status().message().find("/nonexistent/scalws-users"), std::string::npos);
}

TEST(BasicCredentials, DecodesRfc7617Values) {
  // "ann:s3cret", "bob:pa:ss" (the password may hold colons), ":x" (an empty user).
  auto ann = basicCredentials("Basic YW5uOnMzY3JldA==");
  ASSERT_TRUE(ann);
  EXPECT_EQ(ann->first, "ann");
  EXPECT_EQ(ann->second, "s3cret");
  auto bob = basicCredentials("basic Ym9iOnBhOnNz");
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->first, "bob");
  EXPECT_EQ(bob->second, "pa:ss");
  auto empty = basicCredentials("BASIC Ong=");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->first, "");
  EXPECT_EQ(empty->second, "x");
  for (const char* bad :
       {"", "Basic", "Basic ", "Bearer YW5uOnMzY3JldA==", "Basic YW5u", "Basic YW5uOnMzY3JldA=",
        "Basic YW5u*nMzY3JldA==", "Basic YW=uOnMzY3JldA==", "Basicx YW5uOnMzY3JldA=="}) {
    EXPECT_FALSE(basicCredentials(bad)) << bad;
  }
}

}  // namespace
}  // namespace scalws::common::auth
