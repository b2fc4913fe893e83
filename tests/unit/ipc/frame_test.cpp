#include "ipc/frame.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ipc_test_util.h"

namespace scalws::ipc {
namespace {

using common::StatusCode;
using testing::encoded;
using testing::lengthPrefix;
using testing::rawFrame;

// Every message the decoder gives for `bytes` fed in the given chunk sizes (cycled).
std::vector<Message> decodeAll(std::string_view bytes, const std::vector<size_t>& chunks) {
  FrameDecoder decoder;
  std::vector<Message> out;
  size_t pos = 0;
  for (size_t i = 0; pos < bytes.size(); ++i) {
    size_t n = std::min(chunks[i % chunks.size()], bytes.size() - pos);
    decoder.feed(bytes.substr(pos, n));
    pos += n;
    for (;;) {
      auto next = decoder.next();
      EXPECT_TRUE(next.ok()) << next.status().message();
      if (!next.ok() || !next->has_value()) break;
      out.push_back(std::move(**next));
    }
  }
  EXPECT_TRUE(decoder.idle());
  return out;
}

// The first error the decoder reports for `bytes` fed whole.
common::Status firstError(std::string_view bytes) {
  FrameDecoder decoder;
  decoder.feed(bytes);
  for (;;) {
    auto next = decoder.next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return common::okStatus();
  }
}

std::string sampleStream() {
  std::string stream;
  stream += encoded(makeRequest(1, "config", {{"toml", "[[listen]]\naddress = \"x\""}}));
  stream += encoded(makeRequest(0, "metrics", {{"requests", 12345}, {"unicode", "h\u00e9"}}));
  stream += encoded(makeReply(1, {{"ok", true}}));
  stream += encoded(makeErrorReply(2, errc::kNotFound, "no instance 'web'"));
  stream += encoded(makeRequest(3, "listeners", Json::object(), 2));
  return stream;
}

TEST(FrameTest, EncodeWritesLittleEndianLengthThenJson) {
  std::string out = "prefix";
  ASSERT_TRUE(encodeFrame(makeRequest(7, "hello", {{"pid", 42}}), out).ok());
  ASSERT_GT(out.size(), 10u);
  EXPECT_EQ(out.substr(0, 6), "prefix");  // appends, never overwrites
  std::string_view frame = std::string_view(out).substr(6);
  uint32_t length =
      static_cast<unsigned char>(frame[0]) | static_cast<unsigned char>(frame[1]) << 8 |
      static_cast<unsigned char>(frame[2]) << 16 | static_cast<unsigned char>(frame[3]) << 24;
  EXPECT_EQ(length, frame.size() - 4);
  Json json = Json::parse(frame.substr(4));
  EXPECT_EQ(json, Json::parse(R"({"v":1,"id":7,"op":"hello","args":{"pid":42}})"));
}

TEST(FrameTest, RoundTripKeepsEveryField) {
  auto messages = decodeAll(sampleStream(), {1 << 20});
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[0].op, "config");
  EXPECT_EQ(messages[0].id, 1u);
  EXPECT_EQ(messages[0].args["toml"], "[[listen]]\naddress = \"x\"");
  EXPECT_TRUE(messages[1].isNotification());
  EXPECT_EQ(messages[1].args["unicode"], "h\u00e9");
  EXPECT_EQ(messages[2].kind, MessageKind::kReply);
  EXPECT_EQ(messages[2].result, Json({{"ok", true}}));
  EXPECT_TRUE(messages[3].isError());
  EXPECT_EQ(messages[3].error_code, "not_found");
  EXPECT_EQ(messages[3].error_message, "no instance 'web'");
  EXPECT_EQ(messages[4].fd_count, 2u);
}

TEST(FrameTest, ByteByByteAndRandomChunksGiveTheSameFrames) {
  std::string stream = sampleStream();
  auto whole = decodeAll(stream, {stream.size()});
  auto bytewise = decodeAll(stream, {1});
  ASSERT_EQ(whole.size(), 5u);
  std::mt19937 rng(20240611);
  for (int round = 0; round < 50; ++round) {
    std::vector<size_t> chunks;
    for (int i = 0; i < 16; ++i) chunks.push_back(1 + rng() % 64);
    auto random = decodeAll(stream, chunks);
    ASSERT_EQ(random.size(), whole.size()) << "round " << round;
    for (size_t i = 0; i < whole.size(); ++i) {
      EXPECT_EQ(encoded(random[i]), encoded(whole[i])) << "round " << round << " frame " << i;
    }
  }
  ASSERT_EQ(bytewise.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(encoded(bytewise[i]), encoded(whole[i]));
}

TEST(FrameTest, ShortInputWaitsForMoreBytes) {
  std::string frame = encoded(makeRequest(1, "hello", {}));
  for (size_t cut : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, frame.size() - 1}) {
    FrameDecoder decoder;
    decoder.feed(std::string_view(frame).substr(0, cut));
    auto next = decoder.next();
    ASSERT_TRUE(next.ok()) << cut;
    EXPECT_FALSE(next->has_value()) << cut;
    EXPECT_EQ(decoder.idle(), cut == 0);
    decoder.feed(std::string_view(frame).substr(cut));
    next = decoder.next();
    ASSERT_TRUE(next.ok() && next->has_value()) << cut;
    EXPECT_EQ((*next)->op, "hello");
  }
}

TEST(FrameTest, ZeroLengthBreaksTheStream) {
  FrameDecoder decoder;
  decoder.feed(lengthPrefix(0) + encoded(makeRequest(1, "hello", {})));
  auto next = decoder.next();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wireCodeForParseError(next.status()), errc::kBadFrame);
  EXPECT_TRUE(decoder.broken());
  // Sticky: the valid frame after it is never trusted.
  EXPECT_FALSE(decoder.next().ok());
  decoder.feed(encoded(makeRequest(2, "hello", {})));
  EXPECT_FALSE(decoder.next().ok());
}

TEST(FrameTest, OversizeLengthIsRefusedBeforeBuffering) {
  FrameDecoder decoder;
  decoder.feed(lengthPrefix(kMaxFramePayload + 1));
  auto next = decoder.next();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(wireCodeForParseError(next.status()), errc::kBadFrame);
  EXPECT_EQ(decoder.bufferedBytes(), 0u);
  EXPECT_FALSE(firstError(lengthPrefix(0xffffffffu)).ok());
}

TEST(FrameTest, ExactlyOneMebibyteIsAccepted) {
  std::string payload = R"({"v":1,"id":1,"op":"config","args":{"pad":")";
  payload += std::string(kMaxFramePayload - payload.size() - 3, 'x');
  payload += R"("}})";
  ASSERT_EQ(payload.size(), kMaxFramePayload);
  FrameDecoder decoder;
  decoder.feed(rawFrame(payload));
  auto next = decoder.next();
  ASSERT_TRUE(next.ok()) << next.status().message();
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ((*next)->op, "config");
}

TEST(FrameTest, EncoderRefusesOversizeMessage) {
  std::string out = "keep";
  auto status =
      encodeFrame(makeRequest(1, "config", {{"pad", std::string(kMaxFramePayload, 'x')}}), out);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(out, "keep");
}

TEST(FrameTest, EncoderReplacesInvalidUtf8InsteadOfThrowing) {
  std::string out;
  ASSERT_TRUE(encodeFrame(makeErrorReply(1, errc::kFailed, "bad \xff\xfe bytes"), out).ok());
  auto message = parseMessage(std::string_view(out).substr(4));
  ASSERT_TRUE(message.ok()) << message.status().message();
  EXPECT_NE(message->error_message.find("bad "), std::string::npos);
}

TEST(FrameTest, BadPayloadsAreErrorsWithTheirWireCode) {
  struct Case {
    const char* payload;
    std::string_view code;
  };
  const Case cases[] = {
      {"not json", errc::kBadFrame},
      {"{\"v\":1,\"id\":1,\"op\":\"hello\"", errc::kBadFrame},  // truncated JSON
      {"[1,2,3]", errc::kBadFrame},                             // not an object
      {"\"just a string\"", errc::kBadFrame},
      {"{}", errc::kBadFrame},
      {R"({"id":1,"op":"hello"})", errc::kBadFrame},          // no v
      {R"({"v":"1","id":1,"op":"hello"})", errc::kBadFrame},  // v a string
      {R"({"v":1.0,"id":1,"op":"hello"})", errc::kBadFrame},  // v a float
      {R"({"v":2,"id":1,"op":"hello"})", errc::kUnsupportedVersion},
      {R"({"v":0,"id":1,"op":"hello"})", errc::kUnsupportedVersion},
      {R"({"v":1,"op":"hello"})", errc::kBadFrame},  // no id
      {R"({"v":1,"id":-1,"op":"hello"})", errc::kBadFrame},
      {R"({"v":1,"id":"1","op":"hello"})", errc::kBadFrame},
      {R"({"v":1,"id":1.5,"op":"hello"})", errc::kBadFrame},
      {R"({"v":1,"id":1})", errc::kBadFrame},  // neither op nor result
      {R"({"v":1,"id":1,"op":7})", errc::kBadFrame},
      {R"({"v":1,"id":1,"op":""})", errc::kBadFrame},
      {R"({"v":1,"id":1,"op":"hello","args":[]})", errc::kBadFrame},
      {R"({"v":1,"id":1,"op":"hello","fds":-1})", errc::kBadFrame},
      {R"({"v":1,"id":1,"op":"hello","fds":65})", errc::kBadFrame},
      {R"({"v":1,"id":1,"op":"hello","fds":"2"})", errc::kBadFrame},
      {R"({"v":1,"id":1,"op":"hello","result":{}})", errc::kBadFrame},
      {R"({"v":1,"id":1,"result":{},"error":{"code":"x","message":"y"}})", errc::kBadFrame},
      {R"({"v":1,"id":0,"result":{}})", errc::kBadFrame},  // a reply to nothing
      {R"({"v":1,"id":1,"error":"boom"})", errc::kBadFrame},
      {R"({"v":1,"id":1,"error":{"message":"y"}})", errc::kBadFrame},
      {R"({"v":1,"id":1,"error":{"code":"","message":"y"}})", errc::kBadFrame},
      {R"({"v":1,"id":1,"error":{"code":"x","message":3}})", errc::kBadFrame},
      {R"({"v":1,"id":1,"result":{},"fds":1})", errc::kBadFrame},
      {"{\"v\":1,\"id\":1,\"op\":\"h\xff\"}", errc::kBadFrame},  // invalid UTF-8
  };
  for (const Case& c : cases) {
    common::Status status = firstError(rawFrame(c.payload));
    ASSERT_FALSE(status.ok()) << c.payload;
    EXPECT_EQ(wireCodeForParseError(status), c.code) << c.payload << ": " << status.message();
  }
}

TEST(FrameTest, OverLongOpNameAndDeepNestingAreRefused) {
  std::string long_op = R"({"v":1,"id":1,"op":")" + std::string(kMaxOpNameLength + 1, 'a') + "\"}";
  EXPECT_FALSE(firstError(rawFrame(long_op)).ok());
  std::string deep = R"({"v":1,"id":1,"op":"hello","args":{"a":)" + std::string(100000, '[') +
                     std::string(100000, ']') + "}}";
  common::Status status = firstError(rawFrame(deep));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("nested"), std::string::npos) << status.message();
  // Brackets inside strings do not count as nesting.
  std::string in_string =
      R"({"v":1,"id":1,"op":"hello","args":{"s":")" + std::string(1000, '[') + "\\\"\"}}";
  EXPECT_TRUE(firstError(rawFrame(in_string)).ok());
}

TEST(FrameTest, BadPayloadConsumesOnlyItsFrame) {
  FrameDecoder decoder;
  decoder.feed(rawFrame("garbage") + encoded(makeRequest(5, "ready", {})));
  EXPECT_FALSE(decoder.next().ok());
  EXPECT_FALSE(decoder.broken());
  auto next = decoder.next();
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ((*next)->id, 5u);
}

}  // namespace
}  // namespace scalws::ipc
