// route.static: every key and its refusals.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

std::string staticErrors(const std::string& inline_keys) {
  return snippetErrors("[[route]]\nstatic = { root = \"/srv\", " + inline_keys + " }\n");
}

StaticAction staticOf(const std::string& inline_keys) {
  SiteConfig site = loadSnippet("[[route]]\nstatic = { root = \"/srv\", " + inline_keys + " }\n");
  const auto* action =
      site.routes.empty() ? nullptr : std::get_if<StaticAction>(&site.routes[0].action);
  EXPECT_NE(action, nullptr);
  return action == nullptr ? StaticAction{} : *action;
}

// Keys start at column 27 of line 2 in staticErrors().

TEST(StaticAction, Root) {
  EXPECT_EQ(snippetErrors("[[route]]\nstatic = {}\n"),
            "t.toml:2:10: route.static: missing required key \"root\"");
  // A relative root is resolved against the config file's directory (like log paths).
  EXPECT_EQ(snippetErrors("[[route]]\nstatic = { root = \"www\" }\n"), "ok");
  EXPECT_EQ(snippetErrors("[[route]]\nstatic = { root = \"\" }\n"),
            "t.toml:2:19: route.static.root: must not be empty");
  EXPECT_EQ(snippetErrors("[[route]]\nstatic = { root = \"/srv\\u0000x\" }\n"),
            "t.toml:2:19: route.static.root: must not contain NUL");
  EXPECT_EQ(snippetErrors("[[route]]\nstatic = { root = [\"/srv\"] }\n"),
            "t.toml:2:19: route.static.root: expected a string, found an array");
}

TEST(StaticAction, Index) {
  EXPECT_EQ(staticOf("index = \"home.html\"").index, (std::vector<std::string>{"home.html"}));
  EXPECT_TRUE(staticOf("index = []").index.empty());
  EXPECT_EQ(staticErrors("index = [\"a/b.html\", \"\", \"..\"]"),
            "t.toml:2:36: route.static.index[0]: \"a/b.html\" is not a file name (no \"/\")\n"
            "t.toml:2:48: route.static.index[1]: \"\" is not a file name (no \"/\")\n"
            "t.toml:2:52: route.static.index[2]: \"..\" is not a file name (no \"/\")");
  EXPECT_EQ(staticErrors("index = 1"),
            "t.toml:2:35: route.static.index: expected a string or an array of strings, found an "
            "integer");
}

TEST(StaticAction, OpenFileCache) {
  EXPECT_EQ(staticOf("open_file_cache = \"off\"").open_file_cache.mode,
            OpenFileCacheConfig::Mode::kOff);
  EXPECT_EQ(staticOf("open_file_cache = \"check\"").open_file_cache.mode,
            OpenFileCacheConfig::Mode::kCheck);
  OpenFileCacheConfig valid = staticOf("open_file_cache = \"valid:500ms\"").open_file_cache;
  EXPECT_EQ(valid.mode, OpenFileCacheConfig::Mode::kValid);
  EXPECT_EQ(valid.valid_for, 500u);
  EXPECT_EQ(staticErrors("open_file_cache = \"on\""),
            "t.toml:2:45: route.static.open_file_cache: unknown value \"on\" (expected \"off\", "
            "\"check\" or \"valid:<duration>\", e.g. \"valid:30s\")");
  EXPECT_EQ(staticErrors("open_file_cache = \"valid:\""),
            "t.toml:2:45: route.static.open_file_cache: invalid duration \"\" (expected a number "
            "with a ms, s, m, h or d suffix, e.g. \"30s\" or \"500ms\"; a plain number is "
            "seconds)");
  EXPECT_EQ(staticErrors("open_file_cache = \"valid:0s\""),
            "t.toml:2:45: route.static.open_file_cache: the duration of \"valid:\" must be "
            "greater than zero (use \"check\" to check every time)");
  EXPECT_EQ(staticErrors("open_file_cache = false"),
            "t.toml:2:45: route.static.open_file_cache: expected a string, found a boolean");
}

TEST(StaticAction, Precompressed) {
  EXPECT_EQ(staticOf("precompressed = [\"br\"]").precompressed, (std::vector<std::string>{"br"}));
  EXPECT_EQ(staticErrors("precompressed = [\"zstd\", \"gzip\", \"gzip\"]"),
            "t.toml:2:44: route.static.precompressed[0]: unknown value \"zstd\" (expected \"br\" "
            "or \"gzip\")\n"
            "t.toml:2:60: route.static.precompressed[2]: \"gzip\" is listed twice");
}

TEST(StaticAction, MaxAge) {
  EXPECT_EQ(staticOf("max_age = 0").max_age, 0u);
  EXPECT_EQ(staticOf("max_age = 600").max_age, 600u);
  EXPECT_EQ(staticOf("max_age = \"1d\"").max_age, 86400u);
  EXPECT_EQ(staticErrors("max_age = \"1500ms\""),
            "t.toml:2:37: route.static.max_age: must be a whole number of seconds (Cache-Control: "
            "max-age counts seconds)");
  EXPECT_EQ(staticErrors("max_age = -1"),
            "t.toml:2:37: route.static.max_age: must not be negative, found -1");
}

TEST(StaticAction, Types) {
  EXPECT_EQ(staticOf("types = { \"JS\" = \"text/javascript\" }").types,
            (std::map<std::string, std::string>{{"js", "text/javascript"}}));
  EXPECT_EQ(staticErrors("types = \"text/html\""),
            "t.toml:2:35: route.static.types: expected a table, found a string");
  EXPECT_EQ(staticErrors("types = { \"a/b\" = \"text/plain\", \"\" = \"text/plain\" }"),
            "t.toml:2:37: route.static.types: \"a/b\" is not a file extension (expected e.g. "
            "\"js\")\n"
            "t.toml:2:59: route.static.types: \"\" is not a file extension (expected e.g. \"js\")");
  EXPECT_EQ(staticErrors("types = { js = \"javascript\", css = 1 }"),
            "t.toml:2:42: route.static.types.js: \"javascript\" is not a media type (expected "
            "e.g. \"text/html\")\n"
            "t.toml:2:62: route.static.types.css: expected a string, found an integer");
  EXPECT_EQ(staticErrors("types = { js = \"text/javascript\", \".JS\" = \"text/plain\" }"),
            "t.toml:2:61: route.static.types: extension \"js\" is listed twice");
  EXPECT_EQ(staticErrors("types = { txt = \"text/plain\\r\\nX: y\" }"),
            "t.toml:2:43: route.static.types.txt: \"text/plain\r\nX: y\" is not a media type "
            "(expected e.g. \"text/html\")");
}

TEST(StaticAction, FollowSymlinksAndDotfiles) {
  EXPECT_EQ(staticOf("follow_symlinks = \"beneath\"").follow_symlinks, FollowSymlinks::kBeneath);
  EXPECT_EQ(staticErrors("follow_symlinks = \"always\""),
            "t.toml:2:45: route.static.follow_symlinks: unknown value \"always\" (expected "
            "\"never\" or \"beneath\")");
  EXPECT_EQ(staticErrors("allow_dotfiles = \"yes\""),
            "t.toml:2:44: route.static.allow_dotfiles: expected a boolean, found a string");
}

TEST(StaticAction, UnknownKey) {
  EXPECT_EQ(staticErrors("autoindex = true"),
            "t.toml:2:27: route.static: unknown key \"autoindex\" (expected one of: root, index, "
            "open_file_cache, precompressed, max_age, types, follow_symlinks, allow_dotfiles)");
}

}  // namespace
}  // namespace scalws::common::config
