#include "common/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace scalws::common {
namespace {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.toString(), "ok");
  EXPECT_TRUE(okStatus().ok());
  EXPECT_TRUE(Status::okStatus().ok());
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status s = invalidArgument("bad frame");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad frame");
  EXPECT_EQ(s.toString(), "bad frame");
  EXPECT_EQ(notFound("x").code(), StatusCode::kNotFound);
  EXPECT_EQ(internalError("x").code(), StatusCode::kInternal);
}

TEST(Status, CodeNames) {
  EXPECT_EQ(statusCodeName(StatusCode::kOk), "ok");
  EXPECT_EQ(statusCodeName(StatusCode::kInvalidArgument), "invalid argument");
  EXPECT_EQ(statusCodeName(StatusCode::kNotFound), "not found");
  EXPECT_EQ(statusCodeName(StatusCode::kAlreadyExists), "already exists");
  EXPECT_EQ(statusCodeName(StatusCode::kPermissionDenied), "permission denied");
  EXPECT_EQ(statusCodeName(StatusCode::kResourceExhausted), "resource exhausted");
  EXPECT_EQ(statusCodeName(StatusCode::kFailedPrecondition), "failed precondition");
  EXPECT_EQ(statusCodeName(StatusCode::kUnavailable), "unavailable");
  EXPECT_EQ(statusCodeName(StatusCode::kTimeout), "timeout");
  EXPECT_EQ(statusCodeName(StatusCode::kIoError), "i/o error");
  EXPECT_EQ(statusCodeName(StatusCode::kInternal), "internal error");
}

TEST(Status, ErrnoStatusMapsCodesAndNamesTheError) {
  Status s = errnoStatus(ENOENT, "open /x");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), std::string("open /x: ") + std::strerror(ENOENT));
  EXPECT_EQ(errnoStatus(ENOTDIR, "a").code(), StatusCode::kNotFound);
  EXPECT_EQ(errnoStatus(EACCES, "a").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(errnoStatus(EPERM, "a").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(errnoStatus(EEXIST, "a").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(errnoStatus(EADDRINUSE, "a").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(errnoStatus(EMFILE, "a").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(errnoStatus(ENOMEM, "a").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(errnoStatus(ECONNREFUSED, "a").code(), StatusCode::kUnavailable);
  EXPECT_EQ(errnoStatus(ECONNRESET, "a").code(), StatusCode::kUnavailable);
  EXPECT_EQ(errnoStatus(ETIMEDOUT, "a").code(), StatusCode::kTimeout);
  EXPECT_EQ(errnoStatus(EINVAL, "a").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(errnoStatus(EIO, "a").code(), StatusCode::kIoError);
}

Result<int> half(int n) {
  if (n % 2 != 0) return invalidArgument(std::to_string(n) + " is odd");
  return n / 2;
}

Status chain(int n, int* out) {
  SCALWS_RETURN_IF_ERROR(half(n).status());
  *out = *half(n);
  return okStatus();
}

TEST(Result, HoldsAValueOrAnError) {
  Result<int> good = half(8);
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(static_cast<bool>(good));
  EXPECT_EQ(*good, 4);
  EXPECT_EQ(good.value(), 4);
  EXPECT_TRUE(good.status().ok());

  Result<int> bad = half(3);
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "3 is odd");
}

TEST(Result, MovesItsValueOut) {
  Result<std::string> r = std::string("payload");
  EXPECT_EQ(r->size(), 7u);
  std::string taken = std::move(r).value();
  EXPECT_EQ(taken, "payload");
}

TEST(Result, ReturnIfErrorPropagates) {
  int out = 0;
  EXPECT_TRUE(chain(10, &out).ok());
  EXPECT_EQ(out, 5);
  out = -1;
  Status s = chain(7, &out);
  EXPECT_EQ(s.message(), "7 is odd");
  EXPECT_EQ(out, -1);
}

}  // namespace
}  // namespace scalws::common
