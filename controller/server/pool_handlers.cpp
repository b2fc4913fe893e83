#include "controller/server/pool_handlers.h"

#include <pwd.h>
#include <unistd.h>

#include <memory>

#include "common/config/php_pool_address.h"
#include "common/log.h"
#include "controller/pools/pool_binding.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using ipc::Json;

namespace {

constexpr uint64_t kMaxConns = 65535;
constexpr uint64_t kMaxProcesses = 1024;

Status bad(const std::string& message) {
  return common::invalidArgument(message);
}

Result<uid_t> userId(const std::string& user) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (user.empty() || getpwnam_r(user.c_str(), &pw, buf, sizeof(buf), &found) != 0 ||
      found == nullptr) {
    return bad("no user '" + user + "' on this host");
  }
  return pw.pw_uid;
}

Result<uint64_t> boundedCount(const Json& args, std::string_view key, uint64_t max) {
  Result<uint64_t> n = ipc::uintField(args, key);
  if (!n.ok()) return n.status();
  if (*n == 0 || *n > max) {
    return bad("\"" + std::string(key) + "\" must be 1 to " + std::to_string(max));
  }
  return *n;
}

}  // namespace

const ipc::OpHandler<PoolHandlers> PoolHandlers::kHandlers[] = {
    {ipc::op::kPoolList, &PoolHandlers::list},     {ipc::op::kPoolShow, &PoolHandlers::show},
    {ipc::op::kPoolAdd, &PoolHandlers::add},       {ipc::op::kPoolRemove, &PoolHandlers::remove},
    {ipc::op::kPoolAssign, &PoolHandlers::assign}, {ipc::op::kPoolRelease, &PoolHandlers::release},
};

Status PoolHandlers::registerOn(ipc::Endpoint& endpoint) {
  return ipc::registerHandlers<PoolHandlers>(endpoint, *this, kHandlers);
}

Json PoolHandlers::describe(const state::PoolRecord& p) {
  uint32_t share = 0;
  if (p.instance) {
    Result<state::InstanceRecord> instance = store_.getInstance(*p.instance);
    if (instance.ok()) share = poolShareFor(p.max_conns, instanceLoops(*instance));
  }
  Json process = pools_ != nullptr && p.managed ? pools_->poolStatus(p.name) : Json(nullptr);
  std::string state = "external";
  if (p.managed) state = process.is_object() ? process.value("state", "unknown") : "not running";
  Json out = {{"name", p.name},
              {"kind", p.managed ? "managed" : "external"},
              {"address", p.address},
              {"max_conns", p.max_conns},
              {"instance", p.instance ? Json(*p.instance) : Json(nullptr)},
              {"as", p.instance ? Json(p.assigned_as) : Json(nullptr)},
              {"share", share},
              {"state", state},
              {"process", process},
              {"created_ms", p.created_ms},
              {"updated_ms", p.updated_ms}};
  if (p.managed) {
    out["user"] = p.managed_user;
    out["processes"] = p.processes;
    out["php_fpm"] = !p.php_fpm_path.empty() ? p.php_fpm_path
                     : pools_ != nullptr     ? pools_->defaultPhpFpm()
                                             : std::string(kDefaultPhpFpm);
  }
  return out;
}

// --- reads -------------------------------------------------------------------------------

void PoolHandlers::list(In&, Out replier) {
  Result<std::vector<state::PoolRecord>> all = store_.listPools();
  if (!all.ok()) return replier.fail(all.status());
  Json pools = Json::array();
  for (const state::PoolRecord& p : *all) pools.push_back(describe(p));
  replier.ok({{"pools", pools}});
}

void PoolHandlers::show(In& in, Out replier) {
  const Json& args = in.args();
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<state::PoolRecord> pool = store_.getPool(*name);
  if (!pool.ok()) return replier.fail(pool.status());
  replier.ok(describe(*pool));
}

// --- writes ------------------------------------------------------------------------------

Result<state::PoolRecord> PoolHandlers::newPool(const Json& args) {
  state::PoolRecord p;
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return name.status();
  SCALWS_RETURN_IF_ERROR(state::validateName("pool", *name));
  p.name = *name;
  bool managed = false;
  if (args.contains("managed")) {
    Result<bool> flag = ipc::boolField(args, "managed");
    if (!flag.ok()) return flag.status();
    managed = *flag;
  }
  auto refuse = [&](std::initializer_list<const char*> keys, const char* why) -> Status {
    for (const char* key : keys) {
      if (args.contains(key)) return bad("\"" + std::string(key) + "\" " + why);
    }
    return Status();
  };
  if (!managed) {
    SCALWS_RETURN_IF_ERROR(refuse({"user", "processes", "php_fpm"}, "is for managed pools"));
    Result<std::string> address = ipc::stringField(args, "address");
    if (!address.ok()) return address.status();
    common::config::PhpPoolConfig parsed;
    Status valid = common::config::parsePhpPoolAddress(*address, parsed);
    if (!valid.ok()) return bad("pool " + p.name + ": address: " + valid.message());
    p.address = *address;
    if (args.contains("max_conns")) {
      Result<uint64_t> n = boundedCount(args, "max_conns", kMaxConns);
      if (!n.ok()) return n.status();
      p.max_conns = static_cast<uint32_t>(*n);
    }
    return p;
  }
  if (pools_ == nullptr) {
    return Status(StatusCode::kFailedPrecondition, "this controller runs no managed pools");
  }
  SCALWS_RETURN_IF_ERROR(
      refuse({"address", "max_conns"}, "is chosen by the controller for a managed pool"));
  if (p.name == "global") return bad("a managed pool cannot be named 'global' (php-fpm's own)");
  Result<std::string> user = ipc::stringField(args, "user");
  if (!user.ok()) return user.status();
  Result<uid_t> uid = userId(*user);
  if (!uid.ok()) return uid.status();
  if (*uid == 0) return bad("a managed pool never runs PHP as root; name another --user");
  Result<uint64_t> processes = boundedCount(args, "processes", kMaxProcesses);
  if (!processes.ok()) return processes.status();
  if (args.contains("php_fpm")) {
    Result<std::string> php_fpm = ipc::stringField(args, "php_fpm");
    if (!php_fpm.ok()) return php_fpm.status();
    if (php_fpm->empty() || php_fpm->front() != '/' || ::access(php_fpm->c_str(), X_OK) != 0) {
      return bad("php-fpm '" + *php_fpm + "' is not an executable absolute path");
    }
    p.php_fpm_path = *php_fpm;
  } else if (::access(pools_->defaultPhpFpm().c_str(), X_OK) != 0) {
    return bad("no executable " + pools_->defaultPhpFpm() +
               " (install php8.2-fpm or give --php-fpm)");
  }
  p.managed = true;
  p.managed_user = *user;
  p.processes = static_cast<uint32_t>(*processes);
  p.max_conns = p.processes;  // a kept connection holds a child: pm = static, max_children
  p.address = pools_->managedAddress(p.name);
  common::config::PhpPoolConfig parsed;
  Status valid = common::config::parsePhpPoolAddress(p.address, parsed);
  if (!valid.ok()) return bad("pool " + p.name + ": socket: " + valid.message());
  return p;
}

void PoolHandlers::add(In& in, Out replier) {
  const Json& args = in.args();
  Result<state::PoolRecord> pool = newPool(args);
  if (!pool.ok()) return replier.fail(pool.status());
  Status valid = state::validatePool(*pool);
  if (!valid.ok()) return replier.fail(valid);
  Result<state::PoolRecord> existing = store_.getPool(pool->name);
  if (existing.ok()) {
    return replier.fail(
        Status(StatusCode::kAlreadyExists, "PHP pool '" + pool->name + "' already exists"));
  }
  if (!pool->managed) {
    Result<state::PoolRecord> stored = store_.addPool(*pool);
    if (!stored.ok()) return replier.fail(stored.status());
    LOG_INFO("pool %s added at %s", pool->name.c_str(), pool->address.c_str());
    return replier.ok(describe(*stored));
  }
  // Stored only once php-fpm accepts: a pool that cannot run is never registered.
  auto shared = std::make_shared<ipc::Replier>(std::move(replier));
  state::PoolRecord record = *pool;
  pools_->startPool(record, [this, shared, record](const Status& started) {
    if (!started.ok()) return shared->fail(started);
    Result<state::PoolRecord> stored = store_.addPool(record);
    if (!stored.ok()) {
      pools_->removePool(record.name, [](const Status&) {});
      return shared->fail(stored.status());
    }
    LOG_INFO("pool %s added: php-fpm as %s, %u process(es), on %s", record.name.c_str(),
             record.managed_user.c_str(), record.processes, record.address.c_str());
    shared->ok(describe(*stored));
  });
}

void PoolHandlers::remove(In& in, Out replier) {
  const Json& args = in.args();
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<state::PoolRecord> pool = store_.getPool(*name);
  if (!pool.ok()) return replier.fail(pool.status());
  if (pool->instance) {
    return replier.fail(Status(StatusCode::kFailedPrecondition,
                               "PHP pool '" + *name + "' is assigned to instance '" +
                                   *pool->instance +
                                   "'; release it first (scalwsctl pool release " + *name + ")"));
  }
  // Released but still in the workers of a running instance (no reload since): removing
  // it now would turn their PHP requests into 502s.
  Result<std::vector<state::InstanceRecord>> instances = store_.listInstances();
  if (!instances.ok()) return replier.fail(instances.status());
  for (const state::InstanceRecord& instance : *instances) {
    std::optional<std::vector<ipc::PhpPoolGrant>> running = instances_.runningPools(instance.name);
    if (!running) continue;
    for (const ipc::PhpPoolGrant& grant : *running) {
      if (grant.address != pool->address) continue;
      return replier.fail(
          Status(StatusCode::kFailedPrecondition, "PHP pool '" + *name +
                                                      "' is still used by the running workers "
                                                      "of instance '" +
                                                      instance.name + "' (as " + grant.name +
                                                      "); reload or stop that instance first"));
    }
  }
  Status removed = store_.removePool(*name);
  if (!removed.ok()) return replier.fail(removed);
  LOG_INFO("pool %s removed", name->c_str());
  if (!pool->managed || pools_ == nullptr) return replier.ok();
  auto shared = std::make_shared<ipc::Replier>(std::move(replier));
  pools_->removePool(*name, [shared](const Status& stopped) {
    if (!stopped.ok()) return shared->fail(stopped);
    shared->ok();
  });
}

void PoolHandlers::assign(In& in, Out replier) {
  const Json& args = in.args();
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<std::string> instance = ipc::stringField(args, "instance");
  if (!instance.ok()) return replier.fail(instance.status());
  std::string as;
  if (args.contains("as")) {
    Result<std::string> given = ipc::stringField(args, "as");
    if (!given.ok()) return replier.fail(given.status());
    as = *given;
    Status valid = state::validateName("pool", as);
    if (!valid.ok()) return replier.fail(valid);
  }
  std::optional<std::string> replaced;
  Status assigned = store_.assignPool(*name, *instance, as, &replaced);
  if (!assigned.ok()) return replier.fail(assigned);
  if (pools_ != nullptr) pools_->assignmentsChanged();
  Result<state::PoolRecord> pool = store_.getPool(*name);
  if (!pool.ok()) return replier.fail(pool.status());
  LOG_INFO("pool %s assigned to instance %s as %s%s", name->c_str(), instance->c_str(),
           pool->assigned_as.c_str(), replaced ? (", replacing " + *replaced).c_str() : "");
  Json out = describe(*pool);
  out["replaced"] = replaced ? Json(*replaced) : Json(nullptr);
  replier.ok(std::move(out));
}

void PoolHandlers::release(In& in, Out replier) {
  const Json& args = in.args();
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Status released = store_.releasePool(*name);
  if (!released.ok()) return replier.fail(released);
  if (pools_ != nullptr) pools_->assignmentsChanged();
  Result<state::PoolRecord> pool = store_.getPool(*name);
  if (!pool.ok()) return replier.fail(pool.status());
  replier.ok(describe(*pool));
}

}  // namespace scalws::controller
