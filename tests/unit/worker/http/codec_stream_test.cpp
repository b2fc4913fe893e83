#include "worker/http/codec_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "worker/net/buffer_pool.h"

namespace scalws::worker {
namespace {

// A codec with nghttp2's and nghttp3's shapes, counting references and recording calls.
struct CodecTestRcbuf {
  std::string bytes;
  bool is_static = false;
  int refs = 1;
};

struct CodecTestNv {
  uint8_t* name;
  uint8_t* value;
  size_t namelen;
  size_t valuelen;
  uint8_t flags;
};

struct CodecTestBody {
  explicit CodecTestBody(BufferPool&) {}
  void clear() { files.clear(); }
  void appendFile(const FileSlice& file) { files.push_back(file); }
  std::vector<FileSlice> files;
};

class CodecTestStream;

struct CodecTestSession {
  void streamOutputChanged() { ++output_changed; }
  void streamFinished(CodecTestStream& s) { finished.push_back(&s); }
  void streamBodyTooLarge(CodecTestStream& s) { too_large.push_back(&s); }
  int output_changed = 0;
  std::vector<CodecTestStream*> finished;
  std::vector<CodecTestStream*> too_large;
};

// The library's C calls, as nghttp2 and nghttp3 name theirs.
struct CodecTestVec {
  const uint8_t* base;
  size_t len;
};
CodecTestVec codecTestGetBuf(CodecTestRcbuf* b) {
  return CodecTestVec{reinterpret_cast<const uint8_t*>(b->bytes.data()), b->bytes.size()};
}
int codecTestIsStatic(const CodecTestRcbuf* b) {
  return b->is_static ? 1 : 0;
}
void codecTestIncref(CodecTestRcbuf* b) {
  ++b->refs;
}
void codecTestDecref(CodecTestRcbuf* b) {
  --b->refs;
}

struct CodecTestCodec : RcbufCalls<CodecTestRcbuf, CodecTestNv, &codecTestGetBuf,
                                   &codecTestIsStatic, &codecTestIncref, &codecTestDecref, 0x06> {
  using Session = CodecTestSession;
  using Stream = CodecTestStream;
  using Body = CodecTestBody;
  using StreamId = int64_t;
  static constexpr StreamId kNoId = -1;
  static constexpr HttpVersion kVersion = HttpVersion::kHttp3;
};

class CodecTestStream final : public CodecStream<CodecTestCodec> {
 public:
  CodecTestStream(CodecTestSession& session, BufferPool& pool) : CodecStream(session, pool) {}

  void sendHead(const ResponseHead& head) noexcept override {
    if (!beginResponse(head.status)) return;
    setNva(responseFields(head.status, head.headers, head.content_length, "now"));
    startData(head, head.status);
  }
  void sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept override {
    if (interimNva(status, headers)) ++interims;
  }
  size_t queuedBytes() const noexcept override { return 0; }
  void onExpectContinue(bool) noexcept override {}
  void reopenWindow(uint64_t) noexcept override {}
  void queueBody(std::string_view, BodyLifetime) noexcept override {}
  void resumeCodec() noexcept override {}

  using CodecStream::addNv;
  using CodecStream::body_;
  using CodecStream::bodyTooLarge;
  using CodecStream::closed;
  using CodecStream::die;
  using CodecStream::Field;
  using CodecStream::finishHead;
  using CodecStream::held_;
  using CodecStream::id_;
  using CodecStream::nva_;
  using CodecStream::open;
  using CodecStream::outputChanged;
  using CodecStream::pseudo_;
  using CodecStream::recycleShared;
  using CodecStream::takeField;

  std::string nv(size_t i) const {
    return std::string(reinterpret_cast<const char*>(nva_[i].name), nva_[i].namelen) + ": " +
           std::string(reinterpret_cast<const char*>(nva_[i].value), nva_[i].valuelen);
  }

  int interims = 0;
};

class CodecStreamTest : public ::testing::Test {
 protected:
  BufferPool pool_;
  CodecTestSession session_;
  CodecTestStream stream_{session_, pool_};
};

TEST_F(CodecStreamTest, HoldsTheBuffersOfStoredFieldsUntilRecycled) {
  CodecTestRcbuf name{"x-a", false};
  CodecTestRcbuf static_name{"accept", true};
  CodecTestRcbuf value{"1"};
  CodecTestRcbuf value2{"text/html"};

  CodecTestStream::Field f = stream_.takeField(&name, &value, 1024, 10);
  EXPECT_TRUE(f.keep);
  EXPECT_EQ(f.name, "x-a");
  EXPECT_EQ(f.value, "1");
  f = stream_.takeField(&static_name, &value2, 1024, 10);
  EXPECT_TRUE(f.keep);
  EXPECT_EQ(name.refs, 2);
  EXPECT_EQ(value.refs, 2);
  EXPECT_EQ(static_name.refs, 1);  // a static-table name is not reference counted
  EXPECT_EQ(value2.refs, 2);
  EXPECT_EQ(stream_.held_.size(), 3u);

  stream_.pseudo_.method = "GET";
  stream_.recycleShared();
  EXPECT_EQ(name.refs, 1);
  EXPECT_EQ(value.refs, 1);
  EXPECT_EQ(value2.refs, 1);
  EXPECT_TRUE(stream_.held_.empty());
  EXPECT_TRUE(stream_.pseudo_.method.empty());
}

TEST_F(CodecStreamTest, ARecycledStreamHasNoIdAndAnEmptyHead) {
  EXPECT_EQ(stream_.id(), -1);
  stream_.id_ = 8;
  EXPECT_EQ(stream_.id(), 8);
  stream_.pseudo_.method = "GET";
  stream_.pseudo_.path = "/a";
  stream_.pseudo_.authority = "example.org";
  stream_.finishHead(true);
  EXPECT_EQ(stream_.requestError(), 0);
  EXPECT_TRUE(stream_.requestComplete());
  EXPECT_EQ(stream_.request().version, HttpVersion::kHttp3);
  EXPECT_EQ(stream_.request().target, "/a");
  stream_.recycleShared();
  EXPECT_EQ(stream_.id(), -1);
  EXPECT_FALSE(stream_.requestComplete());
  EXPECT_TRUE(stream_.pseudo_.path.empty());
}

TEST_F(CodecStreamTest, AFieldPastTheLimitIsNeitherStoredNorHeld) {
  CodecTestRcbuf name{"x-big", false};
  CodecTestRcbuf value{std::string(100, 'v')};
  // 5 + 100 + 32 bytes against a limit of 100.
  CodecTestStream::Field f = stream_.takeField(&name, &value, 100, 10);
  EXPECT_FALSE(f.keep);
  EXPECT_EQ(name.refs, 1);
  EXPECT_EQ(value.refs, 1);
  EXPECT_TRUE(stream_.held_.empty());
  EXPECT_EQ(stream_.requestError(), 431);
}

TEST_F(CodecStreamTest, BuildsTheCodecArrayWithoutCopies) {
  HeaderField h{"X-Tag", "v"};
  ResponseHead head;
  head.status = 204;
  head.headers = std::span<const HeaderField>(&h, 1);
  stream_.sendHead(head);
  ASSERT_GE(stream_.nva_.size(), 2u);
  EXPECT_EQ(stream_.nv(0), ":status: 204");
  EXPECT_EQ(stream_.nv(1), "x-tag: v");
  for (const CodecTestNv& nv : stream_.nva_) EXPECT_EQ(nv.flags, CodecTestCodec::kNoCopy);

  std::string_view alt = "h3=\":443\"";
  size_t before = stream_.nva_.size();
  stream_.addNv("alt-svc", alt);
  ASSERT_EQ(stream_.nva_.size(), before + 1);
  EXPECT_EQ(reinterpret_cast<const char*>(stream_.nva_.back().value), alt.data());
}

TEST_F(CodecStreamTest, InterimHeadsOnlyBeforeTheFinalOneAndWhileOpen) {
  stream_.sendInterim(200, {});
  stream_.sendInterim(101, {});
  EXPECT_EQ(stream_.interims, 0);
  stream_.sendInterim(103, {});
  EXPECT_EQ(stream_.interims, 1);
  EXPECT_EQ(stream_.nv(0), ":status: 103");

  ResponseHead head;
  head.status = 200;
  stream_.sendHead(head);
  stream_.sendInterim(103, {});
  EXPECT_EQ(stream_.interims, 1);
}

TEST_F(CodecStreamTest, TellsItsSessionAndQueuesFilesInItsBody) {
  stream_.outputChanged();
  EXPECT_EQ(session_.output_changed, 1);
  stream_.bodyTooLarge();
  ASSERT_EQ(session_.too_large.size(), 1u);
  EXPECT_EQ(session_.too_large[0], &stream_);

  ResponseHead head;
  head.status = 200;
  stream_.sendHead(head);
  stream_.sendFile(FileSlice{7, 0, 10, nullptr});
  ASSERT_EQ(stream_.body_.files.size(), 1u);
  EXPECT_EQ(stream_.body_.files[0].fd, 7);
  stream_.finish();
  ASSERT_EQ(session_.finished.size(), 1u);
  EXPECT_EQ(session_.finished[0], &stream_);

  EXPECT_TRUE(stream_.open());
  stream_.die();
  EXPECT_TRUE(stream_.closed());
  EXPECT_FALSE(stream_.open());
}

TEST_F(CodecStreamTest, ADeadStreamSendsNoInterimHead) {
  stream_.die();
  stream_.sendInterim(103, {});
  EXPECT_EQ(stream_.interims, 0);
}

}  // namespace
}  // namespace scalws::worker
