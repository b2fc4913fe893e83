#include "worker/http/path_normalizer.h"

#include <gtest/gtest.h>

namespace scalws::worker {
namespace {

struct NormalizationCase {
  const char* raw;
  const char* normalized;  // nullptr: refused
};

TEST(PathNormalizerTest, Table) {
  const NormalizationCase cases[] = {
      {"/", "/"},
      {"/index.html", "/index.html"},
      {"/a/b/", "/a/b/"},
      {"//x", "/x"},
      {"/a//b///c", "/a/b/c"},
      {"/a/./b", "/a/b"},
      {"/a/.", "/a/"},
      {"/a/b/..", "/a/"},
      {"/a/b/../c", "/a/c"},
      {"/a/..", "/"},
      {"/%61%62c", "/abc"},
      {"/caf%C3%A9", "/caf\xc3\xa9"},
      {"/a%20b", "/a b"},
      {"/%2e%2e/etc/passwd", nullptr},
      {"/../etc/passwd", nullptr},
      {"/a/../../etc", nullptr},
      {"/a/..%2f..%2f", nullptr},
      {"/x%00.html", nullptr},
      {"/a%2fb", nullptr},
      {"/a%2Fb", nullptr},
      {"/\\..\\", nullptr},
      {"/a%5c..", nullptr},
      {"/%", nullptr},
      {"/%4", nullptr},
      {"/%zz", nullptr},
      {"relative", nullptr},
      {"", nullptr},
      {"/.git/config", "/.git/config"},  // dotfiles are the static handler's decision
      {"/a/%2e/b", "/a/b"},
      {"/a/%2e%2e/b", "/b"},
  };
  for (const NormalizationCase& c : cases) {
    Arena arena;
    PathNormalization r = normalizePath(c.raw, arena);
    if (c.normalized == nullptr) {
      EXPECT_FALSE(r.ok) << c.raw << " gave " << r.path;
    } else {
      EXPECT_TRUE(r.ok) << c.raw << ": " << r.error;
      EXPECT_EQ(r.path, c.normalized) << c.raw;
    }
  }
}

TEST(PathNormalizerTest, CleanPathsAreNotCopied) {
  Arena arena;
  std::string_view raw = "/static/app.js";
  PathNormalization r = normalizePath(raw, arena);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.path.data(), raw.data());
}

}  // namespace
}  // namespace scalws::worker
