#include "ipc/message.h"

#include <gtest/gtest.h>

namespace scalws::ipc {
namespace {

using common::StatusCode;

TEST(MessageTest, RequestJsonHasTheDesignShape) {
  Json json = toJson(makeRequest(9, "instance.add", {{"name", "web"}}));
  EXPECT_EQ(json, Json::parse(R"({"v":1,"id":9,"op":"instance.add","args":{"name":"web"}})"));
  Json with_fds = toJson(makeRequest(3, "listeners", Json::object(), 2));
  EXPECT_EQ(with_fds["fds"], 2);
}

TEST(MessageTest, RepliesCarryResultOrError) {
  EXPECT_EQ(toJson(makeReply(4, {{"n", 1}})), Json::parse(R"({"v":1,"id":4,"result":{"n":1}})"));
  EXPECT_EQ(toJson(makeErrorReply(4, errc::kConflict, "exists")),
            Json::parse(R"({"v":1,"id":4,"error":{"code":"conflict","message":"exists"}})"));
  // A null result is still a result, not an error.
  auto parsed = messageFromJson(toJson(makeReply(5, nullptr)));
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->isError());
  EXPECT_TRUE(parsed->result.is_null());
}

TEST(MessageTest, MissingArgsMeansEmptyObjectAndExtraFieldsAreIgnored) {
  auto parsed = parseMessage(R"({"v":1,"id":2,"op":"status","future":"field"})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->op, "status");
  EXPECT_EQ(parsed->args, Json::object());
  EXPECT_EQ(parsed->fd_count, 0u);
}

TEST(MessageTest, ConnectionLevelErrorReplyHasIdZero) {
  auto parsed = parseMessage(R"({"v":1,"id":0,"error":{"code":"bad_frame","message":"x"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_TRUE(parsed->isError());
  EXPECT_EQ(parsed->id, 0u);
}

TEST(MessageTest, UnsupportedVersionIsFailedPrecondition) {
  auto parsed = parseMessage(R"({"v":7,"id":1,"op":"status"})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(parsed.status().message().find("7"), std::string::npos);
}

TEST(MessageTest, WireCodesAndStatusCodesMapBothWays) {
  for (std::string_view code : {errc::kInvalidArgument, errc::kNotFound, errc::kConflict,
                                errc::kPermissionDenied, errc::kInternal, errc::kFailed}) {
    EXPECT_EQ(wireCodeForStatus(statusCodeForWire(code)), code) << code;
  }
  EXPECT_EQ(statusCodeForWire(errc::kBadFrame), StatusCode::kInvalidArgument);
  EXPECT_EQ(statusCodeForWire(errc::kUnknownOp), StatusCode::kNotFound);
  EXPECT_EQ(statusCodeForWire("something_new"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(wireCodeForStatus(StatusCode::kTimeout), errc::kFailed);
}

TEST(MessageTest, FieldAccessorsNeverThrow) {
  Json args = Json::parse(R"({"name":"web","cpus":2,"shared":true,"neg":-1})");
  EXPECT_EQ(*stringField(args, "name"), "web");
  EXPECT_EQ(*uintField(args, "cpus"), 2u);
  EXPECT_TRUE(*boolField(args, "shared"));
  EXPECT_FALSE(stringField(args, "cpus").ok());
  EXPECT_FALSE(uintField(args, "neg").ok());
  EXPECT_FALSE(uintField(args, "name").ok());
  EXPECT_FALSE(boolField(args, "missing").ok());
  EXPECT_FALSE(stringField(Json::array(), "name").ok());
  EXPECT_FALSE(stringField(Json(), "name").ok());
  EXPECT_NE(stringField(args, "cpus").status().message().find("cpus"), std::string::npos);
}

}  // namespace
}  // namespace scalws::ipc
