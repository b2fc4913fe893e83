#include "controller/server/pool_handlers.h"

#include <unistd.h>

#include <memory>

#include "common/config/php_pool_address.h"
#include "common/log.h"
#include "common/quoted.h"
#include "controller/pools/pool_binding.h"
#include "controller/system_accounts.h"

namespace scalws::controller {

using namespace handler_names;

namespace {

constexpr uint64_t kMaxConns = 65535;
constexpr uint64_t kMaxProcesses = 1024;

Status bad(const std::string& message) {
  return common::invalidArgument(message);
}

Result<uint64_t> boundedCount(const Json& args, std::string_view key, uint64_t max) {
  SCALWS_ASSIGN_OR_RETURN(uint64_t n, ipc::uintField(args, key));
  if (n == 0 || n > max) {
    return bad(common::quoted(key) + " must be 1 to " + std::to_string(max));
  }
  return n;
}

// Ok unless `args` holds one of `keys`, which then `why`.
Status refuseKeys(const Json& args, std::initializer_list<const char*> keys, const char* why) {
  for (const char* key : keys) {
    if (args.contains(key)) return bad(common::quoted(key) + " " + why);
  }
  return Status();
}

Result<state::PoolRecord> externalPool(const std::string& name, const Json& args) {
  SCALWS_RETURN_IF_ERROR(
      refuseKeys(args, {"user", "processes", "php_fpm"}, "is for managed pools"));
  state::PoolRecord p;
  p.name = name;
  SCALWS_ASSIGN_OR_RETURN(p.address, ipc::stringField(args, "address"));
  common::config::PhpPoolConfig parsed;
  Status valid = common::config::parsePhpPoolAddress(p.address, parsed);
  if (!valid.ok()) return bad("pool " + p.name + ": address: " + valid.message());
  if (args.contains("max_conns")) {
    SCALWS_ASSIGN_OR_RETURN(uint64_t n, boundedCount(args, "max_conns", kMaxConns));
    p.max_conns = static_cast<uint32_t>(n);
  }
  return p;
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

Result<Json> PoolHandlers::list(const Json&) {
  return listReply("pools", store_.listPools(),
                   [this](const state::PoolRecord& p) { return describe(p); });
}

Result<Json> PoolHandlers::show(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(state::PoolRecord pool, namedPool(args));
  return describe(pool);
}

Result<state::PoolRecord> PoolHandlers::namedPool(const Json& args) {
  return namedRecord(args, [this](const std::string& name) { return store_.getPool(name); });
}

// --- writes ------------------------------------------------------------------------------

Result<state::PoolRecord> PoolHandlers::newPool(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(std::string name, ipc::stringField(args, "name"));
  SCALWS_RETURN_IF_ERROR(state::validateName("pool", name));
  SCALWS_ASSIGN_OR_RETURN(bool managed, ipc::optionalBool(args, "managed", false));
  if (!managed) return externalPool(name, args);
  if (pools_ == nullptr) {
    return Status(StatusCode::kFailedPrecondition, "this controller runs no managed pools");
  }
  SCALWS_RETURN_IF_ERROR(
      refuseKeys(args, {"address", "max_conns"}, "is chosen by the controller for a managed pool"));
  if (name == "global") return bad("a managed pool cannot be named 'global' (php-fpm's own)");
  state::PoolRecord p;
  p.name = name;
  p.managed = true;
  SCALWS_ASSIGN_OR_RETURN(p.managed_user, ipc::stringField(args, "user"));
  Result<Account> account = lookUpUser(p.managed_user);
  if (!account.ok()) return bad(account.status().message());
  if (account->uid == 0) return bad("a managed pool never runs PHP as root; name another --user");
  SCALWS_ASSIGN_OR_RETURN(uint64_t processes, boundedCount(args, "processes", kMaxProcesses));
  p.processes = static_cast<uint32_t>(processes);
  p.max_conns = p.processes;  // a kept connection holds a child: pm = static, max_children
  if (args.contains("php_fpm")) {
    SCALWS_ASSIGN_OR_RETURN(p.php_fpm_path, ipc::stringField(args, "php_fpm"));
    // The master runs as root: the group scalws may add pools, not pick what runs as root.
    if (!pools_->phpFpmAllowed(p.php_fpm_path)) {
      return Status(StatusCode::kPermissionDenied,
                    "php-fpm '" + p.php_fpm_path +
                        "' is not among the binaries this controller runs; start it with "
                        "--allow-php-fpm " +
                        p.php_fpm_path + " to allow it");
    }
  }
  std::string binary = p.php_fpm_path.empty() ? pools_->defaultPhpFpm() : p.php_fpm_path;
  if (::access(binary.c_str(), X_OK) != 0) {
    return bad("no executable " + binary + " (install php8.2-fpm or give --php-fpm)");
  }
  p.address = pools_->managedAddress(p.name);
  common::config::PhpPoolConfig parsed;
  Status valid = common::config::parsePhpPoolAddress(p.address, parsed);
  if (!valid.ok()) return bad("pool " + p.name + ": socket: " + valid.message());
  return p;
}

void PoolHandlers::add(In& in, Out out) {
  Result<state::PoolRecord> pool = newPool(in.args());
  Status valid = pool.ok() ? state::validatePool(*pool) : pool.status();
  if (valid.ok() && store_.getPool(pool->name).ok()) {
    valid = Status(StatusCode::kAlreadyExists, "PHP pool '" + pool->name + "' already exists");
  }
  if (!valid.ok()) return out.fail(valid);
  if (!pool->managed) {
    Result<state::PoolRecord> stored = store_.addPool(*pool);
    if (stored.ok()) LOG_INFO("pool %s added at %s", pool->name.c_str(), pool->address.c_str());
    return out.answer(stored.ok() ? Result<Json>(describe(*stored)) : stored.status());
  }
  // Stored only once php-fpm accepts: a pool that cannot run is never registered.
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
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

Status PoolHandlers::checkRemovable(const state::PoolRecord& pool) {
  if (pool.instance) {
    return Status(StatusCode::kFailedPrecondition,
                  "PHP pool '" + pool.name + "' is assigned to instance '" + *pool.instance +
                      "'; release it first (scalwsctl pool release " + pool.name + ")");
  }
  // Released but still in the workers of a running instance (no reload since): removing
  // it now would turn their PHP requests into 502s.
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::InstanceRecord> instances, store_.listInstances());
  return checkUnusedByWorkers<ipc::PhpPoolGrant>(
      "PHP pool '" + pool.name + "'", instances,
      [this](const std::string& instance) { return instances_.runningPools(instance); },
      [&pool](const ipc::PhpPoolGrant& grant) { return grant.address == pool.address; });
}

void PoolHandlers::remove(In& in, Out out) {
  Result<state::PoolRecord> pool = namedPool(in.args());
  Status removable = pool.ok() ? checkRemovable(*pool) : pool.status();
  if (removable.ok()) removable = store_.removePool(pool->name);
  if (!removable.ok()) return out.fail(removable);
  LOG_INFO("pool %s removed", pool->name.c_str());
  if (!pool->managed || pools_ == nullptr) return out.ok();
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
  pools_->removePool(pool->name, [shared](const Status& stopped) {
    if (!stopped.ok()) return shared->fail(stopped);
    shared->ok();
  });
}

Result<Json> PoolHandlers::assign(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(AssignArgs a, parseAssignArgs(args, "pool"));
  std::optional<std::string> replaced;
  SCALWS_RETURN_IF_ERROR(store_.assignPool(a.name, a.instance, a.as, &replaced));
  if (pools_ != nullptr) pools_->assignmentsChanged();
  SCALWS_ASSIGN_OR_RETURN(state::PoolRecord pool, store_.getPool(a.name));
  LOG_INFO("pool %s assigned to instance %s as %s%s", a.name.c_str(), a.instance.c_str(),
           pool.assigned_as.c_str(), replaced ? (", replacing " + *replaced).c_str() : "");
  Json out = describe(pool);
  out["replaced"] = replaced ? Json(*replaced) : Json(nullptr);
  return out;
}

Result<Json> PoolHandlers::release(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(std::string name, ipc::stringField(args, "name"));
  SCALWS_RETURN_IF_ERROR(store_.releasePool(name));
  if (pools_ != nullptr) pools_->assignmentsChanged();
  SCALWS_ASSIGN_OR_RETURN(state::PoolRecord pool, store_.getPool(name));
  return describe(pool);
}

}  // namespace scalws::controller
