// UriTemplate: what a redirect's `to` and a rewrite accept, and what they expand to.
#include "common/config/uri_template.h"

#include <gtest/gtest.h>

namespace scalws::common::config {
namespace {

std::string expand(std::string_view text, const UriTemplate::Values& v,
                   UriTemplate::Kind kind = UriTemplate::Kind::kRedirect) {
  auto t = UriTemplate::parse(text, kind);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  if (!t.ok()) return "";
  std::string out;
  EXPECT_TRUE(t->expand(v, out, 8192));
  return out;
}

std::string refusal(std::string_view text, UriTemplate::Kind kind = UriTemplate::Kind::kRedirect) {
  auto t = UriTemplate::parse(text, kind);
  return t.ok() ? "ok" : t.status().message();
}

TEST(UriTemplate, PlaceholdersExpand) {
  UriTemplate::Values v{"example.com", "/a%20b/c?x=1&y=2", "/a b/c", "x=1&y=2", nullptr};
  EXPECT_EQ(expand("https://{host}{uri}", v), "https://example.com/a%20b/c?x=1&y=2");
  EXPECT_EQ(expand("https://www.{host}{path}?{query}", v),
            "https://www.example.com/a%20b/c?x=1&y=2");
  EXPECT_EQ(expand("/static", v), "/static");
  EXPECT_EQ(expand("/price$$", v), "/price$");
}

TEST(UriTemplate, CapturesAreEncodedForWhereTheyLand) {
  RegexCaptures c;
  c.groups[0] = "/blog/a b&c=d?e#f%";
  c.groups[1] = "a b&c=d?e#f%";
  UriTemplate::Values v{"h", "/blog/x", "/blog/x", "", &c};
  // Before "?": a path segment ("&" and "=" are fine there, "?" and "#" are not).
  EXPECT_EQ(expand("/p/$1", v), "/p/a%20b&c=d%3Fe%23f%25");
  // After "?": a query component.
  EXPECT_EQ(expand("/index.php?p=$1&all=$0", v),
            "/index.php?p=a%20b%26c%3Dd%3Fe%23f%25&all=/blog/a%20b%26c%3Dd%3Fe%23f%25");
}

TEST(UriTemplate, FlagsForTheQueryRule) {
  auto plain = UriTemplate::parse("/x/$1", UriTemplate::Kind::kRewrite);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->hasQuery());
  EXPECT_FALSE(plain->placesQuery());
  EXPECT_EQ(plain->highestCapture(), 1u);
  EXPECT_TRUE(plain->usesCaptures());
  auto with = UriTemplate::parse("/i.php?p=$2", UriTemplate::Kind::kRewrite);
  ASSERT_TRUE(with.ok());
  EXPECT_TRUE(with->hasQuery());
  EXPECT_FALSE(with->endsWithQuestionMark());
  EXPECT_EQ(with->highestCapture(), 2u);
  auto drop = UriTemplate::parse("/i.php?", UriTemplate::Kind::kRewrite);
  ASSERT_TRUE(drop.ok());
  EXPECT_TRUE(drop->endsWithQuestionMark());
  EXPECT_FALSE(drop->usesCaptures());
  EXPECT_TRUE(UriTemplate::parse("/i.php?{query}", UriTemplate::Kind::kRewrite)->placesQuery());
  EXPECT_TRUE(UriTemplate::parse("{uri}", UriTemplate::Kind::kRewrite)->placesQuery());
}

TEST(UriTemplate, RefusesWhatIsNotAUri) {
  EXPECT_EQ(refusal(""), "must not be empty");
  EXPECT_EQ(refusal("/a b"), "a space must be written %20 (at offset 2)");
  EXPECT_EQ(refusal("/{hots}"),
            "unknown placeholder \"{hots}\" (expected {host}, {uri}, {path}, {query} or $0..$9; "
            "a literal brace is written %7B or %7D) (at offset 1)");
  EXPECT_EQ(refusal("/{host"),
            "unknown placeholder \"{host\" (expected {host}, {uri}, {path}, {query} or $0..$9; "
            "a literal brace is written %7B or %7D) (at offset 1)");
  EXPECT_EQ(refusal("/a}"), "\"}\" outside a placeholder (write %7D) (at offset 2)");
  EXPECT_EQ(refusal("/$x"),
            "\"$\" must be followed by a digit ($1) or another \"$\" (\"$$\" is a dollar) (at "
            "offset 1)");
  EXPECT_EQ(refusal("/caf\xc3\xa9"),
            "only visible ASCII may be written (percent-encode the rest) (at offset 4)");
  EXPECT_EQ(refusal("/a\"b"),
            "only visible ASCII may be written (percent-encode the rest) (at offset 2)");
}

TEST(UriTemplate, WhereEachKindMayStart) {
  using K = UriTemplate::Kind;
  EXPECT_EQ(refusal("https://{host}{uri}", K::kRedirect), "ok");
  EXPECT_EQ(refusal("//cdn.example/x", K::kRedirect), "ok");
  EXPECT_EQ(refusal("/about#team", K::kRedirect), "ok");
  EXPECT_EQ(refusal("{path}/", K::kRedirect), "ok");
  EXPECT_EQ(refusal("{host}/x", K::kRedirect),
            "must start with \"/\", \"//\", a scheme (\"https://...\"), {path} or {uri}");
  EXPECT_EQ(refusal("example.com/x", K::kRedirect),
            "must start with \"/\", \"//\", a scheme (\"https://...\"), {path} or {uri}");
  EXPECT_EQ(refusal("https://x/", K::kRewrite),
            "a rewrite must start with \"/\" (or {path}, {uri})");
  EXPECT_EQ(refusal("$1/x", K::kRewrite), "a rewrite must start with \"/\" (or {path}, {uri})");
  EXPECT_EQ(refusal("/a#b", K::kRewrite),
            "a rewrite has no fragment (\"#\"); it is the client's alone (at offset 2)");
}

TEST(UriTemplate, ExpansionStopsAtItsBound) {
  auto t = UriTemplate::parse("/{path}{path}", UriTemplate::Kind::kRewrite);
  ASSERT_TRUE(t.ok());
  std::string path(5000, 'a');
  UriTemplate::Values v{"h", "/", path, "", nullptr};
  std::string out;
  EXPECT_FALSE(t->expand(v, out, 8192));
  out.clear();
  EXPECT_TRUE(t->expand(v, out, 20000));
  EXPECT_EQ(out.size(), 10001u);
}

TEST(UriTemplate, EncodingHelpers) {
  std::string out;
  appendPathEncoded(out, "/a b/%/ü");
  EXPECT_EQ(out, "/a%20b/%25/%C3%BC");
  out.clear();
  appendQueryEncoded(out, "a=b&c+d/e");
  EXPECT_EQ(out, "a%3Db%26c%2Bd/e");
}

}  // namespace
}  // namespace scalws::common::config
