#include "controller/apps/app_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/log.h"
#include "controller/deferred_call.h"
#include "controller/loop_handles.h"
#include "controller/system_accounts.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;

namespace {

constexpr int kCgroupRemoveAttempts = 25;
constexpr uint64_t kCgroupRemoveRetryMs = 200;

// Created with `mode` and given to uid:gid (both again when it exists).
Status ownedDir(const std::string& dir, mode_t mode, uid_t uid, gid_t gid) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(StatusCode::kIoError, "cannot create " + dir + ": " + ec.message());
  if (::chown(dir.c_str(), uid, gid) != 0 || ::chmod(dir.c_str(), mode) != 0) {
    return common::errnoStatus(errno, "cannot set the owner of " + dir);
  }
  return Status();
}

Status isDirectory(const std::string& path, const char* what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return common::invalidArgument(std::string(what) + " " + path + " is not a directory");
  }
  return Status();
}

}  // namespace

std::string appCgroupSubtree(const std::string& state_dir) {
  std::error_code ec;
  std::string dir = std::filesystem::weakly_canonical(state_dir, ec).string();
  if (ec || dir.empty()) dir = state_dir;
  uint32_t hash = 2166136261u;  // FNV-1a: the same name from every build
  for (unsigned char c : dir) hash = (hash ^ c) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", hash);
  return std::string("scalws-apps-") + hex;
}

AppManager::AppManager(uv_loop_t* loop, state::StateStore& store, AppManagerOptions options)
    : loop_(loop),
      store_(store),
      options_(std::move(options)),
      cgroups_(AppCgroups::probe(options_.cgroup_host.value_or(CgroupHost::current()),
                                 appCgroupSubtree(options_.state_dir))) {
  memory_timer_ = new uv_timer_t;
  uv_timer_init(loop_, memory_timer_);
  memory_timer_->data = this;
  uv_timer_start(
      memory_timer_, [](uv_timer_t* t) { static_cast<AppManager*>(t->data)->checkMemory(); },
      kAppMemoryCheckMs, kAppMemoryCheckMs);
  uv_unref(reinterpret_cast<uv_handle_t*>(memory_timer_));
}

AppManager::~AppManager() {
  *alive_ = false;
  leave();
  apps_.clear();
  discarded_.clear();
  uv_close(reinterpret_cast<uv_handle_t*>(memory_timer_),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

std::string AppManager::socketDirOf(const std::string& name) const {
  return options_.socket_dir + "/" + name;
}

std::string AppManager::stateDirOf(const std::string& name) const {
  return options_.state_dir + "/apps/" + name;
}

std::string AppManager::logPath(const std::string& name) const {
  return stateDirOf(name) + "/app.log";
}

std::vector<std::string> AppManager::socketsOf(const AppSpec& spec) const {
  return appSocketPaths(options_.socket_dir, spec);
}

Status AppManager::checkSpec(const AppSpec& spec) const {
  if (spec.memory_bytes != 0 && !cgroups_.usable()) {
    return Status(StatusCode::kFailedPrecondition,
                  "--memory cannot be enforced here: " + cgroups_.problem() +
                      "; add the app without --memory, or give the controller a cgroup it "
                      "may manage (README: Node.js and Python apps)");
  }
  Result<Account> account = lookUpUser(spec.user);
  if (!account.ok()) return account.status();
  if (account->uid == 0 || account->gid == 0) {
    return Status(StatusCode::kPermissionDenied, "an app never runs as root or group 0");
  }
  SCALWS_RETURN_IF_ERROR(isDirectory(spec.dir, "--dir"));
  for (const std::string& dir : spec.writable)
    SCALWS_RETURN_IF_ERROR(isDirectory(dir, "--writable"));
  if (spec.runtime == AppSpec::Runtime::kNode && ::access(spec.entry.c_str(), F_OK) != 0) {
    return common::invalidArgument("--entry " + spec.entry + " does not exist");
  }
  if (::access(appArgv(spec, "")[0].c_str(), X_OK) != 0) {
    return Status(StatusCode::kFailedPrecondition,
                  "the runtime " + appArgv(spec, "")[0] + " is not installed");
  }
  std::string longest = socketsOf(spec).back();
  if (longest.size() >= 108) {
    return common::invalidArgument("the socket path " + longest + " is too long for a unix socket");
  }
  return Status();
}

Result<sandbox::ExecSandbox> AppManager::sandboxFor(const AppSpec& spec) const {
  Result<Account> account = lookUpUser(spec.user);
  if (!account.ok()) return account.status();
  sandbox::ExecSandboxSpec box;
  box.identity.user = account->name;
  box.identity.uid = account->uid;
  box.identity.gid = account->gid;
  box.identity.groups = {account->gid};  // its primary group only: nothing borrowed
  using sandbox::PathAccess;
  using sandbox::PathKind;
  auto add = [&](const std::string& path, PathAccess access, PathKind kind) {
    box.paths.push_back({path, access, kind});
  };
  add("/usr", PathAccess::kReadExecute, PathKind::kDirectory);
  add("/etc", PathAccess::kReadOnly, PathKind::kDirectory);
  add("/proc", PathAccess::kReadOnly, PathKind::kDirectory);
  for (const char* dev : {"/dev/null", "/dev/zero", "/dev/urandom"}) {
    add(dev, PathAccess::kDevice, PathKind::kAny);
  }
  add(spec.dir, PathAccess::kReadOnly, PathKind::kDirectory);
  if (spec.runtime == AppSpec::Runtime::kNode) {
    add(spec.entry, PathAccess::kReadOnly, PathKind::kFile);
  }
  for (const std::string& dir : spec.writable)
    add(dir, PathAccess::kReadWrite, PathKind::kDirectory);
  add(socketDirOf(spec.name), PathAccess::kSockets, PathKind::kDirectory);
  add(socketDirOf(spec.name) + "/tmp", PathAccess::kReadWrite, PathKind::kDirectory);
  box.tcpConnectPorts = appConnectPorts(spec);
  return sandbox::ExecSandbox::prepare(box);
}

// The socket directory (group: the assigned instance's user's, else the app user's), its
// TMPDIR and its state directory.
Status AppManager::prepareDirs(const AppSpec& spec) {
  Result<Account> runs_as = lookUpUser(spec.user);
  if (!runs_as.ok()) return runs_as.status();
  gid_t group = runs_as->gid;
  Result<state::AppRecord> stored = store_.getApp(spec.name);
  if (stored.ok() && stored->instance) {
    Result<state::InstanceRecord> instance = store_.getInstance(*stored->instance);
    if (instance.ok()) {
      Result<Account> reader = lookUpUser(instance->user);
      if (reader.ok()) group = reader->gid;
    }
  }
  std::error_code ec;
  if (std::filesystem::create_directories(options_.socket_dir, ec)) {
    ::chmod(options_.socket_dir.c_str(), 0711);
  }
  // Setgid: the sockets the app makes there get the directory's group (the app's umask is
  // 007), so the instance's workers may connect; those made before a reassignment follow.
  SCALWS_RETURN_IF_ERROR(ownedDir(socketDirOf(spec.name), 02750, runs_as->uid, group));
  for (const std::string& socket : socketsOf(spec)) {
    struct stat st;
    if (::lstat(socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_gid != group) {
      if (::lchown(socket.c_str(), runs_as->uid, group) != 0) {
        LOG_WARN("app %s: cannot give %s to its instance: %s", spec.name.c_str(), socket.c_str(),
                 std::strerror(errno));
      }
    }
  }
  SCALWS_RETURN_IF_ERROR(
      ownedDir(socketDirOf(spec.name) + "/tmp", 0700, runs_as->uid, runs_as->gid));
  SCALWS_RETURN_IF_ERROR(ownedDir(options_.state_dir + "/apps", 0750, 0, 0));
  SCALWS_RETURN_IF_ERROR(ownedDir(stateDirOf(spec.name), 0750, 0, 0));
  return Status();
}

AppManager::Entry& AppManager::addEntry(const AppSpec& spec) {
  Entry& entry = apps_[spec.name];
  entry.spec = spec;
  entry.processes.clear();
  std::string name = spec.name;
  entry.log = std::make_unique<FifoLog>(loop_, "app " + name, stateDirOf(name) + "/app.pipe",
                                        logPath(name), options_.log_cap);
  FifoLog* log = entry.log.get();
  std::vector<std::string> sockets = socketsOf(spec);
  for (uint32_t i = 0; i < sockets.size(); ++i) {
    AppProcessPaths paths{sockets[i], stateDirOf(name) + "/" + std::to_string(i) + ".pid",
                          stateDirOf(name) + "/app.pipe", socketDirOf(name) + "/tmp"};
    auto prepare = [this, spec, log]() -> Result<sandbox::ExecSandbox> {
      SCALWS_RETURN_IF_ERROR(prepareDirs(spec));
      SCALWS_RETURN_IF_ERROR(log->open());
      return sandboxFor(spec);
    };
    auto on_event = [this, name](std::string_view kind, const std::string& message) {
      Result<state::AppRecord> app = store_.getApp(name);
      std::optional<std::string> instance = app.ok() ? app->instance : std::nullopt;
      Result<state::EventRecord> stored = store_.appendEvent(instance, kind, message);
      (void)stored;
    };
    entry.processes.push_back(std::make_unique<AppProcess>(
        loop_, spec, i, std::move(paths), options_.limits, prepare, on_event, *log, cgroups_));
  }
  return entry;
}

void AppManager::startEntry(const std::string& name, bool adopt, Done done) {
  auto it = apps_.find(name);
  if (it == apps_.end()) {
    return deferCall(loop_, [done] { done(common::notFound("no such app")); });
  }
  // Adopted processes write to the FIFO they hold: read it from the start.
  if (adopt && ::access((stateDirOf(name) + "/app.pipe").c_str(), F_OK) == 0) {
    Status opened = it->second.log->open();
    if (!opened.ok()) LOG_WARN("app %s: %s", name.c_str(), opened.message().c_str());
  }
  auto pending = std::make_shared<size_t>(it->second.processes.size());
  auto first_error = std::make_shared<Status>();
  for (auto& process : it->second.processes) {
    process->start(adopt, [pending, first_error, done](const Status& started) {
      if (!started.ok() && first_error->ok()) *first_error = started;
      if (--*pending == 0) done(*first_error);
    });
  }
}

void AppManager::stopEntry(const std::string& name, Done done) {
  auto it = apps_.find(name);
  if (it == apps_.end()) return deferCall(loop_, [done] { done(Status()); });
  auto pending = std::make_shared<size_t>(it->second.processes.size() + 1);
  auto one_done = [pending, done](const Status&) {
    if (--*pending == 0) done(Status());
  };
  for (auto& process : it->second.processes) process->stop(one_done);
  deferCall(loop_, [one_done] { one_done(Status()); });
}

// --- lifecycle ---------------------------------------------------------------------------

void AppManager::startAll(Done done) {
  Result<std::vector<state::AppRecord>> all = store_.listApps();
  if (!all.ok()) {
    LOG_ERROR("cannot read the apps: %s", all.status().message().c_str());
    return deferCall(loop_, [done] { done(Status()); });
  }
  auto pending = std::make_shared<size_t>(1);
  auto one_done = [pending, done](const Status&) {
    if (--*pending == 0) done(Status());
  };
  for (const state::AppRecord& record : *all) {
    Result<AppSpec> spec = parseAppSpec(ipc::Json::parse(record.spec, nullptr, false));
    if (!spec.ok()) {
      LOG_ERROR("app %s is not started: %s", record.name.c_str(), spec.status().message().c_str());
      continue;
    }
    ++*pending;
    addEntry(*spec);
    startEntry(record.name, true, one_done);
  }
  deferCall(loop_, [one_done] { one_done(Status()); });
}

void AppManager::stopAll(Done done) {
  auto pending = std::make_shared<size_t>(1);
  auto one_done = [pending, done](const Status&) {
    if (--*pending == 0) done(Status());
  };
  std::weak_ptr<bool> alive = alive_;
  for (auto& app : apps_) {
    const std::string& name = app.first;
    ++*pending;
    stopEntry(name, [this, alive, name, one_done](const Status& stopped) {
      if (alive.expired()) return one_done(stopped);
      auto it = apps_.find(name);
      if (it != apps_.end()) it->second.log->close();
      // The app stays in the DB: the next controller makes its cgroups again.
      if (it == apps_.end() || it->second.spec.memory_bytes == 0) return one_done(stopped);
      removeCgroups(
          name, kCgroupRemoveAttempts, [one_done, stopped] { one_done(stopped); },
          /*even_if_listed=*/true);
    });
  }
  deferCall(loop_, [one_done] { one_done(Status()); });
}

void AppManager::leave() {
  for (auto& [name, entry] : apps_) {
    for (auto& process : entry.processes) process->leave();
    if (entry.log) entry.log->close();
  }
}

void AppManager::startApp(const AppSpec& spec, Done done) {
  if (apps_.count(spec.name) != 0) {
    return deferCall(loop_, [done, name = spec.name] {
      done(Status(StatusCode::kAlreadyExists, "app " + name + " is already being started"));
    });
  }
  addEntry(spec);
  std::weak_ptr<bool> alive = alive_;
  std::string name = spec.name;
  startEntry(name, false, [this, alive, name, done](const Status& started) {
    if (started.ok() || alive.expired()) return done(started);
    // One process did not come up: nothing of the app stays.
    stopEntry(name, [this, alive, name, done, started](const Status&) {
      if (!alive.expired()) {
        discard(name);
        removeCgroups(name, kCgroupRemoveAttempts);
        std::error_code ec;
        std::filesystem::remove_all(socketDirOf(name), ec);
      }
      done(started);
    });
  });
}

void AppManager::removeApp(const std::string& name, Done done) {
  std::weak_ptr<bool> alive = alive_;
  stopEntry(name, [this, alive, name, done](const Status& stopped) {
    if (!alive.expired()) {
      discard(name);
      removeCgroups(name, kCgroupRemoveAttempts);
      std::error_code ec;
      std::filesystem::remove_all(socketDirOf(name), ec);
      std::filesystem::remove_all(stateDirOf(name), ec);
    }
    done(stopped);
  });
}

void AppManager::restartApp(const std::string& name, Done done) {
  if (apps_.count(name) == 0) {
    return deferCall(
        loop_, [done, name] { done(common::notFound("app " + name + " runs nothing here")); });
  }
  std::weak_ptr<bool> alive = alive_;
  stopEntry(name, [this, alive, name, done](const Status&) {
    if (alive.expired()) return done(Status());
    startEntry(name, false, done);
  });
}

void AppManager::assignmentsChanged() {
  for (auto& [name, entry] : apps_) {
    Status prepared = prepareDirs(entry.spec);
    if (!prepared.ok()) LOG_WARN("app %s: %s", name.c_str(), prepared.message().c_str());
  }
}

void AppManager::discard(const std::string& name) {
  auto it = apps_.find(name);
  if (it == apps_.end()) return;
  if (it->second.log) it->second.log->close();
  discarded_[name] = std::move(it->second);
  apps_.erase(it);
  std::weak_ptr<bool> alive = alive_;
  deferCall(loop_, [this, alive, name] {
    if (!alive.expired()) discarded_.erase(name);
  });
}

void AppManager::checkMemory() {
  for (auto& [name, entry] : apps_) {
    if (entry.spec.memory_bytes == 0) continue;
    for (auto& process : entry.processes) process->checkMemory();
  }
}

void AppManager::removeCgroups(const std::string& name, int attempts_left,
                               std::function<void()> done, bool even_if_listed) {
  auto finish = [&done] {
    if (done) done();
  };
  // Added again meanwhile: its cgroups are in use.
  if (!even_if_listed && apps_.count(name) != 0) return finish();
  Status removed = cgroups_.remove(name);
  if (removed.ok()) return finish();
  if (attempts_left <= 1) {
    LOG_WARN("app %s: %s", name.c_str(), removed.message().c_str());
    return finish();
  }
  auto timer = std::make_shared<LoopTimer>(loop_);
  std::weak_ptr<bool> alive = alive_;
  timer->start(kCgroupRemoveRetryMs, 0,
               [this, alive, timer, name, attempts_left, done, even_if_listed]() mutable {
                 timer->close();
                 if (alive.expired()) {
                   if (done) done();
                   return;
                 }
                 removeCgroups(name, attempts_left - 1, done, even_if_listed);
               });
}

ipc::Json AppManager::appStatus(const std::string& name) const {
  auto it = apps_.find(name);
  if (it == apps_.end()) return nullptr;
  ipc::Json processes = ipc::Json::array();
  std::string state = "running";
  for (const auto& process : it->second.processes) {
    ipc::Json one = process->status();
    std::string s = one.value("state", "");
    if (s == "failed") {
      state = "failed";
    } else if (s != "running" && state == "running") {
      state = s;
    }
    processes.push_back(std::move(one));
  }
  ipc::Json out = {{"state", state},
                   {"processes", processes},
                   {"log_path", logPath(name)},
                   {"socket_dir", socketDirOf(name)}};
  if (it->second.spec.memory_bytes != 0) out["cgroups"] = cgroups_.describe();
  Result<sandbox::ExecSandbox> box = sandboxFor(it->second.spec);
  if (box.ok()) out["sandbox"] = box->report().toLines();
  return out;
}

}  // namespace scalws::controller
