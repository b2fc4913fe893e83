#include "worker/response/response_filter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/config/config_loader.h"
#include "tests/unit/worker/handlers/static/temp_tree.h"
#include "tests/unit/worker/response/decode.h"

namespace scalws::worker {
namespace {

using testing::compressibleText;

// Bytes that do not compress, so compressed output is as large as the input.
std::string incompressible(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 777;
  for (char& c : s) {
    x = x * 1103515245 + 12345;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

// The stream side: records what reaches it, holds what it was given as "queued" until the
// test drains it, and keeps the observer and in-flight it is handed.
class StreamStub final : public ResponseWriter {
 public:
  ~StreamStub() override {
    for (RefCounted* o : owners_) o->release();
  }
  void sendHead(const ResponseHead& head) noexcept override {
    ++heads;
    status = head.status;
    content_length = head.content_length;
    headers.clear();
    for (const HeaderField& h : head.headers) headers.emplace_back(h.name, h.value);
  }
  void sendBody(std::string_view data, BodyLifetime) noexcept override {
    body.append(data);
    queued += data.size();
    max_queued = std::max(max_queued, queued);
    if (abort_on_body && in_flight != nullptr) {
      abort_on_body = false;
      InFlight* f = in_flight;
      in_flight = nullptr;
      f->abort();  // the connection died while writing
    }
  }
  void sendFile(const FileSlice& file) noexcept override {
    if (file.owner != nullptr) {
      file.owner->retain();
      owners_.push_back(file.owner);
    }
    std::string chunk(file.length, '\0');
    ssize_t n = ::pread(file.fd, chunk.data(), chunk.size(), static_cast<off_t>(file.offset));
    body.append(chunk.data(), n > 0 ? static_cast<size_t>(n) : 0);
  }
  void sendBodyRetained(std::string_view data, RefCounted*) noexcept override {
    ++retained;
    body.append(data);
  }
  void finish() noexcept override { ++finished; }
  void abortResponse() noexcept override { ++aborted; }
  size_t queuedBytes() const noexcept override { return queued; }
  void notifyWhenWritable(WritableObserver* o) noexcept override { observer = o; }
  void setInFlight(InFlight* f) noexcept override { in_flight = f; }

  // The socket took everything: the observer, if any, is told.
  bool drain() {
    queued = 0;
    WritableObserver* o = observer;
    observer = nullptr;
    if (o != nullptr) o->onWritable();
    return o != nullptr;
  }
  std::optional<std::string> header(std::string_view name) const {
    std::optional<std::string> found;
    for (const auto& [n, v] : headers) {
      if (equalsIgnoreCase(n, name)) found = found ? *found + ", " + v : v;
    }
    return found;
  }

  int heads = 0;
  int finished = 0;
  int aborted = 0;
  int retained = 0;
  uint16_t status = 0;
  std::optional<uint64_t> content_length;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  size_t queued = 0;
  size_t max_queued = 0;
  WritableObserver* observer = nullptr;
  InFlight* in_flight = nullptr;
  bool abort_on_body = false;

 private:
  std::vector<RefCounted*> owners_;
};

class PinnedOwner final : public RefCounted {
 public:
  bool released = false;

 private:
  void onLastRelease() noexcept override { released = true; }
};

class HandlerStub final : public InFlight, public WritableObserver {
 public:
  void abort() noexcept override { ++aborts; }
  void onWritable() noexcept override { ++writable; }
  int aborts = 0;
  int writable = 0;
};

constexpr std::string_view kFilterSite = R"(
[[listen]]
address = "127.0.0.1:1"
[[route]]
match = { prefix = "/headers/" }
respond = {}
headers = { set = { x-frame-options = "DENY" }, remove = ["x-powered-by"] }
[[route]]
match = { prefix = "/gzip/" }
respond = {}
compress = { encodings = ["gzip"], min_size = 100 }
[[route]]
match = { prefix = "/all/" }
respond = {}
compress = { min_size = 100, level = { gzip = 1, br = 1, zstd = 1 } }
)";

class ResponseFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto site = common::config::loadSiteConfigString(kFilterSite, "t.toml");
    ASSERT_TRUE(site.ok()) << site.status().message();
    site_ = std::move(site).value();
    auto set = ResponseRulesSet::build(site_);
    ASSERT_TRUE(set.ok()) << set.status().message();
    rules_ = std::move(set).value();
    request_.arena = &arena_;
    accept("gzip, br, zstd");
  }

  void accept(std::string_view value) {
    accept_ = HeaderField{"Accept-Encoding", value};
    request_.headers = std::span<const HeaderField>(&accept_, 1);
  }

  ResponseFilter& start(size_t route) {
    ResponseFilter& f = home_.take();
    f.start(request_, stream_, *rules_->route(route));
    EXPECT_EQ(stream_.in_flight, &f);
    return f;
  }

  static ResponseHead head(uint16_t status, std::span<const HeaderField> fields,
                           std::optional<uint64_t> length) {
    ResponseHead h;
    h.status = status;
    h.headers = fields;
    h.content_length = length;
    return h;
  }

  common::config::SiteConfig site_;
  std::unique_ptr<ResponseRulesSet> rules_;
  Arena arena_{1024};
  Request request_;
  HeaderField accept_;
  ResponseFilters home_;
  StreamStub stream_;
};

const HeaderField kHtml[] = {{"Content-Type", "text/html"},
                             {"ETag", "\"abc\""},
                             {"Accept-Ranges", "bytes"},
                             {"X-Powered-By", "PHP"}};

TEST_F(ResponseFilterTest, HeaderEditsLeaveTheBodyAlone) {
  ResponseFilter& f = start(0);
  f.respond(200, kHtml, "hello", BodyLifetime::kCopy);
  EXPECT_EQ(stream_.header("x-frame-options"), "DENY");
  EXPECT_FALSE(stream_.header("x-powered-by").has_value());
  EXPECT_EQ(stream_.header("etag"), "\"abc\"");
  EXPECT_EQ(stream_.content_length, 5u);
  EXPECT_EQ(stream_.body, "hello");
  EXPECT_EQ(stream_.finished, 1);
  EXPECT_EQ(home_.inUse(), 0u);
}

TEST_F(ResponseFilterTest, CompressesAStreamedBody) {
  std::string text = compressibleText(50'000);
  ResponseFilter& f = start(1);
  f.sendHead(head(200, kHtml, text.size()));
  EXPECT_FALSE(stream_.content_length.has_value());  // streamed now
  EXPECT_EQ(stream_.header("content-encoding"), "gzip");
  EXPECT_EQ(stream_.header("vary"), "Accept-Encoding");
  EXPECT_EQ(stream_.header("etag"), "W/\"abc\"");
  EXPECT_FALSE(stream_.header("accept-ranges").has_value());
  for (size_t at = 0; at < text.size(); at += 4096) {
    f.sendBody(std::string_view(text).substr(at, 4096), BodyLifetime::kCopy);
  }
  EXPECT_EQ(stream_.finished, 0);
  f.finish();
  EXPECT_EQ(stream_.finished, 1);
  EXPECT_EQ(testing::gunzip(stream_.body), text);
  EXPECT_LT(stream_.body.size(), text.size() / 4);
  EXPECT_EQ(home_.inUse(), 0u);
  EXPECT_EQ(home_.compressors().idle(), 1u);  // kept for the next response
}

TEST_F(ResponseFilterTest, ChoosesTheEncodingFromAcceptEncoding) {
  std::string text = compressibleText(5'000);
  accept("gzip;q=0.5, zstd");
  start(2).respond(200, kHtml, text, BodyLifetime::kCopy);
  EXPECT_EQ(stream_.header("content-encoding"), "zstd");
  EXPECT_EQ(testing::unzstd(stream_.body), text);
}

TEST_F(ResponseFilterTest, Brotli) {
  std::string text = compressibleText(5'000);
  accept("br");
  start(2).respond(200, kHtml, text, BodyLifetime::kCopy);
  EXPECT_EQ(stream_.header("content-encoding"), "br");
  EXPECT_EQ(testing::unbrotli(stream_.body), text);
}

TEST_F(ResponseFilterTest, IdentityStillVaries) {
  accept("identity");
  start(1).respond(200, kHtml, compressibleText(5'000), BodyLifetime::kCopy);
  EXPECT_FALSE(stream_.header("content-encoding").has_value());
  EXPECT_EQ(stream_.header("vary"), "Accept-Encoding");
  EXPECT_EQ(stream_.header("etag"), "\"abc\"");
  EXPECT_EQ(stream_.content_length, 5'000u);
  EXPECT_EQ(stream_.body.size(), 5'000u);
}

TEST_F(ResponseFilterTest, ExistingVaryIsExtendedOnce) {
  const HeaderField fields[] = {{"content-type", "text/html"}, {"Vary", "Cookie"}};
  start(1).respond(200, fields, compressibleText(500), BodyLifetime::kCopy);
  EXPECT_EQ(stream_.header("vary"), "Cookie, Accept-Encoding");
  StreamStub again;
  const HeaderField already[] = {{"content-type", "text/html"}, {"Vary", "accept-encoding"}};
  ResponseFilter& f = home_.take();
  f.start(request_, again, *rules_->route(1));
  f.respond(200, already, compressibleText(500), BodyLifetime::kCopy);
  EXPECT_EQ(again.header("vary"), "accept-encoding");
}

TEST_F(ResponseFilterTest, SmallOrEncodedOrPartialResponsesPass) {
  start(1).respond(200, kHtml, "tiny", BodyLifetime::kCopy);
  EXPECT_FALSE(stream_.header("vary").has_value());
  EXPECT_EQ(stream_.body, "tiny");

  StreamStub encoded;
  const HeaderField gz[] = {{"content-type", "text/html"}, {"content-encoding", "gzip"}};
  ResponseFilter& f = home_.take();
  f.start(request_, encoded, *rules_->route(1));
  f.respond(200, gz, std::string(500, 'a'), BodyLifetime::kCopy);
  EXPECT_EQ(encoded.header("content-encoding"), "gzip");
  EXPECT_EQ(encoded.body, std::string(500, 'a'));

  StreamStub partial;
  ResponseFilter& g = home_.take();
  g.start(request_, partial, *rules_->route(1));
  const HeaderField range[] = {{"content-type", "text/html"}, {"content-range", "bytes 0-499/900"}};
  g.respond(206, range, std::string(500, 'a'), BodyLifetime::kCopy);
  EXPECT_FALSE(partial.header("content-encoding").has_value());
  EXPECT_EQ(partial.body.size(), 500u);
  EXPECT_EQ(home_.inUse(), 0u);
}

TEST_F(ResponseFilterTest, HeadGetsTheHeadersWithoutTheWork) {
  request_.method = Method::kHead;
  ResponseFilter& f = start(1);
  f.sendHead(head(200, kHtml, 5'000));
  f.finish();
  EXPECT_EQ(stream_.header("content-encoding"), "gzip");
  EXPECT_FALSE(stream_.content_length.has_value());
  EXPECT_TRUE(stream_.body.empty());
  EXPECT_EQ(stream_.finished, 1);
  EXPECT_EQ(home_.compressors().idle(), 0u);  // none was taken
}

TEST_F(ResponseFilterTest, NotModifiedCarriesVaryAndTheWeakValidator) {
  const HeaderField fields[] = {{"ETag", "\"abc\""}};
  ResponseFilter& f = start(1);
  f.sendHead(head(304, fields, std::nullopt));
  f.finish();
  EXPECT_EQ(stream_.status, 304);
  EXPECT_EQ(stream_.header("etag"), "W/\"abc\"");
  EXPECT_EQ(stream_.header("vary"), "Accept-Encoding");
  EXPECT_FALSE(stream_.header("content-encoding").has_value());
}

TEST_F(ResponseFilterTest, SwitchingProtocolsPassesUntouched) {
  const HeaderField fields[] = {{"Upgrade", "websocket"}, {"X-Powered-By", "x"}};
  ResponseFilter& f = start(0);
  f.sendHead(head(101, fields, std::nullopt));
  f.sendBody("frame", BodyLifetime::kCopy);
  f.finish();
  EXPECT_EQ(stream_.header("x-powered-by"), "x");
  EXPECT_EQ(stream_.body, "frame");
}

TEST_F(ResponseFilterTest, AFileIsCompressedAsTheStreamDrains) {
  testing::TempTree tree;
  std::string content = incompressible(600'000);
  tree.write("f.bin", content);
  int fd = ::open(tree.at("f.bin").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  PinnedOwner owner;
  ResponseFilter& f = start(1);
  f.sendHead(head(200, kHtml, content.size()));
  f.sendFile(FileSlice{fd, 0, content.size(), &owner});
  f.finish();  // the static handler finishes at once; the filter finishes later
  EXPECT_EQ(stream_.finished, 0);
  EXPECT_NE(stream_.observer, nullptr);
  EXPECT_GT(f.queuedBytes(), content.size() / 2);  // what is pending counts
  EXPECT_FALSE(owner.released);
  int rounds = 0;
  while (stream_.drain()) ++rounds;
  EXPECT_GT(rounds, 5);
  EXPECT_EQ(stream_.finished, 1);
  EXPECT_LE(stream_.max_queued, ResponseFilter::kHighWater + 2 * ResponseFilter::kChunk);
  EXPECT_EQ(testing::gunzip(stream_.body), content);
  owner.release();
  EXPECT_TRUE(owner.released);  // the filter let go of it
  EXPECT_EQ(home_.inUse(), 0u);
  ::close(fd);
}

TEST_F(ResponseFilterTest, ARetainedBodyIsPendingInput) {
  std::string content = incompressible(300'000);
  PinnedOwner owner;
  ResponseFilter& f = start(1);
  f.sendHead(head(200, kHtml, content.size()));
  f.sendBodyRetained(content, &owner);
  f.finish();
  EXPECT_EQ(stream_.retained, 0);
  while (stream_.drain()) {
  }
  EXPECT_EQ(stream_.finished, 1);
  EXPECT_EQ(testing::gunzip(stream_.body), content);
  owner.release();
  EXPECT_TRUE(owner.released);
}

TEST_F(ResponseFilterTest, AbortWhilePendingReleasesAndTellsTheHandler) {
  std::string content = incompressible(300'000);
  PinnedOwner owner;
  HandlerStub handler;
  ResponseFilter& f = start(1);
  f.setInFlight(&handler);
  f.sendHead(head(200, kHtml, content.size()));
  f.sendBodyRetained(content, &owner);
  ASSERT_NE(stream_.in_flight, nullptr);
  stream_.in_flight->abort();  // the client went away
  EXPECT_EQ(handler.aborts, 1);
  EXPECT_EQ(home_.inUse(), 0u);
  owner.release();
  EXPECT_TRUE(owner.released);
  EXPECT_EQ(home_.compressors().idle(), 1u);  // reset and kept
}

TEST_F(ResponseFilterTest, AbortInsideAStreamCallIsHonouredAfterIt) {
  HandlerStub handler;
  ResponseFilter& f = start(1);
  f.setInFlight(&handler);
  f.sendHead(head(200, kHtml, std::nullopt));
  stream_.abort_on_body = true;
  f.sendBody(incompressible(100'000), BodyLifetime::kCopy);  // output leaves: the stream dies
  EXPECT_EQ(handler.aborts, 1);
  EXPECT_EQ(home_.inUse(), 0u);
  size_t sent = stream_.body.size();
  f.sendBody("more", BodyLifetime::kCopy);  // a late call is ignored
  f.finish();
  EXPECT_EQ(stream_.body.size(), sent);
  EXPECT_EQ(stream_.finished, 0);
}

TEST_F(ResponseFilterTest, HandlerBackPressureWorksThroughTheFilter) {
  HandlerStub handler;
  ResponseFilter& f = start(1);
  f.setInFlight(&handler);
  f.sendHead(head(200, kHtml, std::nullopt));
  f.sendBody(incompressible(100'000), BodyLifetime::kCopy);
  EXPECT_GT(f.queuedBytes(), 64'000u);
  f.notifyWhenWritable(&handler);
  EXPECT_EQ(stream_.observer, &f);
  EXPECT_EQ(handler.writable, 0);
  stream_.drain();
  EXPECT_EQ(handler.writable, 1);
  EXPECT_EQ(f.queuedBytes(), 0u);
  f.finish();
  EXPECT_EQ(stream_.finished, 1);
}

TEST_F(ResponseFilterTest, AbortResponseCutsAndRecycles) {
  ResponseFilter& f = start(1);
  f.sendHead(head(200, kHtml, std::nullopt));
  f.sendBody(compressibleText(2'000), BodyLifetime::kCopy);
  f.abortResponse();
  EXPECT_EQ(stream_.aborted, 1);
  EXPECT_EQ(stream_.finished, 0);
  EXPECT_EQ(home_.inUse(), 0u);
}

}  // namespace
}  // namespace scalws::worker
