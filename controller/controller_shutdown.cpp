// Controller: signals and shutdown (systemd_integration.h says which signal does what).
#include <csignal>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/deferred_call.h"

namespace scalws::controller {

using common::Result;
using common::Status;

namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR2};

}  // namespace

void Controller::installSignals() {
  std::signal(SIGPIPE, SIG_IGN);
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    uv_signal_init(&loop_, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(&signals_[i], &Controller::onSignal, kSignals[i]);
  }
}

void Controller::onSignal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<Controller*>(handle->data);
  if (signum == SIGHUP) {
    LOG_INFO("SIGHUP ignored: instances are reloaded with `scalwsctl instance reload`");
    return;
  }
  if (self->shutting_down_) {
    LOG_WARN("signal %d during shutdown: leaving now; the workers finish on their own", signum);
    self->beginShutdown(ShutdownMode::kLeaveInstances);
    return;
  }
  std::optional<std::string> job = signum == SIGTERM ? systemdJobType() : std::nullopt;
  ShutdownMode mode = shutdownModeFor(signum, job);
  LOG_INFO("signal %d%s: shutting down, %s", signum,
           job ? (" (systemd job " + *job + ")").c_str() : "",
           std::string(shutdownModeName(mode)).c_str());
  self->beginShutdown(mode);
}

void Controller::beginShutdown(ShutdownMode mode) {
  bool again = shutting_down_;
  shutting_down_ = true;
  if (!again) {
    notifySystemd("STOPPING=1");
    if (server_) server_->close();
  }
  if (mode == ShutdownMode::kLeaveInstances) {
    for (auto& [name, sup] : supervisors_) sup->leave();
    if (shared_) shared_->leaveAll();
    if (pools_) pools_->leave();
    if (apps_) apps_->leave();
    deferCall(&loop_, [this] { finishShutdown(); });
    return;
  }
  if (again) return;
  // The instances first, so their requests in flight finish on PHP; then the fronts of
  // shared addresses (every instance there is gone), then the pools.
  auto stop_pools = [this] {
    if (shared_) {
      auto stopped = std::make_shared<bool>(false);
      shared_->stopAll([this, stopped] {
        if (*stopped) return;
        *stopped = true;
        stopPools();
      });
      return;
    }
    stopPools();
  };
  stop_pending_ = supervisors_.size();
  if (stop_pending_ == 0) return deferCall(&loop_, stop_pools);
  for (auto& [name, sup] : supervisors_) {
    sup->stop([this, stop_pools](const Status&) {
      if (--stop_pending_ == 0) deferCall(&loop_, stop_pools);
    });
  }
}

void Controller::stopPools() {
  if (!pools_) return finishShutdown();
  pools_->stopAll([this](const Status&) {
    if (!apps_) return deferCall(&loop_, [this] { finishShutdown(); });
    apps_->stopAll([this](const Status&) { deferCall(&loop_, [this] { finishShutdown(); }); });
  });
}

void Controller::finishShutdown() {
  if (signals_[0].data == nullptr) return;  // done already
  Result<state::EventRecord> event = store_.appendEvent(
      std::nullopt, state::kEventControllerStopped, "pid " + std::to_string(::getpid()));
  (void)event;
  for (uv_signal_t& s : signals_) {
    s.data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&s), nullptr);
  }
  if (server_) server_->close();
  if (metrics_http_) metrics_http_->close();
  if (dashboard_) dashboard_->close();
  if (metrics_timer_ != nullptr) {
    ipc::closeAndDelete(metrics_timer_);
  }
  // Whatever still runs was left on purpose (leave) or is being killed: let go of it.
  for (auto& [name, sup] : supervisors_) sup->leave();
  if (shared_) shared_->leaveAll();
  if (pools_) pools_->leave();
  if (apps_) apps_->leave();
  supervisors_.clear();
  removed_.clear();
  shared_.reset();  // after the supervisors, which point at it
  LOG_INFO("stopped");
}

}  // namespace scalws::controller
