// An endpoint facing a raw socket that sends whatever the test writes: bad frames, stray
// fds, unknown ops. The endpoint must answer with an error, close when it must, and
// never crash or leak an fd.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <optional>

#include "ipc/endpoint.h"
#include "ipc/fd_passing.h"
#include "ipc/unix_socket.h"
#include "ipc_test_util.h"

namespace scalws::ipc {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using testing::countOpenFds;
using testing::encoded;
using testing::lengthPrefix;
using testing::rawFrame;
using testing::TestLoop;

// The test's end of the socket: writes raw bytes, reads frames back.
class RawPeer {
 public:
  explicit RawPeer(UniqueFd fd) : fd_(std::move(fd)) {}

  void send(std::string_view bytes, std::vector<int> fds = {}) {
    auto sent = sendWithFds(fd_.get(), bytes, fds);
    ASSERT_TRUE(sent.ok()) << sent.status().message();
    ASSERT_EQ(sent->bytes, bytes.size());
  }

  // The next frame from the endpoint, or nullopt at end of stream / timeout.
  std::optional<Message> read(TestLoop& loop) {
    std::optional<Message> message;
    loop.runUntil([&] {
      pump();
      auto next = decoder_.next();
      EXPECT_TRUE(next.ok()) << next.status().message();
      if (next.ok() && next->has_value()) message = std::move(**next);
      return message.has_value() || eof_;
    });
    return message;
  }

  bool seesEndOfStream(TestLoop& loop) {
    return loop.runUntil([&] {
      pump();
      return eof_;
    });
  }

 private:
  void pump() {
    std::array<char, 4096> buffer;
    std::vector<UniqueFd> fds;
    auto got = receiveWithFds(fd_.get(), buffer, fds);
    if (!got.ok() || (!got->would_block && got->bytes == 0)) {
      eof_ = true;
      return;
    }
    decoder_.feed(std::string_view(buffer.data(), got->bytes));
  }

  UniqueFd fd_;
  FrameDecoder decoder_;
  bool eof_ = false;
};

struct Harness {
  std::unique_ptr<Endpoint> endpoint;  // the controller, facing a worker
  std::unique_ptr<RawPeer> peer;
  std::optional<Status> closed_with;
};

void setUp(TestLoop& loop, Harness& h) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  auto endpoint = Endpoint::create(loop.get(), std::move(pair->first),
                                   {Role::kController, Role::kWorker, std::nullopt});
  ASSERT_TRUE(endpoint.ok());
  h.endpoint = std::move(*endpoint);
  h.peer = std::make_unique<RawPeer>(std::move(pair->second));
  h.endpoint->onClose([&h](const Status& why) { h.closed_with = why; });
  ASSERT_TRUE(h.endpoint
                  ->registerHandler("hello",
                                    [](const Message&, std::vector<UniqueFd>, Replier r) {
                                      r.ok({{"hi", true}});
                                    })
                  .ok());
}

TEST(EndpointProtocolErrorsTest, UnknownOpsGetAnErrorReplyAndTheChannelStaysOpen) {
  TestLoop loop;
  Harness h;
  setUp(loop, h);
  // Not in the table; in the table but controller -> worker; ctl's op; no handler here.
  const char* ops[] = {"no.such.op", "config", "instance.add", "ready"};
  uint64_t id = 10;
  for (const char* op : ops) {
    h.peer->send(encoded(makeRequest(id, op, {})));
    auto reply = h.peer->read(loop);
    ASSERT_TRUE(reply.has_value()) << op;
    EXPECT_EQ(reply->id, id) << op;
    EXPECT_EQ(reply->error_code, errc::kUnknownOp) << op;
    EXPECT_NE(reply->error_message.find(op), std::string::npos) << reply->error_message;
    ++id;
  }
  h.peer->send(encoded(makeRequest(99, "hello", {})));
  auto reply = h.peer->read(loop);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->id, 99u);
  EXPECT_EQ(reply->result["hi"], true);
  EXPECT_TRUE(h.endpoint->isOpen());
  EXPECT_FALSE(h.closed_with.has_value());
}

TEST(EndpointProtocolErrorsTest, BadFramesGetAnErrorReplyThenTheChannelCloses) {
  struct Case {
    std::string bytes;
    std::string_view code;
  };
  const Case cases[] = {
      {rawFrame("{not json"), errc::kBadFrame},
      {rawFrame("[]"), errc::kBadFrame},
      {rawFrame(R"({"v":1,"op":"hello"})"), errc::kBadFrame},
      {rawFrame(R"({"v":1,"id":"x","op":"hello"})"), errc::kBadFrame},
      {rawFrame(R"({"v":2,"id":1,"op":"hello"})"), errc::kUnsupportedVersion},
      {lengthPrefix(0), errc::kBadFrame},
      {lengthPrefix(kMaxFramePayload + 1) + std::string(100, 'x'), errc::kBadFrame},
  };
  for (const Case& c : cases) {
    TestLoop loop;
    Harness h;
    setUp(loop, h);
    h.peer->send(c.bytes);
    auto reply = h.peer->read(loop);
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->id, 0u);
    EXPECT_EQ(reply->error_code, c.code) << reply->error_message;
    EXPECT_TRUE(h.peer->seesEndOfStream(loop));
    ASSERT_TRUE(h.closed_with.has_value());
    EXPECT_FALSE(h.closed_with->ok());
    EXPECT_FALSE(h.endpoint->isOpen());
  }
}

TEST(EndpointProtocolErrorsTest, PeerClosingInsideAFrameIsAnError) {
  TestLoop loop;
  Harness h;
  setUp(loop, h);
  std::string frame = encoded(makeRequest(1, "hello", {}));
  h.peer->send(std::string_view(frame).substr(0, frame.size() / 2));
  h.peer.reset();
  ASSERT_TRUE(loop.runUntil([&] { return h.closed_with.has_value(); }));
  EXPECT_FALSE(h.closed_with->ok());
}

TEST(EndpointProtocolErrorsTest, PeersConnectionErrorReplyClosesWithItsMessage) {
  TestLoop loop;
  Harness h;
  setUp(loop, h);
  std::optional<Result<Json>> outcome;
  ASSERT_TRUE(
      h.endpoint->request("config", {}, {}, [&](Result<Json> r) { outcome.emplace(r); }).ok());
  h.peer->send(encoded(makeErrorReply(0, errc::kUnsupportedVersion, "speak v1")));
  ASSERT_TRUE(loop.runUntil([&] { return h.closed_with.has_value(); }));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status().code(), StatusCode::kUnavailable);
  EXPECT_NE(outcome->status().message().find("speak v1"), std::string::npos);
}

TEST(EndpointProtocolErrorsTest, ReplyToAnUnknownIdIsDropped) {
  TestLoop loop;
  Harness h;
  setUp(loop, h);
  h.peer->send(encoded(makeReply(4242, {})));
  h.peer->send(encoded(makeRequest(1, "hello", {})));
  auto reply = h.peer->read(loop);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->id, 1u);
  EXPECT_TRUE(h.endpoint->isOpen());
}

// Each case sends three fds with a frame the endpoint refuses or does not hand on.
struct RefusedFrame {
  const char* name;
  std::string bytes;
  bool closes;  // a protocol error (else the frame is answered or dropped, channel open)
};

void PrintTo(const RefusedFrame& frame, std::ostream* out) {
  *out << frame.name;
}

class RefusedFdsTest : public ::testing::TestWithParam<RefusedFrame> {};

TEST_P(RefusedFdsTest, NoFdLeaks) {
  TestLoop loop;  // its own fds exist before the count
  int before = countOpenFds();
  {
    Harness h;
    setUp(loop, h);
    int pipe_fds[2];
    ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    UniqueFd third(::dup(pipe_fds[0]));
    h.peer->send(GetParam().bytes, {read_end.get(), write_end.get(), third.get()});
    h.peer->send(encoded(makeRequest(7, "hello", {})));
    // Read until the hello (id 7) is answered or the connection-level error (id 0).
    std::optional<Message> reply;
    do {
      reply = h.peer->read(loop);
      ASSERT_TRUE(reply.has_value());
    } while (reply->id != 7 && reply->id != 0);
    if (GetParam().closes) {
      EXPECT_EQ(reply->id, 0u);
      EXPECT_TRUE(h.peer->seesEndOfStream(loop));
      EXPECT_FALSE(h.endpoint->isOpen());
    } else {
      EXPECT_EQ(reply->id, 7u);
      EXPECT_TRUE(h.endpoint->isOpen());
    }
  }
  loop.spin();
  EXPECT_EQ(countOpenFds(), before);
}

INSTANTIATE_TEST_SUITE_P(
    EndpointProtocolErrorsTest, RefusedFdsTest,
    ::testing::Values(
        RefusedFrame{"BadJson", rawFrame("{bad json"), true},
        RefusedFrame{"UnknownVersion", rawFrame(R"({"v":9,"id":1,"op":"hello","fds":3})"), true},
        RefusedFrame{"UnknownOp", encoded(makeRequest(1, "no.such.op", {}, 3)), false},
        RefusedFrame{"WrongDirection", encoded(makeRequest(1, "config", {}, 3)), false},
        RefusedFrame{"NoHandler", encoded(makeRequest(1, "ready", {}, 3)), false},
        RefusedFrame{"FdsNoFrameNames", encoded(makeRequest(1, "hello", {}, 0)), true},
        RefusedFrame{"FewerFdsThanNamed", encoded(makeRequest(1, "hello", {}, 5)), true},
        RefusedFrame{"NotificationNoHandler", encoded(makeRequest(0, "metrics", {}, 3)), false},
        RefusedFrame{"ZeroLength", lengthPrefix(0), true},
        RefusedFrame{"OversizeLength", lengthPrefix(kMaxFramePayload + 1), true}),
    [](const ::testing::TestParamInfo<RefusedFrame>& param) { return param.param.name; });

}  // namespace
}  // namespace scalws::ipc
