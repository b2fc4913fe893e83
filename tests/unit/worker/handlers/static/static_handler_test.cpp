// The static handler end to end without sockets: a temp docroot, the real cache, a
// recording writer.
#include "worker/handlers/static/static_handler.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/unit/worker/handlers/static/fake_writer.h"
#include "tests/unit/worker/handlers/static/temp_tree.h"
#include "worker/http/path_normalizer.h"

namespace scalws::worker {
namespace {

using common::config::StaticAction;
using testing::FakeWriter;
using testing::TempTree;

class StaticHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.write("index.html", "<h1>home</h1>\n");
    tree_.write("app.js", "console.log(1);\n");
    tree_.write("app.js.br", "BROTLI");
    tree_.write("app.js.gz", "GZIPPED");
    tree_.write("digits.txt", "0123456789");
    tree_.write("big.bin", std::string(20000, 'b') + "END");
    tree_.write("docs/readme.txt", "read me\n");
    tree_.mkdir("empty");
    tree_.write(".env", "SECRET=1");
    action_.root = tree_.path();
    action_.precompressed = {"br", "gzip"};
    action_.max_age = 60;
    build();
  }

  void build() {
    auto h = StaticHandler::create(action_, common::config::SourceLocation{"t.toml", 3, 1});
    ASSERT_TRUE(h.ok()) << h.status().message();
    handler_ = std::move(h).value();
  }

  std::unique_ptr<FakeWriter> run(std::string_view raw_path, std::vector<HeaderField> headers = {},
                                  Method method = Method::kGet, std::string_view query = "") {
    headers_ = std::move(headers);
    arena_.reset();
    Request r;
    r.method = method;
    r.raw_path = raw_path;
    r.query = query;
    r.headers = headers_;
    r.arena = &arena_;
    r.id = 7;
    PathNormalization norm = normalizePath(raw_path, arena_);
    EXPECT_TRUE(norm.ok) << raw_path;
    r.path = norm.path;
    auto w = std::make_unique<FakeWriter>();
    handler_->serve(r, *w, cache_, now_ms_, /*turn=*/0);
    EXPECT_EQ(w->heads, 1);
    EXPECT_EQ(w->finished, 1);
    return w;
  }

  TempTree tree_;
  StaticAction action_;
  std::unique_ptr<StaticHandler> handler_;
  OpenFileCache cache_{OpenFileCache::Limits{}};
  uint64_t now_ms_ = 1000;
  Arena arena_;
  std::vector<HeaderField> headers_;
};

TEST_F(StaticHandlerTest, ServesAFileWithItsHeaders) {
  auto w = run("/docs/readme.txt");
  EXPECT_EQ(w->status, 200);
  EXPECT_EQ(w->body, "read me\n");
  EXPECT_EQ(w->content_length, 8u);
  EXPECT_EQ(w->header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(w->header("accept-ranges"), "bytes");
  EXPECT_EQ(w->header("cache-control"), "max-age=60");
  EXPECT_EQ(w->header("vary"), "Accept-Encoding");
  ASSERT_TRUE(w->header("etag").has_value());
  EXPECT_EQ(w->header("etag")->front(), '"');
  ASSERT_TRUE(w->header("last-modified").has_value());
  EXPECT_EQ(w->header("last-modified")->size(), 29u);
  EXPECT_EQ(w->file_slices, 0);  // small: kept bytes, one writev with the head
}

TEST_F(StaticHandlerTest, LargeFilesGoOutAsFileSlices) {
  auto w = run("/big.bin");
  EXPECT_EQ(w->status, 200);
  EXPECT_EQ(w->body.size(), 20003u);
  EXPECT_EQ(w->body.substr(20000), "END");
  EXPECT_EQ(w->file_slices, 1);
}

TEST_F(StaticHandlerTest, DirectoriesIndexAndRedirect) {
  auto w = run("/");
  EXPECT_EQ(w->status, 200);
  EXPECT_EQ(w->body, "<h1>home</h1>\n");
  EXPECT_EQ(w->header("content-type"), "text/html; charset=utf-8");
  w = run("/docs", {}, Method::kGet, "a=1");
  EXPECT_EQ(w->status, 301);
  EXPECT_EQ(w->header("location"), "/docs/?a=1");
  EXPECT_EQ(run("/docs/")->status, 403);  // exists, no index
  EXPECT_EQ(run("/empty/")->status, 403);
  EXPECT_EQ(run("/nothere/")->status, 404);
  EXPECT_EQ(run("/digits.txt/")->status, 404);  // a file is no directory
  action_.index = {"missing.html", "readme.txt"};
  build();
  EXPECT_EQ(run("/docs/")->body, "read me\n");
}

TEST_F(StaticHandlerTest, RefusalsBeforeAnyOpen) {
  auto w = run("/app.js", {}, Method::kPost);
  EXPECT_EQ(w->status, 405);
  EXPECT_EQ(w->header("allow"), "GET, HEAD");
  EXPECT_EQ(run("/.env")->status, 404);
  EXPECT_EQ(run("/nope.txt")->status, 404);
  action_.allow_dotfiles = true;
  build();
  EXPECT_EQ(run("/.env")->body, "SECRET=1");
}

TEST_F(StaticHandlerTest, SymlinkOutsideTheRootIsRefused) {
  TempTree outside;
  outside.write("passwd", "root:x:0:0");
  tree_.symlink(outside.at("passwd"), "link-out");
  tree_.symlink("digits.txt", "link-in");
  EXPECT_EQ(run("/link-out")->status, 403);
  EXPECT_EQ(run("/link-in")->body, "0123456789");
  action_.follow_symlinks = common::config::FollowSymlinks::kNever;
  build();
  EXPECT_EQ(run("/link-in")->status, 403);
  EXPECT_EQ(run("/digits.txt")->status, 200);
}

TEST_F(StaticHandlerTest, ConditionalRequests) {
  auto first = run("/digits.txt");
  std::string etag = *first->header("etag");
  std::string modified = *first->header("last-modified");
  auto w = run("/digits.txt", {{"If-None-Match", etag}});
  EXPECT_EQ(w->status, 304);
  EXPECT_EQ(w->body, "");
  EXPECT_EQ(w->header("etag"), etag);
  EXPECT_EQ(w->header("cache-control"), "max-age=60");
  EXPECT_EQ(run("/digits.txt", {{"If-Modified-Since", modified}})->status, 304);
  EXPECT_EQ(
      run("/digits.txt", {{"If-None-Match", "\"x\""}, {"If-Modified-Since", modified}})->status,
      200);
  EXPECT_EQ(run("/digits.txt", {{"If-Match", "\"x\""}})->status, 412);
  EXPECT_EQ(run("/digits.txt", {{"If-Match", etag}})->status, 200);
  EXPECT_EQ(run("/digits.txt", {{"If-Unmodified-Since", "Thu, 01 Jan 1970 00:00:01 GMT"}})->status,
            412);
}

TEST_F(StaticHandlerTest, Ranges) {
  auto w = run("/digits.txt", {{"Range", "bytes=2-4"}});
  EXPECT_EQ(w->status, 206);
  EXPECT_EQ(w->body, "234");
  EXPECT_EQ(w->header("content-range"), "bytes 2-4/10");
  EXPECT_EQ(run("/digits.txt", {{"Range", "bytes=-3"}})->body, "789");
  EXPECT_EQ(run("/digits.txt", {{"Range", "bytes=7-"}})->body, "789");
  w = run("/digits.txt", {{"Range", "bytes=10-"}});
  EXPECT_EQ(w->status, 416);
  EXPECT_EQ(w->header("content-range"), "bytes */10");
  EXPECT_EQ(run("/digits.txt", {{"Range", "bytes=5-1"}})->status, 200);  // invalid: ignored
  // If-Range: a matching validator honours the range, another one gets the whole file.
  std::string etag = *run("/digits.txt")->header("etag");
  EXPECT_EQ(run("/digits.txt", {{"Range", "bytes=0-0"}, {"If-Range", etag}})->status, 206);
  w = run("/digits.txt", {{"Range", "bytes=0-0"}, {"If-Range", "\"old\""}});
  EXPECT_EQ(w->status, 200);
  EXPECT_EQ(w->body, "0123456789");
  // HEAD ignores Range (GET only).
  EXPECT_EQ(run("/digits.txt", {{"Range", "bytes=0-0"}}, Method::kHead)->status, 200);
  // Large files: the slice is sent from the fd.
  w = run("/big.bin", {{"Range", "bytes=19999-"}});
  EXPECT_EQ(w->body, "bEND");
  EXPECT_EQ(w->file_slices, 1);
}

TEST_F(StaticHandlerTest, MultipartRanges) {
  auto w = run("/digits.txt", {{"Range", "bytes=0-1,8-"}});
  EXPECT_EQ(w->status, 206);
  std::string type = *w->header("content-type");
  ASSERT_EQ(type.rfind("multipart/byteranges; boundary=", 0), 0u);
  std::string boundary = type.substr(type.find('=') + 1);
  std::string expected = "\r\n--" + boundary +
                         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Range: bytes "
                         "0-1/10\r\n\r\n01\r\n--" +
                         boundary +
                         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Range: bytes "
                         "8-9/10\r\n\r\n89\r\n--" +
                         boundary + "--\r\n";
  EXPECT_EQ(w->body, expected);
  EXPECT_EQ(w->content_length, expected.size());
  // Too many overlapping bytes: the whole file.
  EXPECT_EQ(run("/digits.txt", {{"Range", "bytes=0-9,0-9"}})->status, 200);
}

TEST_F(StaticHandlerTest, PrecompressedVariants) {
  auto w = run("/app.js", {{"Accept-Encoding", "gzip, br"}});
  EXPECT_EQ(w->body, "BROTLI");
  EXPECT_EQ(w->header("content-encoding"), "br");
  EXPECT_EQ(w->header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(w->header("vary"), "Accept-Encoding");
  std::string br_etag = *w->header("etag");
  w = run("/app.js", {{"Accept-Encoding", "gzip, br;q=0.5"}});
  EXPECT_EQ(w->body, "GZIPPED");
  EXPECT_EQ(w->header("content-encoding"), "gzip");
  EXPECT_NE(*w->header("etag"), br_etag);  // validators are per variant
  w = run("/app.js");
  EXPECT_EQ(w->body, "console.log(1);\n");
  EXPECT_FALSE(w->header("content-encoding").has_value());
  EXPECT_EQ(w->header("vary"), "Accept-Encoding");
  // Per-variant validators: the br ETag revalidates the br variant only.
  EXPECT_EQ(run("/app.js", {{"Accept-Encoding", "br"}, {"If-None-Match", br_etag}})->status, 304);
  EXPECT_EQ(run("/app.js", {{"If-None-Match", br_etag}})->status, 200);
  // A file without variants falls back to itself.
  w = run("/digits.txt", {{"Accept-Encoding", "br, gzip"}});
  EXPECT_EQ(w->body, "0123456789");
  EXPECT_FALSE(w->header("content-encoding").has_value());
  // A direct request of the variant is an ordinary file.
  w = run("/app.js.gz");
  EXPECT_EQ(w->header("content-type"), "application/gzip");
  EXPECT_FALSE(w->header("content-encoding").has_value());
}

TEST_F(StaticHandlerTest, HeadHasTheHeadersOfGet) {
  auto w = run("/big.bin", {}, Method::kHead);
  EXPECT_EQ(w->status, 200);
  EXPECT_EQ(w->content_length, 20003u);
  EXPECT_EQ(w->body, "");
  EXPECT_EQ(w->file_slices, 0);
}

TEST_F(StaticHandlerTest, CheckModeServesTheNewBytesAtOnce) {
  EXPECT_EQ(run("/digits.txt")->body, "0123456789");
  tree_.write("digits.txt", "9876543210");
  tree_.setMtime("digits.txt", 2000000000);
  EXPECT_EQ(run("/digits.txt")->body, "9876543210");
}

TEST(StaticHandlerCreate, MissingRootNamesTheRoute) {
  StaticAction action;
  action.root = "/nonexistent-scalws-docroot";
  auto h = StaticHandler::create(action, common::config::SourceLocation{"site.toml", 12, 3});
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().message().rfind("site.toml:12:3: ", 0), 0u) << h.status().message();
  EXPECT_NE(h.status().message().find("/nonexistent-scalws-docroot"), std::string::npos);
}

}  // namespace
}  // namespace scalws::worker
