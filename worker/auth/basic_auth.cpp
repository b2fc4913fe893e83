#include "worker/auth/basic_auth.h"

#include <openssl/crypto.h>
#include <uv.h>

#include <atomic>

#include "worker/auth/auth_check.h"
#include "worker/http/http_stream.h"
#include "worker/http/request_dispatcher.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {
namespace {

std::atomic<uint64_t> next_scope{1};

}  // namespace

common::Result<std::unique_ptr<BasicAuth>> BasicAuth::load(
    const common::config::AuthConfig& config) {
  common::Result<common::auth::Htpasswd> users = common::auth::Htpasswd::load(config.users);
  if (!users.ok()) {
    return common::invalidArgument(config.where.toString() +
                                   ": route.auth.users: " + users.status().message());
  }
  return std::unique_ptr<BasicAuth>(new BasicAuth(
      std::make_shared<const common::auth::Htpasswd>(std::move(users).value()), config.realm));
}

BasicAuth::BasicAuth(std::shared_ptr<const common::auth::Htpasswd> users, const std::string& realm)
    : users_(std::move(users)),
      // RFC 7617 §2.1: the charset parameter says the server takes UTF-8 credentials.
      challenge_("Basic realm=\"" + realm + "\", charset=\"UTF-8\""),
      scope_(next_scope.fetch_add(1)) {}

void BasicAuth::deny(Request& request, HttpStream& stream) const {
  const HeaderField challenge[] = {{"WWW-Authenticate", challenge_}};
  // The body is not read for a request that is refused anyway: close after the answer.
  RequestDispatcher::answerError(stream, 401, request.has_body, challenge);
}

BasicAuth::Outcome BasicAuth::admit(Request& r, HttpStream& stream, const ConfigSnapshot& snapshot,
                                    int route) const {
  std::string_view value = r.header("authorization");
  auto credentials = value.empty() ? std::nullopt : common::auth::basicCredentials(value);
  if (!credentials) {
    deny(r, stream);
    return Outcome::kAnswered;
  }
  AuthLoopState& state = r.loop->local<AuthLoopState>();
  if (state.verified.contains(scope_, value, static_cast<int64_t>(uv_now(r.loop->uv())))) {
    r.remote_user = r.arena->copy(credentials->first);
    OPENSSL_cleanse(credentials->second.data(), credentials->second.size());
    return Outcome::kAllowed;
  }
  if (state.pending >= kMaxPendingPerLoop) {
    OPENSSL_cleanse(credentials->second.data(), credentials->second.size());
    const HeaderField retry[] = {{"Retry-After", "1"}};
    RequestDispatcher::answerError(stream, 503, r.has_body, retry);
    return Outcome::kAnswered;
  }
  AuthCheck::start(r, stream, *this, snapshot, route, std::move(credentials->first),
                   std::move(credentials->second));
  return Outcome::kPending;
}

}  // namespace scalws::worker
