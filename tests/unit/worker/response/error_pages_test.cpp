#include "worker/response/error_pages.h"

#include <gtest/gtest.h>

#include "common/config/config_loader.h"
#include "tests/unit/worker/handlers/static/fake_writer.h"
#include "tests/unit/worker/handlers/static/temp_tree.h"
#include "worker/response/response_rules.h"

namespace scalws::worker {
namespace {

using testing::FakeWriter;
using testing::TempTree;

std::unique_ptr<ErrorRoot> errorRootAt(const std::string& path) {
  auto root = ErrorRoot::open(path);
  EXPECT_TRUE(root.ok()) << root.status().message();
  return root.ok() ? std::move(root).value() : nullptr;
}

class ErrorPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.write("404.html", "<h1>gone</h1>\n");
    tree_.write("5xx.html", "<h1>broken</h1>\n");
    tree_.write("site/4xx.txt", "site 4xx\n");
    tree_.write("big.html", std::string(40'000, 'x'));  // past the kept-in-memory size
    root_ = errorRootAt(tree_.path());
  }

  ErrorPages::Page page(uint16_t status, uint8_t cls, std::string path) {
    return ErrorPages::Page{status, cls, std::move(path), root_.get()};
  }

  TempTree tree_;
  std::unique_ptr<ErrorRoot> root_;
  OpenFileCache cache_;
  Request request_;
};

TEST_F(ErrorPagesTest, RouteExactThenRouteClassThenSite) {
  ErrorPages pages({page(404, 0, "404.html"), page(0, 5, "5xx.html")},
                   {page(0, 4, "site/4xx.txt"), page(503, 0, "site/503.html")});
  EXPECT_EQ(pages.find(404)->path, "404.html");
  EXPECT_EQ(pages.find(502)->path, "5xx.html");
  EXPECT_EQ(pages.find(503)->path, "5xx.html");  // the route's class beats the site's status
  EXPECT_EQ(pages.find(403)->path, "site/4xx.txt");
  ErrorPages site_only({}, {page(0, 4, "site/4xx.txt")});
  EXPECT_EQ(site_only.find(500), nullptr);
}

TEST_F(ErrorPagesTest, ServesThePageWithTheOriginalStatusAndExtraFields) {
  ErrorPages pages({page(0, 5, "5xx.html")}, {});
  FakeWriter w;
  const HeaderField extra[] = {{"Retry-After", "1"}};
  ASSERT_TRUE(pages.send(request_, w, 503, extra, true, cache_, 0));
  EXPECT_EQ(w.status, 503);
  EXPECT_EQ(w.body, "<h1>broken</h1>\n");
  EXPECT_EQ(w.content_length, 16u);
  EXPECT_EQ(w.header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(w.header("retry-after"), "1");
  EXPECT_EQ(w.finished, 1);
}

TEST_F(ErrorPagesTest, TypeFromTheExtension) {
  ErrorPages pages({page(0, 4, "site/4xx.txt")}, {});
  FakeWriter w;
  ASSERT_TRUE(pages.send(request_, w, 403, {}, false, cache_, 0));
  EXPECT_EQ(w.header("content-type"), "text/plain; charset=utf-8");
}

TEST_F(ErrorPagesTest, LargePageGoesAsAFileSlice) {
  ErrorPages pages({page(404, 0, "big.html")}, {});
  FakeWriter w;
  ASSERT_TRUE(pages.send(request_, w, 404, {}, false, cache_, 0));
  EXPECT_EQ(w.file_slices, 1);
  EXPECT_EQ(w.body.size(), 40'000u);
}

TEST_F(ErrorPagesTest, HeadGetsTheHeadOnly) {
  ErrorPages pages({page(404, 0, "404.html")}, {});
  request_.method = Method::kHead;
  FakeWriter w;
  ASSERT_TRUE(pages.send(request_, w, 404, {}, false, cache_, 0));
  EXPECT_EQ(w.content_length, 14u);
  EXPECT_TRUE(w.body.empty());
  EXPECT_EQ(w.finished, 1);
}

TEST_F(ErrorPagesTest, MissingPageOrNoEntryFallsBack) {
  ErrorPages pages({page(404, 0, "nope.html")}, {});
  FakeWriter w;
  EXPECT_FALSE(pages.send(request_, w, 404, {}, false, cache_, 0));
  EXPECT_FALSE(pages.send(request_, w, 500, {}, false, cache_, 0));
  EXPECT_EQ(w.heads, 0);
  // Appears later: served from then on.
  tree_.write("nope.html", "now here\n");
  ASSERT_TRUE(pages.send(request_, w, 404, {}, false, cache_, 0));
  EXPECT_EQ(w.body, "now here\n");
}

TEST_F(ErrorPagesTest, NeverLeavesTheRoot) {
  TempTree outside;
  outside.write("secret.html", "secret\n");
  tree_.symlink(outside.at("secret.html"), "escape.html");
  ErrorPages pages({page(404, 0, "escape.html")}, {});
  FakeWriter w;
  EXPECT_FALSE(pages.send(request_, w, 404, {}, false, cache_, 0));
  EXPECT_EQ(w.heads, 0);
}

common::config::SiteConfig errorSiteFrom(const std::string& toml) {
  auto site = common::config::loadSiteConfigString(toml, "/etc/t.toml");
  EXPECT_TRUE(site.ok()) << site.status().message();
  return site.ok() ? std::move(site).value() : common::config::SiteConfig{};
}

TEST_F(ErrorPagesTest, RulesSetMergesRoutesOverTheSite) {
  common::config::SiteConfig site = errorSiteFrom(
      "[[listen]]\naddress = \"127.0.0.1:1\"\n"
      "[site]\nerrors = { root = \"" +
      tree_.path() +
      "\", 404 = \"/404.html\" }\n"
      "headers = { set = { x-site = \"1\" } }\n"
      "[[route]]\nmatch = { prefix = \"/plain/\" }\nrespond = {}\n"
      "[[route]]\nmatch = { prefix = \"/own/\" }\nrespond = {}\n"
      "errors = { \"5xx\" = \"/5xx.html\" }\ncompress = false\n"
      "[[route]]\nrespond = {}\ncompress = true\n");
  auto set = ResponseRulesSet::build(site);
  ASSERT_TRUE(set.ok()) << set.status().message();
  const ResponseRules* site_rules = (*set)->site();
  ASSERT_NE(site_rules, nullptr);
  EXPECT_EQ((*set)->route(0), site_rules);  // nothing of its own: the site's object
  const ResponseRules* own = (*set)->route(1);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->errors()->find(404)->path, "404.html");  // the site's, still
  EXPECT_EQ(own->errors()->find(502)->path, "5xx.html");
  EXPECT_NE(own->headers(), nullptr);
  EXPECT_EQ(own->compress(), nullptr);
  EXPECT_TRUE(own->filtersResponses());
  ASSERT_NE((*set)->route(2), nullptr);
  EXPECT_NE((*set)->route(2)->compress(), nullptr);
}

TEST_F(ErrorPagesTest, RulesSetIsNullWithoutRules) {
  common::config::SiteConfig site = errorSiteFrom(
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nrespond = {}\n"
      "[[route]]\nrespond = {}\ncompress = false\n");
  auto set = ResponseRulesSet::build(site);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ((*set)->site(), nullptr);
  EXPECT_EQ((*set)->route(0), nullptr);
  EXPECT_EQ((*set)->route(1), nullptr);  // compress = false alone: nothing to do
}

TEST_F(ErrorPagesTest, RulesSetRefusesAMissingRoot) {
  common::config::SiteConfig site = errorSiteFrom(
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nrespond = {}\n"
      "errors = { root = \"/nonexistent/scalws-errors\", 404 = \"/404.html\" }\n");
  auto set = ResponseRulesSet::build(site);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("/etc/t.toml:5:"), std::string::npos)
      << set.status().message();
}

}  // namespace
}  // namespace scalws::worker
