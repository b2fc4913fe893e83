// Controller: after start-up, the workers a previous controller left are re-attached, then
// every instance is brought to its desired state (converge), then systemd hears READY=1.
#include "common/log.h"
#include "controller/controller.h"

namespace scalws::controller {

using common::Result;
using common::Status;

void Controller::reattachAll() {
  // The fronts first: the workers' channels are paired with the ends they hold.
  shared_->reattach([this] { reattachWorkers(); });
}

void Controller::reattachWorkers() {
  Result<std::vector<state::WorkerRecord>> rows = store_.listWorkers(std::nullopt);
  if (!rows.ok()) {
    LOG_ERROR("cannot read the workers table: %s", rows.status().message().c_str());
    rows = std::vector<state::WorkerRecord>();
  }
  std::map<std::string, std::vector<state::WorkerRecord>> by_instance;
  for (const state::WorkerRecord& row : *rows) by_instance[row.instance].push_back(row);
  start_pending_ = supervisors_.size();
  if (start_pending_ == 0) {
    reattached_ = true;
    return maybeConverge();
  }
  for (auto& [name, sup] : supervisors_) {
    sup->reattach(by_instance[name], [this](const Status&) {
      if (--start_pending_ != 0) return;
      reattached_ = true;
      maybeConverge();
    });
  }
}

void Controller::maybeConverge() {
  if (reattached_ && pools_started_ && !shutting_down_ && !converging_) {
    converging_ = true;
    converge();
  }
}

void Controller::converge() {
  std::vector<InstanceSupervisor*> todo;
  for (auto& [name, sup] : supervisors_) todo.push_back(sup.get());
  start_pending_ = 0;
  auto one_done = [this](const Status&) {
    if (--start_pending_ == 0 && !shutting_down_) {
      ready_ = true;
      shared_->settle();
      notifySystemd("READY=1");
      notifyStatus();
      LOG_INFO("converged on the state DB");
    }
  };
  for (InstanceSupervisor* sup : todo) {
    Result<state::InstanceRecord> record = store_.getInstance(sup->record().name);
    if (!record.ok()) continue;
    bool want = record->desired == state::DesiredState::kRunning;
    auto st = sup->state();
    if (want && st != InstanceSupervisor::State::kRunning) {
      ++start_pending_;
      sup->start(nullptr, one_done);
    } else if (!want && sup->liveProcesses() > 0) {
      ++start_pending_;
      sup->stop(one_done);
    }
  }
  if (start_pending_ == 0) {
    ++start_pending_;
    one_done(common::okStatus());
  }
}

void Controller::notifyStatus() {
  size_t running = 0;
  for (auto& [name, sup] : supervisors_) {
    if (sup->state() == InstanceSupervisor::State::kRunning) ++running;
  }
  notifySystemd("STATUS=" + std::to_string(supervisors_.size()) + " instance(s), " +
                std::to_string(running) + " running");
}

}  // namespace scalws::controller
