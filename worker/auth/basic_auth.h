// A route's `auth`: HTTP Basic (RFC 7617) against an htpasswd file of bcrypt or
// SHA-crypt entries (common/auth/htpasswd.h), read when the config snapshot is built.
//
// admit() decides before the route's handler runs, without stalling the loop:
//   - no Basic credentials: 401 with WWW-Authenticate at once;
//   - credentials that passed on this loop within kRememberMs (a VerifiedCredentials per
//     loop, kRemembered of them): allowed at once;
//   - otherwise the password is hashed on libuv's thread pool (AuthCheck) and the request
//     resumes on the loop when the hash is known: its handler runs, or it gets 401. At
//     most kMaxPendingPerLoop checks wait per loop; beyond, 503 with Retry-After.
// A 401 to a request with a body closes the connection rather than read the body.
//
// Built with the snapshot and shared by its loops; per-loop state is a LoopLocal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/auth/htpasswd.h"
#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/http/request.h"

namespace scalws::worker {

class ConfigSnapshot;
class HttpStream;

class BasicAuth {
 public:
  static constexpr int64_t kRememberMs = 5 * 60'000;
  static constexpr size_t kRemembered = 256;
  static constexpr uint32_t kMaxPendingPerLoop = 64;

  // Reads the users file; a file that cannot be read or parsed is refused, naming the
  // route and the file's own line.
  static common::Result<std::unique_ptr<BasicAuth>> load(const common::config::AuthConfig& config);

  enum class Outcome {
    kAllowed,   // go on with the route at once (request.remote_user is set)
    kAnswered,  // 401 or 503 was sent
    kPending,   // the hash runs; RequestDispatcher::resume() continues the request
  };
  Outcome admit(Request& request, HttpStream& stream, const ConfigSnapshot& snapshot,
                int route) const;

  // Sends the 401 (the challenge names the realm).
  void deny(Request& request, HttpStream& stream) const;

  const std::shared_ptr<const common::auth::Htpasswd>& users() const { return users_; }
  // Tells this file, as loaded once, from every other (a reload loads it anew).
  uint64_t scope() const { return scope_; }

 private:
  BasicAuth(std::shared_ptr<const common::auth::Htpasswd> users, const std::string& realm);

  std::shared_ptr<const common::auth::Htpasswd> users_;
  std::string challenge_;  // the WWW-Authenticate value
  uint64_t scope_;
};

}  // namespace scalws::worker
