// headers, errors and compress on a route and in [site].
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

ResponseConfig routeResponse(const std::string& keys) {
  SiteConfig site = loadSnippet("[[route]]\nrespond = {}\n" + keys + "\n");
  return site.routes.empty() ? ResponseConfig{} : site.routes[0].response;
}

std::string routeErrors(const std::string& keys) {
  return snippetErrors("[[route]]\nrespond = {}\n" + keys + "\n");
}

TEST(ResponseKeys, AbsentMeansNothing) {
  SiteConfig site = loadSnippet("[[route]]\nrespond = {}\n");
  EXPECT_TRUE(site.routes[0].response.empty());
  EXPECT_TRUE(site.response.empty());
}

TEST(ResponseKeys, HeadersSetAddRemove) {
  ResponseConfig r = routeResponse(
      "headers = { set = { \"Strict-Transport-Security\" = \"max-age=63072000\" }, add = { "
      "link = [\"<a>\", \"<b>\"], x-one = \"1\" }, remove = [\"X-Powered-By\"] }");
  ASSERT_TRUE(r.headers.has_value());
  ASSERT_EQ(r.headers->set.size(), 1u);
  EXPECT_EQ(r.headers->set[0].name, "strict-transport-security");  // lower-cased
  EXPECT_EQ(r.headers->set[0].value, "max-age=63072000");
  ASSERT_EQ(r.headers->add.size(), 3u);
  EXPECT_EQ(r.headers->add[0].name, "link");
  EXPECT_EQ(r.headers->add[1].value, "<b>");
  EXPECT_EQ(r.headers->add[2].name, "x-one");
  ASSERT_EQ(r.headers->remove.size(), 1u);
  EXPECT_EQ(r.headers->remove[0], "x-powered-by");
  // A lone string is a list of one.
  EXPECT_EQ(routeResponse("headers = { remove = \"x-a\" }").headers->remove.size(), 1u);
}

TEST(ResponseKeys, HeadersRefused) {
  EXPECT_EQ(routeErrors("headers = { set = { \"content-length\" = \"1\" } }"),
            "t.toml:3:21: route.headers.set: \"content-length\" is written by the server itself "
            "and cannot be edited");
  EXPECT_EQ(routeErrors("headers = { remove = [\"Server\"] }"),
            "t.toml:3:23: route.headers.remove[0]: \"Server\" is written by the server itself and "
            "cannot be edited (use [server] server_header)");
  EXPECT_EQ(routeErrors("headers = { add = { \"content-encoding\" = \"gzip\" } }"),
            "t.toml:3:21: route.headers.add: \"content-encoding\" is written by the server itself "
            "and cannot be edited");
  EXPECT_EQ(routeErrors("headers = { set = { \"bad name\" = \"1\" } }"),
            "t.toml:3:21: route.headers.set: \"bad name\" is not a valid header name");
  EXPECT_EQ(routeErrors("headers = { set = { x = \"a\\nb\" } }"),
            "t.toml:3:25: route.headers.set.x: must not contain CR, LF, NUL or other control "
            "characters");
  EXPECT_EQ(routeErrors("headers = { set = { X-A = \"1\", x-a = \"2\" } }"),
            "t.toml:3:32: route.headers.set: \"x-a\" is set twice (names ignore case)");
  EXPECT_EQ(routeErrors("headers = { set = { x = 1 } }"),
            "t.toml:3:25: route.headers.set.x: expected a string, found an integer");
  EXPECT_EQ(routeErrors("headers = { replace = {} }"),
            "t.toml:3:13: route.headers: unknown key \"replace\" (expected one of: set, add, "
            "remove)");
  EXPECT_EQ(routeErrors("headers = \"x\""),
            "t.toml:3:11: route.headers: expected a table, found a string");
}

TEST(ResponseKeys, ErrorPages) {
  SiteConfig site = loadSnippet(
      "[[route]]\nstatic = { root = \"/srv/www\" }\n"
      "errors = { 404 = \"/errors/404.html\", \"5xx\" = \"/50x.html\" }\n");
  const auto& errors = site.routes[0].response.errors;
  ASSERT_TRUE(errors.has_value());
  ASSERT_EQ(errors->pages.size(), 2u);
  EXPECT_EQ(errors->pages[0].status, 404);
  EXPECT_EQ(errors->pages[0].page, "errors/404.html");
  EXPECT_EQ(errors->pages[0].root, "/srv/www");  // the static root
  EXPECT_EQ(errors->pages[1].status, 0);
  EXPECT_EQ(errors->pages[1].status_class, 5);
  EXPECT_EQ(errors->root, "/srv/www");
}

TEST(ResponseKeys, ErrorPagesRoot) {
  // An explicit root, relative to the config's directory.
  SiteConfig site = loadSnippet(
      "[[route]]\nstatic = { root = \"/srv/www\" }\nerrors = { root = \"err\", 403 = \"/403.html\" "
      "}\n");
  EXPECT_EQ(site.routes[0].response.errors->pages[0].root, "/etc/scalws/err");
  // A php route reads them beneath its root.
  site = loadSnippet(
      "[php_pool.p]\naddress = \"unix:/run/p.sock\"\n"
      "[[route]]\nphp = { pool = \"p\", root = \"/srv/app\" }\nerrors = { 500 = \"/500.html\" }\n");
  EXPECT_EQ(site.routes[0].response.errors->pages[0].root, "/srv/app");
  // Another action takes [site]'s.
  site = loadSnippet(
      "[site]\nerrors = { root = \"/srv/errors\" }\n"
      "[[route]]\nrespond = {}\nerrors = { 404 = \"/404.html\" }\n");
  EXPECT_EQ(site.routes[0].response.errors->pages[0].root, "/srv/errors");
  EXPECT_EQ(routeErrors("errors = { 404 = \"/404.html\" }"),
            "t.toml:3:10: route.errors: needs a root to read its pages beneath (errors.root, or a "
            "static or php action's root, or [site] errors.root)");
  EXPECT_EQ(snippetErrors("[site]\nerrors = { 404 = \"/404.html\" }\n"),
            "t.toml:2:10: site.errors: needs a root to read its pages beneath (errors.root, or a "
            "static or php action's root, or [site] errors.root)");
}

TEST(ResponseKeys, ErrorPagesRefused) {
  const std::string root = "errors = { root = \"/e\", ";
  EXPECT_EQ(routeErrors(root + "302 = \"/x.html\" }"),
            "t.toml:3:25: route.errors: unknown key \"302\" (expected root, a status from 400 to "
            "599 such as \"404\", or a class: \"4xx\", \"5xx\")");
  EXPECT_EQ(routeErrors(root + "\"6xx\" = \"/x.html\" }"),
            "t.toml:3:25: route.errors: unknown key \"6xx\" (expected root, a status from 400 to "
            "599 such as \"404\", or a class: \"4xx\", \"5xx\")");
  for (const char* bad : {"x.html", "/", "/a/../b.html", "/a//b", "/dir/", "/./a"}) {
    std::string error = routeErrors(root + "404 = \"" + bad + "\" }");
    EXPECT_NE(error.find("is not a page path"), std::string::npos) << bad << ": " << error;
  }
  EXPECT_EQ(routeErrors(root + "404 = 1 }"),
            "t.toml:3:31: route.errors.404: expected a string, found an integer");
}

TEST(ResponseKeys, CompressDefaults) {
  ResponseConfig r = routeResponse("compress = true");
  ASSERT_TRUE(r.compress.has_value());
  EXPECT_TRUE(r.compress->enabled);
  EXPECT_EQ(r.compress->encodings.size(), 3u);
  EXPECT_EQ(r.compress->min_size, 1024u);
  EXPECT_EQ(r.compress->gzip_level, 6);
  EXPECT_FALSE(routeResponse("compress = false").compress->enabled);
}

TEST(ResponseKeys, CompressTable) {
  ResponseConfig r = routeResponse(
      "compress = { encodings = [\"gzip\", \"zstd\"], types = [\"Text/*\", \"application/json\"], "
      "min_size = \"2k\", level = { gzip = 1, br = 11, zstd = 19 } }");
  ASSERT_TRUE(r.compress.has_value());
  ASSERT_EQ(r.compress->encodings.size(), 2u);
  EXPECT_EQ(r.compress->encodings[0], CompressEncoding::kGzip);
  EXPECT_EQ(r.compress->encodings[1], CompressEncoding::kZstd);
  ASSERT_EQ(r.compress->types.size(), 2u);
  EXPECT_EQ(r.compress->types[0], "text/*");
  EXPECT_EQ(r.compress->min_size, 2048u);
  EXPECT_EQ(r.compress->gzip_level, 1);
  EXPECT_EQ(r.compress->brotli_level, 11);
  EXPECT_EQ(r.compress->zstd_level, 19);
}

TEST(ResponseKeys, CompressRefused) {
  EXPECT_EQ(routeErrors("compress = { encodings = [\"deflate\"] }"),
            "t.toml:3:27: route.compress.encodings[0]: unknown encoding \"deflate\" (expected "
            "\"br\", \"zstd\" or \"gzip\")");
  EXPECT_EQ(routeErrors("compress = { encodings = [\"br\", \"br\"] }"),
            "t.toml:3:33: route.compress.encodings[1]: \"br\" is listed twice");
  EXPECT_EQ(routeErrors("compress = { encodings = [] }"),
            "t.toml:3:26: route.compress.encodings: must name at least one encoding (compress = "
            "false turns compression off)");
  EXPECT_EQ(routeErrors("compress = { types = [\"html\"] }"),
            "t.toml:3:23: route.compress.types[0]: \"html\" is not a media type (\"text/html\", or "
            "\"text/*\" for every text type)");
  EXPECT_EQ(routeErrors("compress = { level = { gzip = 10 } }"),
            "t.toml:3:31: route.compress.level.gzip: must be between 1 and 9, found 10");
  EXPECT_EQ(routeErrors("compress = { level = { lz4 = 1 } }"),
            "t.toml:3:24: route.compress.level: unknown key \"lz4\" (expected one of: gzip, br, "
            "zstd)");
  EXPECT_EQ(routeErrors("compress = \"gzip\""),
            "t.toml:3:12: route.compress: expected true, false or a table, found a string");
  EXPECT_EQ(routeErrors("compress = { min_size = \"1 k\" }"),
            "t.toml:3:25: route.compress.min_size: invalid size \"1 k\" (expected a byte count, "
            "optionally with a k, m or g suffix, e.g. \"64k\" or \"10m\")");
}

TEST(ResponseKeys, SiteTable) {
  SiteConfig site = loadSnippet(
      "[site]\nheaders = { set = { x-site = \"1\" } }\ncompress = { encodings = [\"gzip\"] }\n"
      "[[route]]\nrespond = {}\n");
  ASSERT_TRUE(site.response.headers.has_value());
  EXPECT_EQ(site.response.headers->set[0].name, "x-site");
  ASSERT_TRUE(site.response.compress.has_value());
  EXPECT_TRUE(site.routes[0].response.empty());  // merged by the worker, not the loader
  EXPECT_EQ(snippetErrors("[site]\nlimits = 1\n"),
            "t.toml:2:1: site: unknown key \"limits\" (did you mean \"limit\"?)");
  EXPECT_EQ(snippetErrors("site = 1\n"), "t.toml:1:8: site: expected a table, found an integer");
}

}  // namespace
}  // namespace scalws::common::config
