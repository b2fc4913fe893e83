// One request whose Basic credentials are being hashed on libuv's thread pool
// (BasicAuth::admit). It is the request's InFlight, so a client that goes away meanwhile
// only marks it aborted (the hash finishes, the result is dropped); and its BodySink, so
// body bytes the protocol delivers while it waits (the body is paused, but what was
// already read still arrives) are kept and handed to the route's handler afterwards.
//
// Lifetime: made by start(), deleted on the loop in the work's completion callback,
// whatever happened to the request. The loop's AuthLoopState counts it while it exists.
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "common/auth/htpasswd.h"
#include "common/auth/verified_credentials.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/loop/loop_local.h"

namespace scalws::worker {

class BasicAuth;
class ConfigSnapshot;
class HttpStream;
class WorkerLoop;

// What a loop keeps for every auth route: the credentials that passed lately, and the
// checks in flight.
class AuthLoopState final : public LoopLocal {
 public:
  explicit AuthLoopState(WorkerLoop& loop);
  common::auth::VerifiedCredentials verified;
  uint32_t pending = 0;
};

class AuthCheck final : public InFlight, public BodySink {
 public:
  static void start(Request& request, HttpStream& stream, const BasicAuth& auth,
                    const ConfigSnapshot& snapshot, int route, std::string user,
                    std::string password);

  void abort() noexcept override { aborted_ = true; }
  void onBodyData(std::string_view data) noexcept override { body_.append(data); }
  void onBodyEnd() noexcept override { body_ended_ = true; }

 private:
  AuthCheck() = default;
  ~AuthCheck();
  static void work(uv_work_t* work);
  static void done(uv_work_t* work, int status);
  void finish(bool passed);

  uv_work_t work_{};
  std::shared_ptr<const common::auth::Htpasswd> users_;
  std::string user_;
  std::string password_;
  bool passed_ = false;  // written by the thread pool, read on the loop after done
  bool aborted_ = false;

  Request* request_ = nullptr;
  HttpStream* stream_ = nullptr;
  const BasicAuth* auth_ = nullptr;
  const ConfigSnapshot* snapshot_ = nullptr;
  int route_ = -1;
  AuthLoopState* state_ = nullptr;
  std::string body_;
  bool body_ended_ = false;
};

}  // namespace scalws::worker
