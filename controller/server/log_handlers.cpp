// ControlHandlers: instance.reopen_logs, what logrotate's postrotate runs. The controller
// reopens LOG_DIR/NAME/{access,error}.log (instance_log_files.h) and hands the new access
// log to every worker of the instance; the answer leaves once all of them write to it.
#include <memory>

#include "controller/server/control_handlers.h"

namespace scalws::controller {

using namespace handler_names;

void ControlHandlers::instanceReopenLogs(In& in, Out out) {
  const Json& args = in.args();
  std::vector<std::string> names;
  bool all = args.contains("all") && args["all"].is_boolean() && args["all"].get<bool>();
  if (args.contains("name") == all) {
    return out.fail(common::invalidArgument("instance.reopen_logs takes name or all"));
  }
  if (all) {
    Result<std::vector<state::InstanceRecord>> stored = store_.listInstances();
    if (!stored.ok()) return out.fail(stored.status());
    // Every running one; a stopped instance's files are opened afresh when it starts.
    for (const state::InstanceRecord& r : *stored) {
      if (runtime_.runtimeState(r.name) == "running") names.push_back(r.name);
    }
  } else {
    Result<state::InstanceRecord> record = namedInstance(args);
    if (!record.ok()) return out.fail(record.status());
    names.push_back(record->name);
  }
  struct Tally {
    size_t waiting = 0;
    Json reopened = Json::array();
    std::string errors;
    ipc::Replier replier;
  };
  auto tally = std::make_shared<Tally>(Tally{names.size(), Json::array(), "", std::move(out)});
  if (names.empty()) return tally->replier.ok({{"instances", Json::array()}});
  for (const std::string& name : names) {
    runtime_.reopenLogs(name, [tally, name](const Status& s) {
      if (s.ok()) {
        tally->reopened.push_back(name);
      } else {
        tally->errors += (tally->errors.empty() ? "" : "; ") + s.message();
      }
      if (--tally->waiting != 0) return;
      if (!tally->errors.empty()) {
        return tally->replier.fail(Status(common::StatusCode::kFailedPrecondition, tally->errors));
      }
      tally->replier.ok({{"instances", tally->reopened}});
    });
  }
}

}  // namespace scalws::controller
