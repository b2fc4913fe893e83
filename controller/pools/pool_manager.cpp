#include "controller/pools/pool_manager.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/log.h"
#include "controller/deferred_call.h"
#include "controller/system_accounts.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;

namespace {

Status makeDir(const std::string& dir, mode_t mode) {
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec)) ::chmod(dir.c_str(), mode);
  if (ec) return Status(StatusCode::kIoError, "cannot create " + dir + ": " + ec.message());
  return Status();
}

std::string socketPathOf(const state::PoolRecord& pool) {
  return pool.address.starts_with("unix:") ? pool.address.substr(5) : "";
}

}  // namespace

PoolManager::PoolManager(uv_loop_t* loop, state::StateStore& store, PoolManagerOptions options)
    : loop_(loop), store_(store), options_(std::move(options)) {}

PoolManager::~PoolManager() {
  *alive_ = false;
  leave();
  pools_.clear();
  discarded_.clear();
}

bool PoolManager::phpFpmAllowed(const std::string& path) const {
  if (path == options_.php_fpm) return true;
  for (const std::string& allowed : options_.allowed_php_fpm) {
    if (path == allowed) return true;
  }
  return false;
}

std::string PoolManager::managedAddress(const std::string& name) const {
  return "unix:" + options_.socket_dir + "/" + name + ".sock";
}

PoolPaths PoolManager::pathsFor(const state::PoolRecord& pool) const {
  std::string dir = options_.state_dir + "/pools/" + pool.name;
  return PoolPaths{dir + "/php-fpm.conf", dir + "/php-fpm.pid", dir + "/php-fpm.log",
                   dir + "/php-fpm.pipe", socketPathOf(pool)};
}

PoolManager::Entry& PoolManager::addEntry(const state::PoolRecord& pool) {
  Entry& entry = pools_[pool.name];
  entry.record = pool;
  std::string name = pool.name;
  PoolProcess::Hooks hooks;
  hooks.prepare = [this, name] { return prepare(name); };
  hooks.on_running = [this, name] {
    auto it = pools_.find(name);
    if (it == pools_.end()) return;
    if (it->second.socket_group.empty()) {
      // Adopted: this controller wrote no config yet; the socket follows the DB all the same.
      Status prepared = prepare(name);
      if (!prepared.ok()) LOG_WARN("pool %s: %s", name.c_str(), prepared.message().c_str());
    }
    applySocketOwnership(it->second);
  };
  hooks.on_event = [this, name](std::string_view kind, const std::string& message) {
    auto it = pools_.find(name);
    std::optional<std::string> instance =
        it != pools_.end() ? it->second.record.instance : std::nullopt;
    Result<state::EventRecord> stored = store_.appendEvent(instance, kind, message);
    (void)stored;
  };
  std::string php_fpm = pool.php_fpm_path.empty() ? options_.php_fpm : pool.php_fpm_path;
  entry.process =
      std::make_unique<PoolProcess>(loop_, pool.name, pathsFor(pool), php_fpm, options_.limits,
                                    std::move(hooks), options_.log_cap);
  return entry;
}

// --- the php-fpm config and the socket's owner -------------------------------------------

Result<std::string> PoolManager::socketGroupFor(const state::PoolRecord& pool,
                                                const std::string& current) {
  // Released: the instance that had it keeps reaching it until the pool goes to another
  // (its workers may still use it until their next reload); a fresh pool is its user's.
  if (!pool.instance && !current.empty()) return current;
  std::string user = pool.managed_user;
  if (pool.instance) {
    Result<state::InstanceRecord> instance = store_.getInstance(*pool.instance);
    if (instance.ok()) user = instance->user;
  }
  Result<Account> account = lookUpUser(user);
  if (!account.ok()) return account.status();
  return account->group;
}

Status PoolManager::prepare(const std::string& name) {
  auto it = pools_.find(name);
  if (it == pools_.end()) return common::notFound("pool " + name + " is not managed here");
  Entry& entry = it->second;
  // The store is the truth once the pool is in it (a `pool add` starts it before that).
  Result<state::PoolRecord> stored = store_.getPool(name);
  if (stored.ok()) entry.record = *stored;
  const state::PoolRecord& pool = entry.record;
  Result<Account> runs_as = lookUpUser(pool.managed_user);
  if (!runs_as.ok()) return runs_as.status();
  Result<std::string> group = socketGroupFor(pool, entry.socket_group);
  if (!group.ok()) return group.status();
  PoolPaths paths = pathsFor(pool);
  FpmConfig config;
  config.pool = pool.name;
  config.user = pool.managed_user;
  config.group = runs_as->group;
  config.socket_path = paths.socket;
  config.socket_group = *group;
  config.processes = pool.processes;
  config.pid_path = paths.pid;
  config.log_path = paths.pipe;  // the FIFO the controller reads (fifo_log.h)
  Result<std::string> text = renderFpmConfig(config);
  if (!text.ok()) return text.status();
  SCALWS_RETURN_IF_ERROR(makeDir(options_.state_dir + "/pools", 0750));
  SCALWS_RETURN_IF_ERROR(makeDir(options_.state_dir + "/pools/" + pool.name, 0750));
  // 0711: the workers reach their socket by name; nobody lists the others.
  SCALWS_RETURN_IF_ERROR(makeDir(options_.socket_dir, 0711));
  SCALWS_RETURN_IF_ERROR(writeFileAtomically(paths.config, *text));
  entry.socket_group = *group;
  return Status();
}

void PoolManager::applySocketOwnership(const Entry& entry) {
  const std::string path = socketPathOf(entry.record);
  Result<Account> owner = lookUpUser(entry.record.managed_user);
  Result<gid_t> group = lookUpGroup(entry.socket_group);
  if (!owner.ok() || !group.ok()) {
    LOG_WARN("pool %s: cannot resolve the owner of %s", entry.record.name.c_str(), path.c_str());
    return;
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return;  // not up yet
  if (st.st_uid == owner->uid && st.st_gid == *group && (st.st_mode & 07777) == 0660) return;
  if (::lchown(path.c_str(), owner->uid, *group) != 0 || ::chmod(path.c_str(), 0660) != 0) {
    LOG_WARN("pool %s: cannot give %s to group %s: %s", entry.record.name.c_str(), path.c_str(),
             entry.socket_group.c_str(), strerror(errno));
    return;
  }
  LOG_INFO("pool %s: socket %s now reachable by group %s", entry.record.name.c_str(), path.c_str(),
           entry.socket_group.c_str());
}

void PoolManager::assignmentsChanged() {
  for (auto& [name, entry] : pools_) {
    Result<state::PoolRecord> stored = store_.getPool(name);
    if (!stored.ok()) continue;
    entry.record = *stored;
    Result<std::string> group = socketGroupFor(entry.record, entry.socket_group);
    if (!group.ok() || *group == entry.socket_group) continue;
    // The next start's config says the same; the live socket changes now.
    Status written = prepare(name);
    if (!written.ok()) {
      LOG_WARN("pool %s: %s", name.c_str(), written.message().c_str());
      continue;
    }
    applySocketOwnership(entry);
  }
}

// --- lifecycle ---------------------------------------------------------------------------

void PoolManager::startAll(Done done) {
  Result<std::vector<state::PoolRecord>> all = store_.listPools();
  if (!all.ok()) {
    LOG_ERROR("cannot read the PHP pools: %s", all.status().message().c_str());
    return deferCall(loop_, [done] { done(Status()); });
  }
  std::map<std::string, bool> known;
  for (const state::PoolRecord& p : *all) known[p.name] = p.managed;
  cleanUpUnknown(known);
  auto pending = std::make_shared<size_t>(1);
  auto one_done = [pending, done](const Status&) {
    if (--*pending == 0) done(Status());
  };
  for (const state::PoolRecord& p : *all) {
    if (!p.managed || pools_.count(p.name) != 0) continue;
    std::string php_fpm = p.php_fpm_path.empty() ? options_.php_fpm : p.php_fpm_path;
    if (!phpFpmAllowed(php_fpm)) {
      // A pool stored when any binary was accepted: it is not run (as root) now.
      std::string why = "pool " + p.name + " is not started: its php-fpm " + php_fpm +
                        " is not among the binaries this controller runs (--php-fpm, "
                        "--allow-php-fpm)";
      LOG_ERROR("%s", why.c_str());
      Result<state::EventRecord> stored = store_.appendEvent(p.instance, "pool.refused", why);
      (void)stored;
      continue;
    }
    ++*pending;
    addEntry(p).process->supervise(one_done);
  }
  deferCall(loop_, [one_done] { one_done(Status()); });
}

void PoolManager::cleanUpUnknown(const std::map<std::string, bool>& known) {
  std::error_code ec;
  std::filesystem::path dir = options_.state_dir + "/pools";
  for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = item.path().filename().string();
    auto it = known.find(name);
    if (it != known.end() && it->second) continue;
    state::PoolRecord gone;
    gone.name = name;
    PoolPaths paths = pathsFor(gone);
    pid_t master = PoolProcess::findOurMaster(paths);
    if (master > 0) {
      LOG_WARN("pool %s is no longer in the DB; stopping its php-fpm (pid %d)", name.c_str(),
               static_cast<int>(master));
      ::kill(-master, SIGKILL);
    }
    std::filesystem::remove_all(item.path(), ec);
  }
}

void PoolManager::stopAll(Done done) {
  auto pending = std::make_shared<size_t>(1);
  auto one_done = [pending, done](const Status&) {
    if (--*pending == 0) done(Status());
  };
  for (auto& [name, entry] : pools_) {
    ++*pending;
    entry.process->stop(one_done);
  }
  deferCall(loop_, [one_done] { one_done(Status()); });
}

void PoolManager::leave() {
  for (auto& [name, entry] : pools_) entry.process->leave();
}

void PoolManager::startPool(const state::PoolRecord& pool, Done done) {
  if (pools_.count(pool.name) != 0) {
    return deferCall(loop_, [done, name = pool.name] {
      done(Status(StatusCode::kAlreadyExists, "pool " + name + " is already being started"));
    });
  }
  std::string name = pool.name;
  std::weak_ptr<bool> alive = alive_;
  addEntry(pool).process->startOnce([this, alive, name, done](const Status& started) {
    if (!started.ok() && !alive.expired()) {
      discard(name);
      std::error_code ec;
      std::filesystem::remove_all(options_.state_dir + "/pools/" + name, ec);
    }
    done(started);
  });
}

void PoolManager::removePool(const std::string& name, Done done) {
  auto it = pools_.find(name);
  if (it == pools_.end()) return deferCall(loop_, [done] { done(Status()); });
  std::weak_ptr<bool> alive = alive_;
  std::string socket = it->second.process->paths().socket;
  it->second.process->stop([this, alive, name, socket, done](const Status& stopped) {
    if (!alive.expired()) {
      discard(name);
      std::error_code ec;
      std::filesystem::remove_all(options_.state_dir + "/pools/" + name, ec);
      std::filesystem::remove(socket, ec);
      LOG_INFO("pool %s: stopped and removed", name.c_str());
    }
    done(stopped);
  });
}

void PoolManager::discard(const std::string& name) {
  auto it = pools_.find(name);
  if (it == pools_.end()) return;
  // Called from inside the process's own callback: freed on the next loop turn.
  discarded_[name] = std::move(it->second.process);
  pools_.erase(it);
  std::weak_ptr<bool> alive = alive_;
  deferCall(loop_, [this, alive, name] {
    if (!alive.expired()) discarded_.erase(name);
  });
}

ipc::Json PoolManager::poolStatus(const std::string& name) const {
  auto it = pools_.find(name);
  if (it == pools_.end()) return nullptr;
  ipc::Json out = it->second.process->status();
  const PoolPaths& paths = it->second.process->paths();
  out["config_path"] = paths.config;
  out["log_path"] = paths.log;
  out["socket_group"] = it->second.socket_group;
  return out;
}

}  // namespace scalws::controller
