#include "worker/http2/frame_checker.h"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <string>
#include <string_view>

#include "tests/support/chunk_feeder.h"
#include "tests/unit/worker/http2/h2_test_peer.h"

namespace scalws::worker::http2 {
namespace {

namespace feed = scalws::testing;
using testing::frame;
using testing::u32;
using Action = FrameChecker::Action;

using testing::kEndHeaders;
using testing::kEndStream;

std::string magic() {
  return std::string(NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
}
// HEADERS with a stand-in block: the checker never decodes it.
std::string headers(int32_t id, uint8_t flags = kEndHeaders | kEndStream) {
  return frame(NGHTTP2_HEADERS, flags, id, "\x82");
}
std::string data(int32_t id, uint8_t flags = 0, const std::string& payload = "body") {
  return frame(NGHTTP2_DATA, flags, id, payload);
}
std::string rst(int32_t id) {
  return frame(NGHTTP2_RST_STREAM, 0, id, u32(NGHTTP2_CANCEL));
}
std::string priority(int32_t id, int32_t depends_on) {
  return frame(NGHTTP2_PRIORITY, 0, id, u32(static_cast<uint32_t>(depends_on)) + "\x10");
}
std::string windowUpdate(int32_t id) {
  return frame(NGHTTP2_WINDOW_UPDATE, 0, id, u32(1024));
}

struct Outcome {
  FrameChecker::Finding finding;
  size_t act_at = 0;  // absolute offset in the input
};

// Scans `input` in the given split; returns the first finding and where the session would
// act on it.
Outcome check(const std::string& input, feed::Split split, uint32_t seed = 9) {
  FrameChecker checker;
  size_t pos = 0;
  auto bytes = reinterpret_cast<const uint8_t*>(input.data());
  for (size_t n : feed::chunkSizes(split, input.size(), seed)) {
    size_t done = 0;
    while (done < n) {
      FrameChecker::Result r = checker.scan(bytes + pos + done, n - done);
      if (r.finding.action != Action::kNone) return {r.finding, pos + done + r.act_at};
      done += r.scanned;
    }
    pos += n;
  }
  return {};
}

struct Case {
  const char* name;
  std::string frames;  // after the preface
  Action action;
  uint32_t error_code = 0;
  int32_t stream = 0;
  std::string before = "";  // frames before the offending one (act_at lands after them)
};

class FrameCheckerTest : public ::testing::TestWithParam<feed::Split> {};

TEST_P(FrameCheckerTest, FindingsAndWhereTheyApply) {
  const Case cases[] = {
      // What a well-behaved client sends.
      {"request", headers(1), Action::kNone},
      {"request with body", headers(1, kEndHeaders) + data(1) + data(1, kEndStream), Action::kNone},
      {"trailers", headers(1, kEndHeaders) + data(1) + headers(1), Action::kNone},
      {"skipped ids", headers(1) + headers(7) + headers(5001), Action::kNone},
      {"WINDOW_UPDATE and PRIORITY on a half-closed stream",
       headers(1) + windowUpdate(1) + priority(1, 0), Action::kNone},
      {"RST_STREAM on a half-closed stream", headers(1) + rst(1), Action::kNone},
      {"PRIORITY on an idle stream", priority(9, 0), Action::kNone},
      {"idle stream and even ids are nghttp2's", data(3) + headers(2), Action::kNone},
      // Frames after the peer ended its side: a connection error STREAM_CLOSED.
      {"DATA after END_STREAM", data(1), Action::kCloseConnection, NGHTTP2_STREAM_CLOSED, 1,
       headers(1)},
      {"HEADERS after END_STREAM", headers(1), Action::kCloseConnection, NGHTTP2_STREAM_CLOSED, 1,
       headers(1) + headers(3)},
      {"DATA after a DATA with END_STREAM", data(1), Action::kCloseConnection,
       NGHTTP2_STREAM_CLOSED, 1, headers(1, kEndHeaders) + data(1, kEndStream)},
      // After the peer's RST_STREAM: a stream error STREAM_CLOSED.
      {"DATA after RST_STREAM", data(1), Action::kResetStream, NGHTTP2_STREAM_CLOSED, 1,
       headers(1, kEndHeaders) + rst(1)},
      {"HEADERS after RST_STREAM", headers(1), Action::kResetStream, NGHTTP2_STREAM_CLOSED, 1,
       headers(1, kEndHeaders) + rst(1)},
      // Ids below the highest one that were never opened.
      {"HEADERS going back", headers(3), Action::kCloseConnection, NGHTTP2_PROTOCOL_ERROR, 3,
       headers(5)},
      {"DATA on an implicitly closed stream", data(3), Action::kResetStream, NGHTTP2_STREAM_CLOSED,
       3, headers(5, kEndHeaders)},
      // PRIORITY.
      {"PRIORITY on stream 0", priority(0, 1), Action::kCloseConnection, NGHTTP2_PROTOCOL_ERROR, 0,
       headers(1)},
      {"PRIORITY depending on itself", priority(1, 1), Action::kCloseConnection,
       NGHTTP2_PROTOCOL_ERROR, 1, headers(3)},
      {"PRIORITY on an idle stream depending on itself", priority(9, 9), Action::kCloseConnection,
       NGHTTP2_PROTOCOL_ERROR, 9},
  };
  for (const Case& c : cases) {
    std::string input = magic() + c.before + c.frames + headers(999);
    Outcome o = check(input, GetParam());
    SCOPED_TRACE(std::string(c.name) + " (" + feed::splitName(GetParam()) + ")");
    EXPECT_EQ(o.finding.action, c.action);
    if (c.action == Action::kNone) continue;
    EXPECT_EQ(o.finding.error_code, c.error_code);
    EXPECT_EQ(o.finding.stream_id, c.stream);
    // The session feeds nghttp2 everything before the offending frame and acts before
    // nghttp2 has the frame's whole header (the whole frame, for PRIORITY, whose payload is
    // judged): parts of the frame from earlier reads have gone ahead, harmlessly.
    size_t frame_start = magic().size() + c.before.size();
    size_t judged = std::string_view(c.name).starts_with("PRIORITY") ? 9 + 5 : 9;
    EXPECT_LT(o.act_at, frame_start + judged);
    if (GetParam() == feed::Split::kWhole) {
      EXPECT_EQ(o.act_at, frame_start);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Splits, FrameCheckerTest, ::testing::ValuesIn(feed::kAllSplits));

TEST(FrameCheckerStreams, AStreamThatFellOutOfTheWindow) {
  FrameChecker checker;
  std::string input = magic() + headers(1, kEndHeaders);
  for (int32_t id = 3; id < 5000; id += 2) input += headers(id);
  // The first finding in `bytes`, scanning all of them as the session does.
  auto scan = [&](const std::string& bytes) {
    FrameChecker::Finding first;
    size_t done = 0;
    while (done < bytes.size()) {
      auto r =
          checker.scan(reinterpret_cast<const uint8_t*>(bytes.data()) + done, bytes.size() - done);
      if (first.action == Action::kNone) first = r.finding;
      done += r.scanned;
    }
    return first;
  };
  EXPECT_EQ(scan(input).action, Action::kNone);
  // Stream 1 is too old to be remembered: its DATA gets a stream error at most (which the
  // session applies only when nghttp2 has no such stream open), its HEADERS pass.
  FrameChecker::Finding f = scan(data(1));
  EXPECT_EQ(f.action, Action::kResetStream);
  EXPECT_EQ(scan(headers(1)).action, Action::kNone);
  // Recent streams are still judged.
  EXPECT_EQ(scan(data(4999)).action, Action::kCloseConnection);
}

TEST(FrameCheckerStreams, NothingIsLookedAtAfterAConnectionError) {
  FrameChecker checker;
  std::string input = magic() + headers(1) + data(1);
  auto r = checker.scan(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  EXPECT_EQ(r.finding.action, Action::kCloseConnection);
  std::string more = data(1) + priority(0, 1);
  r = checker.scan(reinterpret_cast<const uint8_t*>(more.data()), more.size());
  EXPECT_EQ(r.finding.action, Action::kNone);
}

}  // namespace
}  // namespace scalws::worker::http2
