// Which script a path runs: the .php split, index, front controller, and the refusals that
// keep anything but an existing .php beneath the root from reaching PHP.
#include "worker/handlers/fastcgi/script_resolver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace scalws::worker::fastcgi {
namespace {

class ScriptResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/scalws-php-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    root_ = dir_ + "/www";
    mkdir(root_.c_str(), 0755);
    mkdir((root_ + "/blog").c_str(), 0755);
    mkdir((root_ + "/uploads").c_str(), 0755);
    mkdir((root_ + "/dir.php").c_str(), 0755);
    touch(root_ + "/index.php");
    touch(root_ + "/blog/index.php");
    touch(root_ + "/info.php");
    touch(root_ + "/uploads/x.jpg");
    touch(root_ + "/uploads/.php");
    touch(dir_ + "/outside.php");
    symlink((dir_ + "/outside.php").c_str(), (root_ + "/escape.php").c_str());
    symlink("info.php", (root_ + "/alias.php").c_str());
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  static void touch(const std::string& p) { std::ofstream(p) << "<?php\n"; }

  ScriptResolver make(std::string index = "index.php", std::string fc = "") {
    auto r = ScriptResolver::open(root_, std::move(index), std::move(fc));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(r).value();
  }
  // "script|path_info|fc" or "none".
  std::string resolve(const ScriptResolver& r, std::string_view path) {
    ScriptMatch m;
    if (!r.resolve(path, arena_, m)) return "none";
    return std::string(m.script_name) + "|" + std::string(m.path_info) +
           (m.front_controller ? "|fc" : "");
  }

  std::string dir_, root_;
  Arena arena_;
};

TEST_F(ScriptResolverTest, SplitsAtTheFirstPhpSegment) {
  ScriptResolver r = make();
  EXPECT_EQ(resolve(r, "/info.php"), "/info.php|");
  EXPECT_EQ(resolve(r, "/info.php/a/b.php/c"), "/info.php|/a/b.php/c");
  EXPECT_EQ(resolve(r, "/blog/index.php/"), "/blog/index.php|/");
  EXPECT_EQ(resolve(r, "/alias.php"), "/alias.php|");  // a symlink that stays beneath
}

TEST_F(ScriptResolverTest, IndexForDirectories) {
  ScriptResolver r = make();
  EXPECT_EQ(resolve(r, "/"), "/index.php|");
  EXPECT_EQ(resolve(r, "/blog/"), "/blog/index.php|");
  EXPECT_EQ(resolve(r, "/uploads/"), "none");
  EXPECT_EQ(resolve(r, "/blog"), "none");
  ScriptResolver no_index = make("");
  EXPECT_EQ(resolve(no_index, "/"), "none");
}

TEST_F(ScriptResolverTest, RefusesTricks) {
  ScriptResolver r = make();
  EXPECT_EQ(resolve(r, "/uploads/x.jpg/.php"), "none");  // ".php" alone is no script
  EXPECT_EQ(resolve(r, "/uploads/.php"), "none");
  EXPECT_EQ(resolve(r, "/uploads/x.jpg"), "none");
  EXPECT_EQ(resolve(r, "/uploads/x.jpg/x.php"), "none");
  EXPECT_EQ(resolve(r, "/missing.php"), "none");
  EXPECT_EQ(resolve(r, "/dir.php"), "none");     // a directory
  EXPECT_EQ(resolve(r, "/escape.php"), "none");  // a symlink out of the root
  EXPECT_EQ(resolve(r, std::string("/info.php\0x", 11)), "none");
  EXPECT_EQ(resolve(r, "info.php"), "none");
}

TEST_F(ScriptResolverTest, FrontControllerForWhatIsMissing) {
  ScriptResolver r = make("index.php", "/index.php");
  EXPECT_EQ(resolve(r, "/posts/42"), "/index.php||fc");
  EXPECT_EQ(resolve(r, "/missing.php/x"), "/index.php||fc");
  EXPECT_EQ(resolve(r, "/uploads/x.jpg/.php"), "/index.php||fc");
  EXPECT_EQ(resolve(r, "/info.php/x"), "/info.php|/x");
  ScriptResolver gone = make("index.php", "/gone.php");
  EXPECT_EQ(resolve(gone, "/posts/42"), "none");
}

TEST_F(ScriptResolverTest, RemembersFoundScriptsPerResolverAndNeverMissingOnes) {
  ScriptResolver r = make();
  EXPECT_EQ(resolve(r, "/missing.php"), "none");
  touch(root_ + "/missing.php");
  EXPECT_EQ(resolve(r, "/missing.php"), "/missing.php|");  // a miss was not remembered
  EXPECT_EQ(resolve(r, "/info.php"), "/info.php|");
  std::remove((root_ + "/info.php").c_str());
  EXPECT_EQ(resolve(r, "/info.php"), "/info.php|");
  // Found before its removal: kept for up to kFoundValidMs (PHP-FPM would answer 404).
  ScriptResolver fresh = make();
  EXPECT_EQ(resolve(fresh, "/info.php"), "none");  // another resolver (a reload) looks anew
}

TEST_F(ScriptResolverTest, RootMustExist) {
  EXPECT_FALSE(ScriptResolver::open(dir_ + "/nope", "index.php", "").ok());
}

}  // namespace
}  // namespace scalws::worker::fastcgi
