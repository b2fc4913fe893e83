#include "controller/server/app_handlers.h"

#include <fstream>
#include <memory>
#include <sstream>

#include "common/log.h"

namespace scalws::controller {

using namespace handler_names;

namespace {

constexpr uint64_t kMaxLogLines = 1000;

Result<AppSpec> specOf(const state::AppRecord& app) {
  return parseAppSpec(Json::parse(app.spec, nullptr, false));
}

}  // namespace

const ipc::OpHandler<AppHandlers> AppHandlers::kHandlers[] = {
    {ipc::op::kAppList, &AppHandlers::list},       {ipc::op::kAppShow, &AppHandlers::show},
    {ipc::op::kAppAdd, &AppHandlers::add},         {ipc::op::kAppRemove, &AppHandlers::remove},
    {ipc::op::kAppRestart, &AppHandlers::restart}, {ipc::op::kAppLogs, &AppHandlers::logs},
    {ipc::op::kAppAssign, &AppHandlers::assign},   {ipc::op::kAppRelease, &AppHandlers::release},
};

Status AppHandlers::registerOn(ipc::Endpoint& endpoint) {
  return ipc::registerHandlers<AppHandlers>(endpoint, *this, kHandlers);
}

Status AppHandlers::requireRuntime() const {
  if (apps_ == nullptr) {
    return Status(StatusCode::kFailedPrecondition, "this controller runs no apps");
  }
  return Status();
}

Json AppHandlers::describe(const state::AppRecord& app) {
  Json spec = Json::parse(app.spec, nullptr, false);
  Json sockets = Json::array();
  Json upstream = Json::array();
  Result<AppSpec> parsed = specOf(app);
  if (parsed.ok() && apps_ != nullptr) {
    for (const std::string& s : apps_->socketsOf(*parsed)) {
      sockets.push_back(s);
      upstream.push_back("unix:" + s);
    }
  }
  Json status = apps_ != nullptr ? apps_->appStatus(app.name) : Json(nullptr);
  std::string state = status.is_object() ? status.value("state", "unknown") : "not running";
  return {{"name", app.name},
          {"spec", spec},
          {"instance", app.instance ? Json(*app.instance) : Json(nullptr)},
          {"as", app.instance ? Json(app.assigned_as) : Json(nullptr)},
          {"sockets", sockets},
          {"upstream", upstream},
          {"state", state},
          {"status", status},
          {"created_ms", app.created_ms},
          {"updated_ms", app.updated_ms}};
}

Result<state::AppRecord> AppHandlers::namedApp(const Json& args) {
  return namedRecord(args, [this](const std::string& name) { return store_.getApp(name); });
}

Result<Json> AppHandlers::list(const Json&) {
  return listReply("apps", store_.listApps(),
                   [this](const state::AppRecord& a) { return describe(a); });
}

Result<Json> AppHandlers::show(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(state::AppRecord app, namedApp(args));
  return describe(app);
}

Result<Json> AppHandlers::logs(const Json& args) {
  SCALWS_RETURN_IF_ERROR(requireRuntime());
  SCALWS_ASSIGN_OR_RETURN(state::AppRecord app, namedApp(args));
  uint64_t limit = 50;
  if (args.contains("limit")) {
    SCALWS_ASSIGN_OR_RETURN(limit, ipc::uintField(args, "limit"));
    if (limit == 0 || limit > kMaxLogLines) {
      return common::invalidArgument("\"limit\" must be 1 to " + std::to_string(kMaxLogLines));
    }
  }
  std::string path = apps_->logPath(app.name);
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (lines.size() > limit) lines.erase(lines.begin());
  }
  return Json{{"path", path}, {"lines", lines}};
}

void AppHandlers::add(In& in, Out out) {
  Status ready = requireRuntime();
  Result<AppSpec> spec = ready.ok() ? parseAppSpec(in.args()) : Result<AppSpec>(ready);
  Status valid = spec.ok() ? state::validateName("app", spec->name) : spec.status();
  if (valid.ok() && store_.getApp(spec->name).ok()) {
    valid = Status(StatusCode::kAlreadyExists, "app '" + spec->name + "' already exists");
  }
  if (valid.ok()) valid = apps_->checkSpec(*spec);
  if (!valid.ok()) return out.fail(valid);
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
  AppSpec app = *spec;
  apps_->startApp(app, [this, shared, app](const Status& started) {
    if (!started.ok()) return shared->fail(started);
    state::AppRecord record;
    record.name = app.name;
    record.spec = appSpecJson(app).dump();
    Result<state::AppRecord> stored = store_.addApp(record);
    if (!stored.ok()) {
      apps_->removeApp(app.name, [](const Status&) {});
      return shared->fail(stored.status());
    }
    LOG_INFO("app %s added: %s as %s, %u process(es)", app.name.c_str(),
             std::string(runtimeName(app.runtime)).c_str(), app.user.c_str(), app.processes);
    shared->ok(describe(*stored));
  });
}

Status AppHandlers::checkUnused(const state::AppRecord& app) {
  Result<AppSpec> spec = specOf(app);
  Result<std::vector<state::InstanceRecord>> instances = store_.listInstances();
  if (!spec.ok() || !instances.ok()) return Status();
  std::vector<std::string> sockets = apps_->socketsOf(*spec);
  return checkUnusedByWorkers<ipc::AppGrant>(
      "app '" + app.name + "'", *instances,
      [this](const std::string& instance) { return instances_.runningApps(instance); },
      [&sockets](const ipc::AppGrant& grant) { return grant.sockets == sockets; });
}

void AppHandlers::remove(In& in, Out out) {
  Status ready = requireRuntime();
  if (!ready.ok()) return out.fail(ready);
  Result<state::AppRecord> app = namedApp(in.args());
  // An assigned app is refused by the store ("release it first"); a released one may still
  // be in running workers until they reload.
  Status unused = !app.ok() ? app.status() : app->instance ? Status() : checkUnused(*app);
  Status removed = unused.ok() ? store_.removeApp(app->name) : unused;
  if (!removed.ok()) return out.fail(removed);
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
  apps_->removeApp(app->name, [shared, name = app->name](const Status& stopped) {
    if (!stopped.ok()) return shared->fail(stopped);
    LOG_INFO("app %s removed", name.c_str());
    shared->ok();
  });
}

void AppHandlers::restart(In& in, Out out) {
  Status ready = requireRuntime();
  if (!ready.ok()) return out.fail(ready);
  Result<state::AppRecord> app = namedApp(in.args());
  if (!app.ok()) return out.fail(app.status());
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
  state::AppRecord record = *app;
  apps_->restartApp(record.name, [this, shared, record](const Status& started) {
    if (!started.ok()) return shared->fail(started);
    shared->ok(describe(record));
  });
}

Result<Json> AppHandlers::assign(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(AssignArgs a, parseAssignArgs(args, "app"));
  SCALWS_RETURN_IF_ERROR(store_.assignApp(a.name, a.instance, a.as));
  if (apps_ != nullptr) apps_->assignmentsChanged();
  SCALWS_ASSIGN_OR_RETURN(state::AppRecord app, store_.getApp(a.name));
  LOG_INFO("app %s assigned to instance %s as %s", a.name.c_str(), a.instance.c_str(),
           app.assigned_as.c_str());
  return describe(app);
}

Result<Json> AppHandlers::release(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(std::string name, ipc::stringField(args, "name"));
  SCALWS_RETURN_IF_ERROR(store_.releaseApp(name));
  if (apps_ != nullptr) apps_->assignmentsChanged();
  SCALWS_ASSIGN_OR_RETURN(state::AppRecord app, store_.getApp(name));
  return describe(app);
}

}  // namespace scalws::controller
