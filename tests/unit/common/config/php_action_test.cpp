// route.php: every key and its refusals.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

constexpr const char* kPool = "[php_pool.main]\naddress = \"unix:/run/fpm.sock\"\n";

std::string phpErrors(const std::string& inline_keys) {
  return snippetErrors("[[route]]\nphp = { pool = \"main\", " + inline_keys + " }\n" + kPool);
}

PhpAction phpOf(const std::string& inline_keys) {
  SiteConfig site =
      loadSnippet("[[route]]\nphp = { pool = \"main\", " + inline_keys + " }\n" + kPool);
  const auto* action =
      site.routes.empty() ? nullptr : std::get_if<PhpAction>(&site.routes[0].action);
  EXPECT_NE(action, nullptr);
  return action == nullptr ? PhpAction{} : *action;
}

TEST(PhpAction, Defaults) {
  PhpAction a = phpOf("root = \"/srv/www/\"");
  EXPECT_EQ(a.pool, "main");
  EXPECT_EQ(a.root, "/srv/www");
  EXPECT_EQ(a.index, "index.php");
  EXPECT_FALSE(a.front_controller.has_value());
}

TEST(PhpAction, IndexAndFrontController) {
  PhpAction a =
      phpOf("root = \"/srv\", index = \"main.php\", front_controller = \"/app/index.php\"");
  EXPECT_EQ(a.index, "main.php");
  EXPECT_EQ(a.front_controller, "/app/index.php");
  EXPECT_EQ(phpOf("root = \"/srv\", index = \"\"").index, "");
}

TEST(PhpAction, Refusals) {
  EXPECT_EQ(snippetErrors(std::string("[[route]]\nphp = { root = \"/srv\" }\n") + kPool),
            "t.toml:2:7: route.php: missing required key \"pool\"");
  EXPECT_EQ(phpErrors("root = \"srv\""),
            "t.toml:2:31: route.php.root: must be an absolute path, found \"srv\"");
  EXPECT_EQ(phpErrors("root = \"/srv\", index = \"a/index.php\""),
            "t.toml:2:47: route.php.index: \"a/index.php\" is not a .php file name (no \"/\"; "
            "empty for none)");
  EXPECT_EQ(phpErrors("root = \"/srv\", index = \"index.html\""),
            "t.toml:2:47: route.php.index: \"index.html\" is not a .php file name (no \"/\"; "
            "empty for none)");
  EXPECT_EQ(phpErrors("root = \"/srv\", front_controller = \"index.php\""),
            "t.toml:2:58: route.php.front_controller: must be a script path from the root like "
            "\"/index.php\", found \"index.php\"");
  EXPECT_NE(phpErrors("root = \"/srv\", front_controller = \"/../x.php\""), "ok");
  EXPECT_NE(phpErrors("root = \"/srv\", front_controller = \"/x.html\""), "ok");
  EXPECT_NE(phpErrors("root = \"/srv\", static = 1"), "ok");
}

}  // namespace
}  // namespace scalws::common::config
