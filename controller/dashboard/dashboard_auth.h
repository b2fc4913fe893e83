// DashboardAuth: HTTP Basic authentication of the dashboard against an Htpasswd file
// (RFC 7617). Without credentials, or with ones that are not Basic, a request is denied at
// once: 401 with `WWW-Authenticate: Basic realm="scalws"`. Otherwise the password is
// checked on libuv's thread pool (http_server.h), never on the loop.
//
// A page refreshes every few seconds, each refresh a few requests: hashing each would cost
// a bcrypt per request. So an Authorization value that passed is remembered for kRememberMs
// (as its SHA-256, never the password), at most kRemembered of them (the oldest goes).
// Failures are not remembered: each costs its hash, on the thread pool, at most
// HttpServer::kMaxConnections at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/auth/htpasswd.h"
#include "common/auth/verified_credentials.h"
#include "controller/http/http_server.h"

namespace scalws::controller::dashboard {

class DashboardAuth final : public http::Authenticator {
 public:
  using Clock = std::function<int64_t()>;  // monotonic ms
  static constexpr int64_t kRememberMs = 5 * 60'000;
  static constexpr size_t kRemembered = 64;

  // `clock`: empty = the loop's monotonic time source (uv_hrtime).
  explicit DashboardAuth(common::auth::Htpasswd users, Clock clock = nullptr);

  Decision decide(const http::HttpRequest& request) override;
  void verified(const http::HttpRequest& request, bool allowed) override;
  http::HttpAnswer denied() const override;

  size_t rememberedForTest() const { return remembered_.size(); }

 private:
  std::shared_ptr<const common::auth::Htpasswd> users_;
  Clock clock_;
  common::auth::VerifiedCredentials remembered_{kRemembered, kRememberMs};
};

// The headers every dashboard answer carries (the page, the API, 401, 404, 405).
void addSecurityHeaders(http::HttpAnswer& answer);

}  // namespace scalws::controller::dashboard
