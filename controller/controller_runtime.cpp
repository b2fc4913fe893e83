// Controller: the InstanceRuntime the control handlers drive, each call handed to the
// instance's supervisor (or failed, on the loop, when there is none).
#include "controller/controller.h"
#include "controller/deferred_call.h"

namespace scalws::controller {

using common::Result;
using common::Status;

void Controller::instanceStored(const state::InstanceRecord& record) {
  InstanceSupervisor* sup = find(record.name);
  if (sup == nullptr) {
    supervisorFor(record);
  } else {
    sup->setRecord(record);
  }
  // A stopped instance's names are claimed from its stored config: the fronts hear.
  if (shared_) shared_->refresh();
}

namespace {

Status gone(const std::string& name) {
  return common::notFound("no instance named '" + name + "'");
}

}  // namespace

void Controller::start(const std::string& name, Commit commit, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  if (shutting_down_) {
    return deferCall(&loop_, [done] {
      done(Status(StatusCode::kUnavailable, "the controller is shutting down"));
    });
  }
  sup->start(std::move(commit), [this, done](const Status& s) {
    notifyStatus();
    done(s);
  });
}

void Controller::stop(const std::string& name, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->stop([this, done](const Status& s) {
    notifyStatus();
    done(s);
  });
}

void Controller::restart(const std::string& name, Commit commit, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->restart(std::move(commit), done);
}

void Controller::reload(const std::string& name, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->reload(std::move(done));
}

void Controller::remove(const std::string& name, Commit commit, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->stop([this, name, commit, done](const Status& stopped) {
    if (!stopped.ok()) return done(stopped);
    Status removed = commit();
    if (!removed.ok()) return done(removed);
    auto it = supervisors_.find(name);
    if (it != supervisors_.end()) {
      // Freed on the next turn: this callback runs inside the supervisor.
      removed_[name] = std::move(it->second);
      supervisors_.erase(it);
      deferCall(&loop_, [this, name] { removed_.erase(name); });
    }
    if (metrics_) metrics_->forget(name);
    if (shared_) shared_->refresh();  // its names are nobody's now
    LOG_INFO("instance %s removed", name.c_str());
    done(common::okStatus());
  });
}

std::string Controller::runtimeState(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup == nullptr ? "stopped" : std::string(sup->stateName());
}

size_t Controller::processCount(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup == nullptr ? 0 : sup->liveProcesses();
}

ipc::Json Controller::processes(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup == nullptr ? ipc::Json::array() : sup->processes();
}

std::optional<common::config::SiteConfig> Controller::runningSite(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return std::nullopt;
  return sup->runningSite();
}

std::optional<std::vector<ipc::PhpPoolGrant>> Controller::runningPools(
    const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr || !sup->runningSite()) return std::nullopt;
  return sup->runningPools();
}

std::optional<std::vector<ipc::AppGrant>> Controller::runningApps(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr || !sup->runningSite()) return std::nullopt;
  return sup->runningApps();
}

void Controller::purgeCache(const std::string& name, const ipc::CachePurge& purge, PurgeDone done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->purgeCache(purge, std::move(done));
}

void Controller::reopenLogs(const std::string& name, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->reopenLogs(std::move(done));
}

std::vector<ipc::CacheFigures> Controller::cacheFigures(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return {};
  return sup->cacheFigures();
}

bool Controller::reloadPending(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup != nullptr && sup->runningConfigDiffers();
}

}  // namespace scalws::controller
