#include "worker/handlers/static/mime_types.h"

#include <gtest/gtest.h>

namespace scalws::worker {
namespace {

TEST(MimeTypes, BuiltInTable) {
  MimeTypes mime;
  EXPECT_EQ(mime.lookup("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(mime.lookup("a/b/site.css"), "text/css; charset=utf-8");
  EXPECT_EQ(mime.lookup("app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(mime.lookup("mod.mjs"), "text/javascript; charset=utf-8");
  EXPECT_EQ(mime.lookup("data.json"), "application/json; charset=utf-8");
  EXPECT_EQ(mime.lookup("logo.svg"), "image/svg+xml; charset=utf-8");
  EXPECT_EQ(mime.lookup("p.png"), "image/png");
  EXPECT_EQ(mime.lookup("p.jpg"), "image/jpeg");
  EXPECT_EQ(mime.lookup("p.jpeg"), "image/jpeg");
  EXPECT_EQ(mime.lookup("p.webp"), "image/webp");
  EXPECT_EQ(mime.lookup("p.avif"), "image/avif");
  EXPECT_EQ(mime.lookup("p.gif"), "image/gif");
  EXPECT_EQ(mime.lookup("favicon.ico"), "image/x-icon");
  EXPECT_EQ(mime.lookup("f.woff"), "font/woff");
  EXPECT_EQ(mime.lookup("f.woff2"), "font/woff2");
  EXPECT_EQ(mime.lookup("robots.txt"), "text/plain; charset=utf-8");
  EXPECT_EQ(mime.lookup("feed.xml"), "application/xml; charset=utf-8");
  EXPECT_EQ(mime.lookup("doc.pdf"), "application/pdf");
  EXPECT_EQ(mime.lookup("m.wasm"), "application/wasm");
  EXPECT_EQ(mime.lookup("v.mp4"), "video/mp4");
  EXPECT_EQ(mime.lookup("v.webm"), "video/webm");
}

TEST(MimeTypes, ExtensionsAreCaseInsensitiveAndUnknownIsOctetStream) {
  MimeTypes mime;
  EXPECT_EQ(mime.lookup("PHOTO.PNG"), "image/png");
  EXPECT_EQ(mime.lookup("Index.HTML"), "text/html; charset=utf-8");
  EXPECT_EQ(mime.lookup("archive.xyz"), MimeTypes::kDefault);
  EXPECT_EQ(mime.lookup("Makefile"), MimeTypes::kDefault);
  EXPECT_EQ(mime.lookup("trailing."), MimeTypes::kDefault);
  EXPECT_EQ(mime.lookup("dir.html/file"), MimeTypes::kDefault);  // the last segment counts
  EXPECT_EQ(mime.lookup("a.tar.gz"), "application/gzip");
  EXPECT_EQ(mime.lookup("x." + std::string(40, 'a')), MimeTypes::kDefault);
}

TEST(MimeTypes, RouteOverrides) {
  MimeTypes plain;
  MimeTypes custom({{"js", "application/javascript"},
                    {"foo", "application/x-foo"},
                    {"css", "text/css; charset=iso-8859-1"},
                    {"md", "text/markdown"}});
  EXPECT_EQ(custom.lookup("a.js"), "application/javascript; charset=utf-8");
  EXPECT_EQ(custom.lookup("a.FOO"), "application/x-foo");
  EXPECT_EQ(custom.lookup("a.css"), "text/css; charset=iso-8859-1");  // verbatim with params
  EXPECT_EQ(custom.lookup("a.png"), "image/png");                     // built-ins remain
  EXPECT_EQ(plain.fingerprint(), 0u);
  EXPECT_NE(custom.fingerprint(), 0u);
  EXPECT_NE(custom.fingerprint(),
            MimeTypes(std::map<std::string, std::string>{{"js", "text/plain"}}).fingerprint());
  EXPECT_EQ(custom.fingerprint(), MimeTypes({{"js", "application/javascript"},
                                             {"foo", "application/x-foo"},
                                             {"css", "text/css; charset=iso-8859-1"},
                                             {"md", "text/markdown"}})
                                      .fingerprint());
}

TEST(MimeTypes, RenderAddsCharsetToTextOnly) {
  EXPECT_EQ(MimeTypes::render("text/plain"), "text/plain; charset=utf-8");
  EXPECT_EQ(MimeTypes::render("application/json"), "application/json; charset=utf-8");
  EXPECT_EQ(MimeTypes::render("image/png"), "image/png");
  EXPECT_EQ(MimeTypes::render("application/jsonx"), "application/jsonx");
  EXPECT_EQ(MimeTypes::render("text/html; charset=latin1"), "text/html; charset=latin1");
}

}  // namespace
}  // namespace scalws::worker
