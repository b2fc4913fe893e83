// route.match.regex, route.rewrite, route.redirect and route.auth: what loads, and every
// refusal with its place in the file.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

TEST(RouteRegex, CompilesAtLoad) {
  SiteConfig site = loadSnippet(
      "[[route]]\nmatch = { regex = \"^/blog/(\\\\d+)$\", method = \"GET\" }\nrespond = {}\n");
  ASSERT_EQ(site.routes.size(), 1u);
  const MatchConfig& m = site.routes[0].match;
  ASSERT_NE(m.regex, nullptr);
  EXPECT_EQ(m.regex_text, "^/blog/(\\d+)$");
  EXPECT_EQ(m.regex->captureCount(), 1u);
  EXPECT_TRUE(m.regex->matches("/blog/12"));
}

TEST(RouteRegex, ABadPatternIsRefusedWithItsPlace) {
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { regex = \"^/(a\" }\nrespond = {}\n"),
            "t.toml:2:19: route.match.regex: invalid regular expression: missing closing "
            "parenthesis (at offset 4 of the pattern)");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { regex = \"\" }\nrespond = {}\n"),
            "t.toml:2:19: route.match.regex: must not be empty (leave regex out to match any "
            "path)");
}

TEST(RouteScheme, HttpOrHttps) {
  SiteConfig site = loadSnippet(
      "[[route]]\nmatch = { scheme = \"http\" }\nredirect = { to = \"https://{host}{uri}\" }\n"
      "[[route]]\nrespond = {}\n");
  EXPECT_EQ(site.routes[0].match.scheme, MatchConfig::Scheme::kHttp);
  EXPECT_EQ(site.routes[1].match.scheme, MatchConfig::Scheme::kAny);
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { scheme = \"ftp\" }\nrespond = {}\n"),
            "t.toml:2:20: route.match.scheme: unknown value \"ftp\" (expected \"http\" or "
            "\"https\")");
}

TEST(RouteRewrite, TakesNoActionPolicyOrAuth) {
  SiteConfig site = loadSnippet(
      "[[route]]\nmatch = { regex = \"^/blog/(\\\\d+)$\" }\nrewrite = \"/index.php?p=$1\"\n");
  ASSERT_TRUE(site.routes[0].rewrite.has_value());
  EXPECT_EQ(site.routes[0].rewrite->text(), "/index.php?p=$1");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(site.routes[0].action));
  EXPECT_EQ(snippetErrors("[[route]]\nrewrite = \"/x\"\nrespond = {}\npolicy = {}\n"
                          "auth = { realm = \"r\", users = \"u\" }\n"),
            "t.toml:3:1: route: \"respond\" cannot go with rewrite (routing starts again with the "
            "new path: put it on the route that path matches)\n"
            "t.toml:4:1: route: \"policy\" cannot go with rewrite (routing starts again with the "
            "new path: put it on the route that path matches)\n"
            "t.toml:5:1: route: \"auth\" cannot go with rewrite (routing starts again with the "
            "new path: put it on the route that path matches)");
}

TEST(RouteRewrite, CapturesMustExist) {
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { prefix = \"/a\" }\nrewrite = \"/b/$1\"\n"),
            "t.toml:3:11: route.rewrite: uses $1 but the route's match has no regex to capture "
            "it");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { regex = \"^/(a)\" }\nrewrite = \"/b/$2\"\n"),
            "t.toml:3:11: route.rewrite: uses $2 but the regex has 1 group");
  EXPECT_EQ(snippetErrors("[[route]]\nrewrite = \"b\"\n"),
            "t.toml:2:11: route.rewrite: a rewrite must start with \"/\" (or {path}, {uri})");
}

TEST(RouteRewrite, NoActionMentionsRewrite) {
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { prefix = \"/\" }\n"),
            "t.toml:1:1: route: no action (expected one of: respond, static, status, php, proxy, "
            "app, cache_purge, redirect, or a rewrite)");
}

TEST(RouteRedirect, StatusAndTemplate) {
  SiteConfig site = loadSnippet(
      "[[route]]\nmatch = { regex = \"^/old/(.*)$\" }\n"
      "redirect = { to = \"https://{host}/new/$1\", status = 308 }\n"
      "[[route]]\nredirect = { to = \"/x\" }\n");
  const auto* a = std::get_if<RedirectAction>(&site.routes[0].action);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->status, 308);
  EXPECT_EQ(a->to.text(), "https://{host}/new/$1");
  const auto* b = std::get_if<RedirectAction>(&site.routes[1].action);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->status, 302);  // the default, as nginx's `rewrite ... redirect`
}

TEST(RouteRedirect, Refusals) {
  EXPECT_EQ(snippetErrors("[[route]]\nredirect = { status = 301 }\n"),
            "t.toml:2:12: route.redirect: missing required key \"to\"");
  EXPECT_EQ(snippetErrors("[[route]]\nredirect = { to = \"/x\", status = 304 }\n"),
            "t.toml:2:34: route.redirect.status: must be 301, 302, 303, 307 or 308, found 304");
  EXPECT_EQ(snippetErrors("[[route]]\nredirect = { to = \"/x\", status = 200 }\n"),
            "t.toml:2:34: route.redirect.status: must be between 300 and 399, found 200");
  EXPECT_EQ(snippetErrors("[[route]]\nredirect = { to = \"example.com\" }\n"),
            "t.toml:2:19: route.redirect.to: must start with \"/\", \"//\", a scheme "
            "(\"https://...\"), {path} or {uri}");
  EXPECT_EQ(snippetErrors("[[route]]\nredirect = { to = \"/$1\" }\n"),
            "t.toml:2:19: route.redirect.to: uses $1 but the route's match has no regex to "
            "capture it");
}

TEST(RouteAuth, RealmAndUsersFile) {
  SiteConfig site = loadSnippet(
      "[[route]]\nauth = { realm = \"staff\", users = \"staff.htpasswd\" }\nrespond = {}\n");
  ASSERT_TRUE(site.routes[0].auth.has_value());
  EXPECT_EQ(site.routes[0].auth->realm, "staff");
  EXPECT_EQ(site.routes[0].auth->users, "/etc/scalws/staff.htpasswd");  // beside the config
  EXPECT_EQ(site.routes[0].auth->where.toString(), "/etc/scalws/t.toml:2:8");
}

TEST(RouteAuth, Refusals) {
  EXPECT_EQ(
      snippetErrors("[[route]]\nauth = { realm = \"a\\\"b\", users = \"/u\" }\nrespond = {}\n"),
      "t.toml:2:18: route.auth.realm: must be non-empty text without quotes, backslashes "
      "or control characters");
  EXPECT_EQ(snippetErrors("[[route]]\nauth = { realm = \"r\" }\nrespond = {}\n"),
            "t.toml:2:8: route.auth: missing required key \"users\"");
  EXPECT_EQ(
      snippetErrors("[[route]]\nauth = { realm = \"r\", users = \"/u\", x = 1 }\nrespond = {}\n"),
      "t.toml:2:37: route.auth: unknown key \"x\" (expected one of: realm, users)");
}

}  // namespace
}  // namespace scalws::common::config
