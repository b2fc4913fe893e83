// DashboardAuth: what is denied at once, what is checked off the loop, and how a value
// that passed is remembered (for a while, a bounded number of them).
#include "controller/dashboard/dashboard_auth.h"

#include <gtest/gtest.h>

namespace scalws::controller::dashboard {
namespace {

using Kind = http::Authenticator::Decision::Kind;

constexpr const char* kUsers =  // ann:s3cret, bcrypt cost 4
    "ann:$2y$04$t/myUsudaPyGnsKKmI8HOuAevd1YCocjnwvvUuEZ8d.uWAs8McKk6\n";
constexpr const char* kAnn = "Basic YW5uOnMzY3JldA==";       // ann:s3cret
constexpr const char* kAnnWrong = "Basic YW5uOnMzY3JldDI=";  // ann:s3cret2

http::HttpRequest withAuth(std::string value) {
  http::HttpRequest r;
  r.method = "GET";
  r.path = "/";
  r.authorization = std::move(value);
  return r;
}

class DashboardAuthTest : public ::testing::Test {
 protected:
  DashboardAuthTest()
      : auth_(*common::auth::Htpasswd::parse(kUsers, "users"), [this] { return now_; }) {}
  int64_t now_ = 1'000'000;
  DashboardAuth auth_;
};

TEST_F(DashboardAuthTest, NoOrNonBasicCredentialsAreDeniedWithoutAHash) {
  EXPECT_EQ(auth_.decide(withAuth("")).kind, Kind::kDeny);
  EXPECT_EQ(auth_.decide(withAuth("Bearer abc")).kind, Kind::kDeny);
  EXPECT_EQ(auth_.decide(withAuth("Basic !!!!")).kind, Kind::kDeny);
}

TEST_F(DashboardAuthTest, PasswordsAreCheckedThenRememberedForAWhile) {
  http::Authenticator::Decision d = auth_.decide(withAuth(kAnn));
  ASSERT_EQ(d.kind, Kind::kCheck);
  EXPECT_TRUE(d.check());
  auth_.verified(withAuth(kAnn), true);
  EXPECT_EQ(auth_.decide(withAuth(kAnn)).kind, Kind::kAllow);

  d = auth_.decide(withAuth(kAnnWrong));
  ASSERT_EQ(d.kind, Kind::kCheck);
  EXPECT_FALSE(d.check());
  auth_.verified(withAuth(kAnnWrong), false);
  EXPECT_EQ(auth_.decide(withAuth(kAnnWrong)).kind, Kind::kCheck);  // failures: never cached

  now_ += DashboardAuth::kRememberMs;
  EXPECT_EQ(auth_.decide(withAuth(kAnn)).kind, Kind::kCheck);  // expired: checked again
}

TEST_F(DashboardAuthTest, RemembersABoundedNumber) {
  for (size_t i = 0; i < DashboardAuth::kRemembered + 10; ++i) {
    ++now_;
    auth_.verified(withAuth("Basic v" + std::to_string(i)), true);
  }
  EXPECT_EQ(auth_.rememberedForTest(), DashboardAuth::kRemembered);
  EXPECT_EQ(auth_.decide(withAuth("Basic v0")).kind, Kind::kDeny);  // the oldest went
  EXPECT_EQ(auth_.decide(withAuth("Basic v" + std::to_string(DashboardAuth::kRemembered + 9))).kind,
            Kind::kAllow);
}

TEST_F(DashboardAuthTest, DeniedIsA401WithTheBasicChallenge) {
  http::HttpAnswer a = auth_.denied();
  EXPECT_EQ(a.status, 401);
  std::string text = a.serialize();
  EXPECT_NE(text.find("\r\nWWW-Authenticate: Basic realm=\"scalws\"\r\n"), std::string::npos);
  EXPECT_NE(text.find("\r\nContent-Security-Policy: default-src 'none';"), std::string::npos);
  EXPECT_NE(text.find("\r\nX-Content-Type-Options: nosniff\r\n"), std::string::npos);
}

}  // namespace
}  // namespace scalws::controller::dashboard
