// ControlHandlers: the writes (instance.add|set|remove and the actions start, stop,
// restart, reload). Each validates all it can before the one transaction that stores it.
#include <memory>

#include "common/log.h"
#include "controller/instances/instance_config.h"
#include "controller/server/control_handlers.h"
#include "controller/shared/claimed_names.h"
#include "controller/shared/sharing_rules.h"

namespace scalws::controller {

using namespace handler_names;

namespace {

constexpr uint64_t kMaxCpus = 4096;

}  // namespace

Status ControlHandlers::chooseUser(const Json& args, state::NewInstance& spec, bool* create) {
  *create = false;
  bool given = args.contains("user");
  SCALWS_ASSIGN_OR_RETURN(spec.user,
                          ipc::optionalString(args, "user", instanceUserName(spec.name)));
  Result<Account> account = accounts_.lookUp(spec.user);
  if (!account.ok() && given) {
    return common::invalidArgument("no user '" + spec.user + "' on this host");
  }
  *create = !account.ok();
  if (account.ok() && account->uid == 0 && !info_.allow_root_instances) {
    // Workers as root would read every file of the host (/etc/shadow, other tenants').
    return Status(StatusCode::kPermissionDenied,
                  "user '" + spec.user +
                      "' is root; instances run as root only under a controller started with "
                      "--allow-root-instances");
  }
  SCALWS_ASSIGN_OR_RETURN(bool share, ipc::optionalBool(args, "share_user", false));
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::InstanceRecord> all, store_.listInstances());
  for (const state::InstanceRecord& other : all) {
    if (other.user != spec.user || share) continue;
    return Status(StatusCode::kAlreadyExists,
                  "user '" + spec.user + "' already runs instance " + other.name +
                      "; two instances of one user can reach each other's files and PHP pools: "
                      "pass --share-user to mean it, or leave --user out for a user of its own");
  }
  return Status();
}

void ControlHandlers::removeUserOf(const state::InstanceRecord& record) {
  if (!record.user_created) return;
  Result<std::vector<state::InstanceRecord>> all = store_.listInstances();
  if (!all.ok()) return;
  for (const state::InstanceRecord& other : *all) {
    if (other.user == record.user) return;  // shared since: it stays for them
  }
  Status removed = accounts_.remove(record.user);
  if (removed.ok()) {
    LOG_INFO("instance %s: user %s removed", record.name.c_str(), record.user.c_str());
    return;
  }
  LOG_WARN("instance %s: cannot remove user %s: %s", record.name.c_str(), record.user.c_str(),
           removed.message().c_str());
}

Result<std::string> ControlHandlers::checkedConfig(const std::string& name, const Json& args,
                                                   std::string* config_path) {
  SCALWS_ASSIGN_OR_RETURN(std::string text, ipc::stringField(args, "config"));
  SCALWS_ASSIGN_OR_RETURN(std::string path, ipc::stringField(args, "config_path"));
  if (path.empty() || path.front() != '/') {
    return common::invalidArgument("\"config_path\" must be an absolute path");
  }
  SCALWS_ASSIGN_OR_RETURN(common::config::SiteConfig site, loadInstanceConfig(text, path));
  SCALWS_RETURN_IF_ERROR(checkSharing(name, site));
  *config_path = path;
  return text;
}

Status ControlHandlers::checkSharing(const std::string& name,
                                     const common::config::SiteConfig& site) {
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::InstanceRecord> all, store_.listInstances());
  for (const state::InstanceRecord& other : all) {
    if (other.name == name) continue;
    // Both what it would run on its next start and what it runs now.
    std::vector<common::config::SiteConfig> theirs;
    Result<common::config::SiteConfig> stored = loadInstanceConfig(other.config, other.config_path);
    if (stored.ok()) theirs.push_back(std::move(stored).value());
    std::optional<common::config::SiteConfig> running = runtime_.runningSite(other.name);
    if (running) theirs.push_back(std::move(*running));
    for (const common::config::SiteConfig& other_site : theirs) {
      SCALWS_ASSIGN_OR_RETURN(std::optional<std::string> clash,
                              sharingConflict(site, other.name, other_site, claimedNames));
      if (clash) return Status(StatusCode::kAlreadyExists, *clash);
    }
  }
  return Status();
}

Result<Json> ControlHandlers::instanceAdd(const Json& args) {
  state::NewInstance spec;
  SCALWS_ASSIGN_OR_RETURN(spec.name, ipc::stringField(args, "name"));
  SCALWS_RETURN_IF_ERROR(state::validateName("instance", spec.name));
  SCALWS_ASSIGN_OR_RETURN(std::string mode, ipc::optionalString(args, "mode", "multi"));
  SCALWS_ASSIGN_OR_RETURN(spec.mode, state::parseWorkerMode(mode));
  SCALWS_ASSIGN_OR_RETURN(uint64_t cpus, ipc::optionalUint(args, "cpus", 1));
  if (cpus == 0 || cpus > kMaxCpus) {
    return common::invalidArgument("\"cpus\" must be 1 to " + std::to_string(kMaxCpus));
  }
  spec.cpus = static_cast<uint32_t>(cpus);
  SCALWS_ASSIGN_OR_RETURN(spec.shared_cpus, ipc::optionalBool(args, "shared_cpus", false));
  if (store_.getInstance(spec.name).ok()) {
    return Status(StatusCode::kAlreadyExists, "instance '" + spec.name + "' already exists");
  }
  bool create = false;
  SCALWS_RETURN_IF_ERROR(chooseUser(args, spec, &create));
  SCALWS_ASSIGN_OR_RETURN(spec.config, checkedConfig(spec.name, args, &spec.config_path));
  if (create) {
    Result<Account> made = accounts_.create(spec.user, "ScalWS instance " + spec.name);
    if (!made.ok()) {
      return Status(made.status().code(),
                    "cannot make user " + spec.user + ": " + made.status().message());
    }
    spec.user_created = true;
  }
  Result<state::InstanceRecord> stored = store_.addInstance(spec);
  if (!stored.ok()) {
    if (spec.user_created) (void)accounts_.remove(spec.user);  // nothing of it stays
    return stored.status();
  }
  const state::InstanceRecord& record = *stored;
  LOG_INFO("instance %s added (mode %s, CPUs %s, user %s%s)", spec.name.c_str(), mode.c_str(),
           record.assigned_cpus.toString().c_str(), spec.user.c_str(),
           spec.user_created ? ", made for it" : "");
  runtime_.instanceStored(record);
  return summary(record);
}

Result<Json> ControlHandlers::instanceSet(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord existing, namedInstance(args));
  std::string path;
  SCALWS_ASSIGN_OR_RETURN(std::string config, checkedConfig(existing.name, args, &path));
  SCALWS_RETURN_IF_ERROR(store_.setInstanceConfig(existing.name, config, path));
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord record, store_.getInstance(existing.name));
  runtime_.instanceStored(record);
  return summary(record);
}

void ControlHandlers::instanceRemove(In& in, Out out) {
  Result<state::InstanceRecord> existing = namedInstance(in.args());
  if (!existing.ok()) return out.fail(existing.status());
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
  state::InstanceRecord record = *existing;
  runtime_.remove(
      record.name, [this, name = record.name] { return store_.removeInstance(name); },
      [this, shared, record](const Status& s) {
        if (!s.ok()) return shared->fail(s);
        // Its pools were released with it: their sockets go back to their own users.
        if (pool_runtime_ != nullptr) pool_runtime_->assignmentsChanged();
        removeUserOf(record);
        shared->ok();
      });
}

// --- actions -----------------------------------------------------------------------------

InstanceRuntime::Done ControlHandlers::summaryWhenDone(const Json& args, Out& out,
                                                       std::string* name) {
  Result<state::InstanceRecord> existing = namedInstance(args);
  if (!existing.ok()) {
    out.fail(existing.status());
    return nullptr;
  }
  *name = existing->name;
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
  return [this, n = *name, shared](const Status& s) {
    if (!s.ok()) return shared->fail(s);
    shared->answer(summaryOf(n));
  };
}

InstanceRuntime::Commit ControlHandlers::desire(const std::string& name, state::DesiredState d) {
  return [this, name, d] { return store_.setDesiredState(name, d); };
}

void ControlHandlers::instanceStart(In& in, Out out) {
  std::string name;
  InstanceRuntime::Done done = summaryWhenDone(in.args(), out, &name);
  if (done) runtime_.start(name, desire(name, state::DesiredState::kRunning), std::move(done));
}

void ControlHandlers::instanceRestart(In& in, Out out) {
  std::string name;
  InstanceRuntime::Done done = summaryWhenDone(in.args(), out, &name);
  if (done) runtime_.restart(name, desire(name, state::DesiredState::kRunning), std::move(done));
}

void ControlHandlers::instanceReload(In& in, Out out) {
  // The others may have changed since this config was stored: its names are checked again.
  if (Result<state::InstanceRecord> record = namedInstance(in.args()); record.ok()) {
    Result<common::config::SiteConfig> site =
        loadInstanceConfig(record->config, record->config_path);
    if (site.ok()) {
      Status sharing = checkSharing(record->name, *site);
      if (!sharing.ok()) return out.fail(sharing);
    }
  }
  std::string name;
  InstanceRuntime::Done done = summaryWhenDone(in.args(), out, &name);
  if (done) runtime_.reload(name, std::move(done));
}

void ControlHandlers::instanceStop(In& in, Out out) {
  std::string name;
  InstanceRuntime::Done done = summaryWhenDone(in.args(), out, &name);
  if (!done) return;
  // The intent is stored first: a controller that dies half-way through the stop comes
  // back knowing the operator wanted this instance stopped, and finishes the job.
  Status stored = desire(name, state::DesiredState::kStopped)();
  if (!stored.ok()) return done(stored);
  runtime_.stop(name, std::move(done));
}

}  // namespace scalws::controller
