#include "controller/dashboard/dashboard_auth.h"

#include <uv.h>

namespace scalws::controller::dashboard {

using common::auth::basicCredentials;
using common::auth::Htpasswd;

void addSecurityHeaders(http::HttpAnswer& a) {
  // Nothing but this origin, and no inline script or style: a tenant's string that got
  // into the page could not run even if the script's escaping failed.
  a.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; "
                         "connect-src 'self'; img-src 'self'; base-uri 'none'; "
                         "form-action 'none'; frame-ancestors 'none'");
  a.headers.emplace_back("X-Content-Type-Options", "nosniff");
  a.headers.emplace_back("Referrer-Policy", "no-referrer");
  a.headers.emplace_back("X-Frame-Options", "DENY");
}

DashboardAuth::DashboardAuth(Htpasswd users, Clock clock)
    : users_(std::make_shared<const Htpasswd>(std::move(users))), clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return static_cast<int64_t>(uv_hrtime() / 1'000'000); };
}

http::Authenticator::Decision DashboardAuth::decide(const http::HttpRequest& request) {
  if (request.authorization.empty()) return {Decision::Kind::kDeny, nullptr};
  if (remembered_.contains(0, request.authorization, clock_())) {
    return {Decision::Kind::kAllow, nullptr};
  }
  std::optional<std::pair<std::string, std::string>> creds =
      basicCredentials(request.authorization);
  if (!creds) return {Decision::Kind::kDeny, nullptr};
  return {Decision::Kind::kCheck, [users = users_, creds = std::move(*creds)] {
            return users->check(creds.first, creds.second);
          }};
}

void DashboardAuth::verified(const http::HttpRequest& request, bool allowed) {
  if (!allowed) return;
  remembered_.remember(0, request.authorization, clock_());
}

http::HttpAnswer DashboardAuth::denied() const {
  http::HttpAnswer a = http::HttpAnswer::error(401, "Unauthorized", "authentication required\n");
  a.headers.emplace_back("WWW-Authenticate", "Basic realm=\"scalws\"");
  a.headers.emplace_back("Cache-Control", "no-store");
  addSecurityHeaders(a);
  return a;
}

}  // namespace scalws::controller::dashboard
