// Regex: PCRE2 patterns compiled once, matched from any thread, with their groups.
#include "common/regex/regex.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace scalws::common {
namespace {

TEST(Regex, MatchesAndCaptures) {
  auto re = Regex::compile("^/blog/(\\d+)(?:/(\\w+))?$");
  ASSERT_TRUE(re.ok()) << re.status().message();
  EXPECT_EQ((*re)->captureCount(), 2u);
  RegexCaptures c;
  ASSERT_TRUE((*re)->match("/blog/42", c));
  EXPECT_EQ(c.groups[0], "/blog/42");
  EXPECT_EQ(c.groups[1], "42");
  EXPECT_EQ(c.groups[2], "");  // took no part
  ASSERT_TRUE((*re)->match("/blog/7/title", c));
  EXPECT_EQ(c.groups[2], "title");
  EXPECT_FALSE((*re)->match("/blog/x", c));
  EXPECT_TRUE((*re)->matches("/blog/1"));
  EXPECT_FALSE((*re)->matches("/blog/"));
}

TEST(Regex, MoreGroupsThanKeptStillMatch) {
  auto re = Regex::compile("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)");
  ASSERT_TRUE(re.ok());
  RegexCaptures c;
  ASSERT_TRUE((*re)->match("abcdefghijk", c));
  EXPECT_EQ(c.groups[9], "i");
}

TEST(Regex, SubjectsNeedNotBeNulTerminatedNorValidUtf8) {
  auto re = Regex::compile("^/caf.$");
  ASSERT_TRUE(re.ok());
  std::string subject = "/caf\xc3\xa9/tail";
  EXPECT_TRUE((*re)->matches(std::string_view(subject).substr(0, 6)));  // "é" is one "."
  EXPECT_FALSE((*re)->matches("/caf\xff\xfe"));                         // no crash, no match
}

TEST(Regex, BadPatternsSayWhatAndWhere) {
  auto re = Regex::compile("^/blog/(\\d+$");
  ASSERT_FALSE(re.ok());
  EXPECT_NE(re.status().message().find("missing closing parenthesis"), std::string::npos)
      << re.status().message();
  EXPECT_NE(re.status().message().find("offset 12"), std::string::npos) << re.status().message();
}

TEST(Regex, CatastrophicBacktrackingIsBoundedAndFailsTheMatch) {
  auto re = Regex::compile("^(a+)+$");
  ASSERT_TRUE(re.ok());
  std::string subject(4000, 'a');
  subject += 'b';
  EXPECT_FALSE((*re)->matches(subject));  // returns, with a limit error taken as no match
}

TEST(Regex, SharedBetweenThreads) {
  auto re = Regex::compile("^/(\\d+)$");
  ASSERT_TRUE(re.ok());
  std::shared_ptr<const Regex> shared = *re;
  bool ok_a = true;
  bool ok_b = true;
  auto run = [&shared](bool& ok, std::string digits) {
    for (int i = 0; i < 2000; ++i) {
      RegexCaptures c;
      std::string subject = "/" + digits;
      ok = ok && shared->match(subject, c) && c.groups[1] == digits;
    }
  };
  std::thread a(run, std::ref(ok_a), "123");
  std::thread b(run, std::ref(ok_b), "98765");
  a.join();
  b.join();
  EXPECT_TRUE(ok_a);
  EXPECT_TRUE(ok_b);
}

}  // namespace
}  // namespace scalws::common
