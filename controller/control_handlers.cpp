#include "controller/control_handlers.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <iterator>
#include <memory>
#include <vector>

#include "common/log.h"
#include "common/quoted.h"
#include "controller/instance_config.h"
#include "controller/metrics_report.h"
#include "controller/pool_binding.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using ipc::Json;

namespace {

constexpr const char* kOps[] = {"status",        "cpu.list",         "instance.list",
                                "instance.show", "instance.logs",    "instance.add",
                                "instance.set",  "instance.remove",  "instance.start",
                                "instance.stop", "instance.restart", "instance.reload"};
// The metrics reads, registered with the others (a list of their own merges more easily).
constexpr const char* kMetricsOps[] = {"instance.metrics"};
constexpr uint32_t kMaxCpus = 4096;
constexpr int kMaxEvents = 1000;

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool userExists(const std::string& user) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  return getpwnam_r(user.c_str(), &pw, buf, sizeof(buf), &found) == 0 && found != nullptr;
}

// An optional field of args: absent is fine, present must have the right type.
template <typename T>
Result<T> optionalField(const Json& args, std::string_view key, T fallback,
                        Result<T> (*read)(const Json&, std::string_view)) {
  if (!args.contains(key)) return fallback;
  return read(args, key);
}

Result<int> eventLimit(const Json& args, std::string_view key, int fallback) {
  Result<uint64_t> n =
      optionalField<uint64_t>(args, key, static_cast<uint64_t>(fallback), &ipc::uintField);
  if (!n.ok()) return n.status();
  if (*n > kMaxEvents) {
    return common::invalidArgument(common::quoted(key) + " must be at most " +
                                   std::to_string(kMaxEvents));
  }
  return static_cast<int>(*n);
}

}  // namespace

Json eventJson(const state::EventRecord& event) {
  return {{"id", event.id},
          {"time_ms", event.time_ms},
          {"kind", event.kind},
          {"message", event.message}};
}

ControlHandlers::ControlHandlers(state::StateStore& store, InstanceRuntime& runtime,
                                 ControllerInfo info, PoolRuntime* pools)
    : store_(store),
      runtime_(runtime),
      info_(std::move(info)),
      pool_runtime_(pools),
      pools_(store, runtime, pools) {}

void ControlHandlers::registerOn(ipc::Endpoint& endpoint) {
  std::vector<const char*> ops(std::begin(kOps), std::end(kOps));
  ops.insert(ops.end(), std::begin(kMetricsOps), std::end(kMetricsOps));
  for (const char* op : PoolHandlers::ops()) ops.push_back(op);
  for (const char* op : ops) {
    std::string name = op;
    Status registered = endpoint.registerHandler(
        name, [this, name](const ipc::Message& m, std::vector<common::UniqueFd>, ipc::Replier r) {
          handle(name, m.args, std::move(r));
        });
    if (!registered.ok()) LOG_ERROR("%s", registered.message().c_str());
  }
}

void ControlHandlers::handle(const std::string& op, const Json& args, ipc::Replier replier) {
  if (op == "status") return status(std::move(replier));
  if (op == "cpu.list") return cpuList(std::move(replier));
  if (op == "instance.list") return instanceList(std::move(replier));
  if (op == "instance.show") return instanceShow(args, std::move(replier));
  if (op == "instance.logs") return instanceLogs(args, std::move(replier));
  if (op == "instance.metrics") return instanceMetrics(args, std::move(replier));
  if (op == "instance.add") return instanceAdd(args, std::move(replier));
  if (op == "instance.set") return instanceSet(args, std::move(replier));
  if (op == "instance.remove") return instanceRemove(args, std::move(replier));
  if (PoolHandlers::handles(op)) return pools_.handle(op, args, std::move(replier));
  return instanceAction(op, args, std::move(replier));
}

Json ControlHandlers::summary(const state::InstanceRecord& r) const {
  return {{"name", r.name},
          {"mode", state::workerModeName(r.mode)},
          {"cpus", r.cpus},
          {"assigned_cpus", r.assigned_cpus.toString()},
          {"shared_cpus", r.shared_cpus},
          {"user", r.user},
          {"desired", state::desiredStateName(r.desired)},
          {"status", r.status},
          {"reason", r.status_reason},
          {"process_count", runtime_.processCount(r.name)}};
}

void ControlHandlers::replySummary(const std::string& name, ipc::Replier replier) {
  Result<state::InstanceRecord> record = store_.getInstance(name);
  if (!record.ok()) return replier.fail(record.status());
  replier.ok(summary(*record));
}

// --- reads -------------------------------------------------------------------------------

void ControlHandlers::status(ipc::Replier replier) {
  Result<std::vector<state::InstanceRecord>> all = store_.listInstances();
  if (!all.ok()) return replier.fail(all.status());
  Json counts = {{"total", all->size()}, {"running", 0}, {"starting", 0},
                 {"stopping", 0},        {"stopped", 0}, {"failed", 0}};
  size_t processes = 0;
  Json lines = Json::array();
  for (const state::InstanceRecord& r : *all) {
    std::string s = runtime_.runtimeState(r.name);
    if (counts.contains(s)) counts[s] = counts[s].get<int>() + 1;
    processes += runtime_.processCount(r.name);
    if (metrics_ != nullptr) lines.push_back(statusLineJson(*metrics_, r.name, s));
  }
  int64_t now = wallMs();
  replier.ok({{"version", info_.version},
              {"pid", info_.pid},
              {"state_dir", info_.state_dir},
              {"socket", info_.socket_path},
              {"started_ms", info_.started_ms},
              {"uptime_ms", now - info_.started_ms},
              {"host_cpus", store_.allocator().host().toString()},
              {"reserved_cpus", info_.reserved_cpus.toString()},
              {"instances", counts},
              {"processes", processes},
              {"instance_metrics", lines}});
}

void ControlHandlers::cpuList(ipc::Replier replier) {
  Result<std::vector<cpu::CpuUsage>> usage = store_.cpuUsage();
  if (!usage.ok()) return replier.fail(usage.status());
  Json cpus = Json::array();
  for (const cpu::CpuUsage& u : *usage) {
    cpus.push_back(
        {{"cpu", u.cpu}, {"in_host", u.in_host}, {"exclusive", u.exclusive}, {"shared", u.shared}});
  }
  replier.ok({{"cpus", cpus}});
}

void ControlHandlers::instanceList(ipc::Replier replier) {
  Result<std::vector<state::InstanceRecord>> all = store_.listInstances();
  if (!all.ok()) return replier.fail(all.status());
  Json list = Json::array();
  for (const state::InstanceRecord& r : *all) list.push_back(summary(r));
  replier.ok({{"instances", list}});
}

void ControlHandlers::instanceShow(const Json& args, ipc::Replier replier) {
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<int> limit = eventLimit(args, "events", 10);
  if (!limit.ok()) return replier.fail(limit.status());
  Result<state::InstanceRecord> record = store_.getInstance(*name);
  if (!record.ok()) return replier.fail(record.status());
  Json out = summary(*record);
  out["config_path"] = record->config_path;
  std::optional<common::config::SiteConfig> running = runtime_.runningSite(*name);
  if (running) {
    out["config"] = configSummary(*running);
  } else {
    Result<common::config::SiteConfig> stored =
        loadInstanceConfig(record->config, record->config_path);
    out["config"] =
        stored.ok() ? configSummary(*stored) : Json{{"error", stored.status().message()}};
  }
  out["reload_pending"] = runtime_.reloadPending(*name);
  addPoolBindings(*record, out);
  out["created_ms"] = record->created_ms;
  out["updated_ms"] = record->updated_ms;
  out["processes"] = runtime_.processes(*name);
  // The proxy's servers as the live workers see them (health, in flight, counts).
  if (metrics_ != nullptr)
    out["upstreams"] = common::metrics::toJson(metrics_->upstreamsNow(*name));
  Result<std::vector<state::EventRecord>> events = store_.recentEvents(*name, *limit);
  if (!events.ok()) return replier.fail(events.status());
  Json list = Json::array();
  for (const state::EventRecord& e : *events) list.push_back(eventJson(e));
  out["events"] = list;
  replier.ok(std::move(out));
}

void ControlHandlers::instanceLogs(const Json& args, ipc::Replier replier) {
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<int> limit = eventLimit(args, "limit", 50);
  if (!limit.ok()) return replier.fail(limit.status());
  Result<state::InstanceRecord> record = store_.getInstance(*name);
  if (!record.ok()) return replier.fail(record.status());
  Result<std::vector<state::EventRecord>> events = store_.recentEvents(*name, *limit);
  if (!events.ok()) return replier.fail(events.status());
  Json list = Json::array();
  for (const state::EventRecord& e : *events) list.push_back(eventJson(e));
  replier.ok({{"events", list}});
}

void ControlHandlers::instanceMetrics(const Json& args, ipc::Replier replier) {
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<uint64_t> since = optionalField<uint64_t>(
      args, "since_ms", static_cast<uint64_t>(kDefaultMetricsSinceMs), &ipc::uintField);
  if (!since.ok()) return replier.fail(since.status());
  if (*since < 1000 || *since > static_cast<uint64_t>(kMaxMetricsSinceMs)) {
    return replier.fail(ipc::errc::kInvalidArgument, "\"since_ms\" must be from 1 s to 31 days");
  }
  Result<state::InstanceRecord> record = store_.getInstance(*name);
  if (!record.ok()) return replier.fail(record.status());
  if (metrics_ == nullptr) {
    return replier.fail(ipc::errc::kFailed, "this controller collects no metrics");
  }
  Result<Json> out =
      instanceMetricsJson(*metrics_, *name, runtime_.runtimeState(*name),
                          runtime_.processCount(*name), static_cast<int64_t>(*since));
  if (!out.ok()) return replier.fail(out.status());
  replier.ok(std::move(*out));
}

// --- writes ------------------------------------------------------------------------------

Result<std::string> ControlHandlers::checkedConfig(const std::string& name, const Json& args,
                                                   std::string* config_path) {
  Result<std::string> text = ipc::stringField(args, "config");
  if (!text.ok()) return text.status();
  Result<std::string> path = ipc::stringField(args, "config_path");
  if (!path.ok()) return path.status();
  if (path->empty() || path->front() != '/') {
    return common::invalidArgument("\"config_path\" must be an absolute path");
  }
  Result<common::config::SiteConfig> site = loadInstanceConfig(*text, *path);
  if (!site.ok()) return site.status();
  Result<std::vector<state::InstanceRecord>> all = store_.listInstances();
  if (!all.ok()) return all.status();
  for (const state::InstanceRecord& other : *all) {
    if (other.name == name) continue;
    std::optional<std::string> clash;
    Result<common::config::SiteConfig> stored = loadInstanceConfig(other.config, other.config_path);
    if (stored.ok()) clash = listenOverlap(*site, *stored);
    std::optional<common::config::SiteConfig> running = runtime_.runningSite(other.name);
    if (!clash && running) clash = listenOverlap(*site, *running);
    if (clash) {
      return Status(StatusCode::kAlreadyExists,
                    "address " + *clash + " is already used by instance " + other.name);
    }
  }
  *config_path = *path;
  return text;
}

void ControlHandlers::instanceAdd(const Json& args, ipc::Replier replier) {
  state::NewInstance spec;
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Status valid = state::validateName("instance", *name);
  if (!valid.ok()) return replier.fail(valid);
  spec.name = *name;

  Result<std::string> mode = optionalField<std::string>(args, "mode", "multi", &ipc::stringField);
  if (!mode.ok()) return replier.fail(mode.status());
  Result<common::config::WorkerMode> parsed_mode = state::parseWorkerMode(*mode);
  if (!parsed_mode.ok()) return replier.fail(parsed_mode.status());
  spec.mode = *parsed_mode;

  Result<uint64_t> cpus = optionalField<uint64_t>(args, "cpus", 1, &ipc::uintField);
  if (!cpus.ok()) return replier.fail(cpus.status());
  if (*cpus == 0 || *cpus > kMaxCpus) {
    return replier.fail(ipc::errc::kInvalidArgument,
                        "\"cpus\" must be 1 to " + std::to_string(kMaxCpus));
  }
  spec.cpus = static_cast<uint32_t>(*cpus);

  Result<bool> shared = optionalField<bool>(args, "shared_cpus", false, &ipc::boolField);
  if (!shared.ok()) return replier.fail(shared.status());
  spec.shared_cpus = *shared;

  Result<std::string> user =
      optionalField<std::string>(args, "user", kDefaultInstanceUser, &ipc::stringField);
  if (!user.ok()) return replier.fail(user.status());
  if (user->empty() || !userExists(*user)) {
    return replier.fail(ipc::errc::kInvalidArgument, "no user '" + *user + "' on this host");
  }
  spec.user = *user;

  Result<std::string> config = checkedConfig(spec.name, args, &spec.config_path);
  if (!config.ok()) return replier.fail(config.status());
  spec.config = std::move(config).value();

  Result<state::InstanceRecord> record = store_.addInstance(spec);
  if (!record.ok()) return replier.fail(record.status());
  LOG_INFO("instance %s added (mode %s, CPUs %s, user %s)", spec.name.c_str(), mode->c_str(),
           record->assigned_cpus.toString().c_str(), spec.user.c_str());
  runtime_.instanceStored(*record);
  replier.ok(summary(*record));
}

void ControlHandlers::instanceSet(const Json& args, ipc::Replier replier) {
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<state::InstanceRecord> existing = store_.getInstance(*name);
  if (!existing.ok()) return replier.fail(existing.status());
  std::string path;
  Result<std::string> config = checkedConfig(*name, args, &path);
  if (!config.ok()) return replier.fail(config.status());
  Status stored = store_.setInstanceConfig(*name, *config, path);
  if (!stored.ok()) return replier.fail(stored);
  Result<state::InstanceRecord> record = store_.getInstance(*name);
  if (!record.ok()) return replier.fail(record.status());
  runtime_.instanceStored(*record);
  replier.ok(summary(*record));
}

void ControlHandlers::instanceRemove(const Json& args, ipc::Replier replier) {
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<state::InstanceRecord> existing = store_.getInstance(*name);
  if (!existing.ok()) return replier.fail(existing.status());
  auto shared = std::make_shared<ipc::Replier>(std::move(replier));
  std::string n = *name;
  runtime_.remove(
      n, [this, n] { return store_.removeInstance(n); },
      [this, shared](const Status& s) {
        if (!s.ok()) return shared->fail(s);
        // Its pools were released with it: their sockets go back to their own users.
        if (pool_runtime_ != nullptr) pool_runtime_->assignmentsChanged();
        shared->ok();
      });
}

void ControlHandlers::addPoolBindings(const state::InstanceRecord& record, Json& out) {
  Result<std::vector<state::PoolRecord>> pools = store_.listPools();
  if (!pools.ok()) return;
  Json list = Json::array();
  std::vector<ipc::PhpPoolGrant> grants = poolGrantsFor(record, *pools);
  for (const ipc::PhpPoolGrant& g : grants) {
    std::string pool;
    for (const state::PoolRecord& p : *pools) {
      if (p.instance == record.name && p.assigned_as == g.name) pool = p.name;
    }
    list.push_back({{"name", g.name},
                    {"pool", pool},
                    {"address", g.address},
                    {"max_conns", g.max_conns},
                    {"share", g.share}});
  }
  out["php_pools"] = list;
  Json unbound = Json::array();
  Result<common::config::SiteConfig> stored = loadInstanceConfig(record.config, record.config_path);
  if (stored.ok()) {
    for (const std::string& name : phpPoolNames(*stored)) {
      bool bound = false;
      for (const ipc::PhpPoolGrant& g : grants) bound = bound || g.name == name;
      if (!bound) unbound.push_back(name);
    }
  }
  out["unbound_pools"] = unbound;
  std::optional<std::vector<ipc::PhpPoolGrant>> running = runtime_.runningPools(record.name);
  if (running && *running != grants) out["reload_pending"] = true;
}

void ControlHandlers::instanceAction(const std::string& op, const Json& args,
                                     ipc::Replier replier) {
  Result<std::string> name = ipc::stringField(args, "name");
  if (!name.ok()) return replier.fail(name.status());
  Result<state::InstanceRecord> existing = store_.getInstance(*name);
  if (!existing.ok()) return replier.fail(existing.status());
  std::string n = *name;
  auto shared = std::make_shared<ipc::Replier>(std::move(replier));
  InstanceRuntime::Done done = [this, n, shared](const Status& s) {
    if (!s.ok()) return shared->fail(s);
    replySummary(n, std::move(*shared));
  };
  auto desire = [this, n](state::DesiredState d) {
    return [this, n, d] { return store_.setDesiredState(n, d); };
  };
  if (op == "instance.start") return runtime_.start(n, desire(state::DesiredState::kRunning), done);
  if (op == "instance.restart") {
    return runtime_.restart(n, desire(state::DesiredState::kRunning), done);
  }
  if (op == "instance.reload") return runtime_.reload(n, done);
  if (op == "instance.stop") {
    // The intent is stored first: a controller that dies half-way through the stop comes
    // back knowing the operator wanted this instance stopped, and finishes the job.
    Status stored = store_.setDesiredState(n, state::DesiredState::kStopped);
    if (!stored.ok()) return shared->fail(stored);
    return runtime_.stop(n, done);
  }
  shared->fail(ipc::errc::kUnknownOp, "no handler for " + op);
}

}  // namespace scalws::controller
