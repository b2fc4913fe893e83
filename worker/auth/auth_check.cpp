#include "worker/auth/auth_check.h"

#include <openssl/crypto.h>

#include "common/log.h"
#include "worker/auth/basic_auth.h"
#include "worker/http/http_stream.h"
#include "worker/http/request_dispatcher.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {

AuthLoopState::AuthLoopState(WorkerLoop& loop)
    : verified(BasicAuth::kRemembered, BasicAuth::kRememberMs) {
  (void)loop;
}

AuthCheck::~AuthCheck() {
  OPENSSL_cleanse(password_.data(), password_.size());
}

void AuthCheck::start(Request& request, HttpStream& stream, const BasicAuth& auth,
                      const ConfigSnapshot& snapshot, int route, std::string user,
                      std::string password) {
  auto* c = new AuthCheck();
  c->users_ = auth.users();
  c->user_ = std::move(user);
  c->password_ = std::move(password);
  c->request_ = &request;
  c->stream_ = &stream;
  c->auth_ = &auth;
  c->snapshot_ = &snapshot;
  c->route_ = route;
  c->state_ = &request.loop->local<AuthLoopState>();
  c->work_.data = c;
  stream.setInFlight(c);
  if (request.has_body) {
    request.setBodySink(c);
    stream.setBodyReadPaused(true);  // not a byte more until the route may have it
  }
  int rc = uv_queue_work(request.loop->uv(), &c->work_, &AuthCheck::work, &AuthCheck::done);
  if (rc != 0) {
    LOG_ERROR("request %llx: cannot queue the password check: %s",
              static_cast<unsigned long long>(request.id), uv_strerror(rc));
    stream.setInFlight(nullptr);
    request.setBodySink(nullptr);
    delete c;
    const HeaderField retry[] = {{"Retry-After", "1"}};
    RequestDispatcher::answerError(stream, 503, request.has_body, retry);
    return;
  }
  ++c->state_->pending;
}

void AuthCheck::work(uv_work_t* work) {
  auto* c = static_cast<AuthCheck*>(work->data);
  c->passed_ = c->users_->check(c->user_, c->password_);
}

void AuthCheck::done(uv_work_t* work, int status) {
  auto* c = static_cast<AuthCheck*>(work->data);
  --c->state_->pending;
  if (!c->aborted_) c->finish(status == 0 && c->passed_);
  delete c;
}

void AuthCheck::finish(bool passed) {
  HttpStream& stream = *stream_;
  Request& r = *request_;
  stream.setInFlight(nullptr);
  if (r.bodySink() == this) r.setBodySink(nullptr);
  if (!passed) {
    auth_->deny(r, stream);
    return;
  }
  state_->verified.remember(auth_->scope(), r.header("authorization"),
                            static_cast<int64_t>(uv_now(r.loop->uv())));
  r.remote_user = r.arena->copy(user_);
  RequestDispatcher::resume(stream, *snapshot_, route_, body_, body_ended_);
}

}  // namespace scalws::worker
