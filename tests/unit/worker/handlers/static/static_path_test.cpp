// Hostile paths through the engine's normalizePath and then the static handler's own
// checks: what each would answer before any file is opened.
#include "worker/handlers/static/static_path.h"

#include <gtest/gtest.h>

#include <string>

#include "worker/http/path_normalizer.h"

namespace scalws::worker {
namespace {

struct Case {
  const char* raw;       // as sent in the request line
  int status;            // 0: passes both checks
  const char* relative;  // when status == 0: what is opened beneath the root
};

// The status the request gets before the handler opens anything (400 from the engine or
// from our checks, 404 for a dotfile), or 0 with the relative path.
std::pair<int, std::string> classify(std::string_view raw, bool allow_dotfiles = false) {
  Arena arena;
  PathNormalization norm = normalizePath(raw, arena);
  if (!norm.ok) return {400, ""};
  StaticPath p = checkStaticPath(norm.path, allow_dotfiles);
  switch (p.verdict) {
    case StaticPathVerdict::kInvalid:
      return {400, ""};
    case StaticPathVerdict::kDotfile:
      return {404, ""};
    case StaticPathVerdict::kOk:
      break;
  }
  return {0, std::string(p.relative)};
}

TEST(StaticPath, HostilePathTable) {
  const Case cases[] = {
      {"/../etc/passwd", 400, nullptr},
      {"/%2e%2e/", 400, nullptr},
      {"/%2E%2E/etc/passwd", 400, nullptr},
      {"/.%2e/x", 400, nullptr},
      {"/a/..%2f..%2f", 400, nullptr},
      {"/a/..%2F..%2Fetc%2Fpasswd", 400, nullptr},
      {"/a/../../etc/passwd", 400, nullptr},
      {"/a/%2e%2e/%2e%2e/etc/passwd", 400, nullptr},
      {"/x%00.html", 400, nullptr},
      {"/x%00", 400, nullptr},
      {"\\..\\", 400, nullptr},
      {"/\\..\\", 400, nullptr},
      {"/a%5c..%5cb", 400, nullptr},
      {"/%5c..%5c", 400, nullptr},
      {"/%", 400, nullptr},
      {"/%zz", 400, nullptr},
      {"etc/passwd", 400, nullptr},
      {"/.git/config", 404, nullptr},
      {"/.env", 404, nullptr},
      {"/sub/.htpasswd", 404, nullptr},
      {"/%2egit/config", 404, nullptr},
      {"/...", 404, nullptr},
      {"/.well-known/.secret", 404, nullptr},
      {"/a/.well-known/x", 404, nullptr},
      {"//x", 0, "x"},
      {"///a//b/", 0, "a/b/"},
      {"/a/./b/../c", 0, "a/c"},
      {"/a/b/..", 0, "a/"},
      {"/", 0, ""},
      {"/%2e/x", 0, "x"},
      {"/index.html", 0, "index.html"},
      {"/caf%C3%A9.txt", 0, "caf\xC3\xA9.txt"},
      {"/%c0%ae%c0%ae/x", 0, "\xC0\xAE\xC0\xAE/x"},  // overlong UTF-8 is not ".." here
      {"/.well-known/acme-challenge/token", 0, ".well-known/acme-challenge/token"},
      {"/a.b/c..d", 0, "a.b/c..d"},
  };
  for (const Case& c : cases) {
    auto [status, relative] = classify(c.raw);
    EXPECT_EQ(status, c.status) << c.raw;
    if (c.status == 0 && status == 0) {
      EXPECT_EQ(relative, c.relative) << c.raw;
    }
  }
}

TEST(StaticPath, DotfilesServedWhenAllowed) {
  EXPECT_EQ(classify("/.git/config", true), (std::pair<int, std::string>{0, ".git/config"}));
  EXPECT_EQ(classify("/.env", true).first, 0);
  // Traversal stays refused whatever allow_dotfiles says.
  EXPECT_EQ(classify("/../.env", true).first, 400);
}

TEST(StaticPath, OwnChecksRefuseWhatANormalizerShouldHaveCaught) {
  // Defence in depth: a path that did not go through normalizePath (another front end, a
  // bug) is still refused.
  const char* not_normalized[] = {"/a/../b", "/./a", "/a//b", "a", "", "/a\\b", "/..", "/a/."};
  for (const char* p : not_normalized) {
    EXPECT_EQ(checkStaticPath(p, true).verdict, StaticPathVerdict::kInvalid) << p;
  }
  EXPECT_EQ(checkStaticPath(std::string_view("/a\0b", 4), true).verdict,
            StaticPathVerdict::kInvalid);
  EXPECT_EQ(checkStaticPath("/" + std::string(5000, 'a'), true).verdict,
            StaticPathVerdict::kInvalid);
}

TEST(StaticPath, DirectoryFlag) {
  EXPECT_TRUE(checkStaticPath("/", false).directory);
  EXPECT_TRUE(checkStaticPath("/a/", false).directory);
  EXPECT_FALSE(checkStaticPath("/a", false).directory);
}

TEST(StaticPath, RedirectLocationIsReencodedAndKeepsTheQuery) {
  Arena arena;
  EXPECT_EQ(directoryRedirectLocation("/dir", "", arena), "/dir/");
  EXPECT_EQ(directoryRedirectLocation("/dir", "a=1&b=%20", arena), "/dir/?a=1&b=%20");
  // Decoded bytes that would change the meaning of the URI or break the header.
  EXPECT_EQ(directoryRedirectLocation("/a b?c#d%e", "", arena), "/a%20b%3Fc%23d%25e/");
  EXPECT_EQ(directoryRedirectLocation("/caf\xC3\xA9", "", arena), "/caf%C3%A9/");
  EXPECT_EQ(directoryRedirectLocation("/x\r\nSet-Cookie: a", "", arena),
            "/x%0D%0ASet-Cookie:%20a/");
  EXPECT_EQ(directoryRedirectLocation("/d", "q=\x01#", arena), "/d/?q=%01%23");
}

}  // namespace
}  // namespace scalws::worker
