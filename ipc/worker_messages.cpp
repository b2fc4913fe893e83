#include "ipc/worker_messages.h"

#include <climits>

#include "common/config/cache_config.h"
#include "common/hex.h"

namespace scalws::ipc {

using common::Result;
using common::Status;
using common::config::WorkerMode;

namespace {

// Numbers are encoded from unsigned types: a value built from a signed one is not
// is_number_unsigned() until it went through text, and the decoders read unsigned.

Status bad(std::string_view where, const Status& why) {
  return common::invalidArgument(std::string(where) + ": " + why.message());
}

Result<uint32_t> boundedUint(const Json& object, std::string_view key, uint64_t max) {
  Result<uint64_t> value = uintField(object, key);
  if (!value.ok()) return value.status();
  if (*value > max) {
    return common::invalidArgument("\"" + std::string(key) + "\" must be at most " +
                                   std::to_string(max));
  }
  return static_cast<uint32_t>(*value);
}

Result<int64_t> pidField(const Json& object) {
  Result<uint64_t> pid = uintField(object, "pid");
  if (!pid.ok()) return pid.status();
  if (*pid == 0 || *pid > INT_MAX) return common::invalidArgument("\"pid\" is out of range");
  return static_cast<int64_t>(*pid);
}

Json specJson(const ListenerSpec& s) {
  Json out = {{"loop", s.loop}, {"address", s.address}, {"port", s.port}, {"tls", s.tls}};
  if (s.quic) {
    out["quic"] = true;
    out["steering"] = s.steering;
  }
  if (s.handoff) out["handoff"] = true;
  return out;
}

Result<ListenerSpec> specFrom(const Json& entry) {
  ListenerSpec s;
  Result<uint32_t> loop = boundedUint(entry, "loop", kMaxWorkerLoops - 1);
  if (!loop.ok()) return loop.status();
  Result<std::string> address = stringField(entry, "address");
  if (!address.ok()) return address.status();
  Result<uint32_t> port = boundedUint(entry, "port", 65535);
  if (!port.ok()) return port.status();
  if (*port == 0) return common::invalidArgument("\"port\" must be 1 to 65535");
  Result<bool> tls = boolField(entry, "tls");
  if (!tls.ok()) return tls.status();
  s.loop = *loop;
  s.address = std::move(address).value();
  s.port = static_cast<uint16_t>(*port);
  s.tls = *tls;
  if (entry.contains("quic")) {
    Result<bool> quic = boolField(entry, "quic");
    if (!quic.ok()) return quic.status();
    s.quic = *quic;
  }
  if (entry.contains("handoff")) {
    Result<bool> handoff = boolField(entry, "handoff");
    if (!handoff.ok()) return handoff.status();
    s.handoff = *handoff;
  }
  if (s.quic) {
    // A reuseport group holds at most 0xffff sockets: the id is 16 bits in the CID.
    Result<uint32_t> steering = boundedUint(entry, "steering", 0xfffe);
    if (!steering.ok()) return steering.status();
    s.steering = *steering;
  }
  return s;
}

Json reportsJson(const std::vector<ListenerReport>& list) {
  Json out = Json::array();
  for (const ListenerReport& l : list) {
    Json entry = specJson(l.spec);
    entry["fd"] = static_cast<uint64_t>(l.fd < 0 ? 0 : l.fd);
    out.push_back(std::move(entry));
  }
  return out;
}

Result<std::vector<ListenerReport>> reportsFrom(const Json& args) {
  auto it = args.find("listeners");
  if (it == args.end() || !it->is_array()) {
    return common::invalidArgument("\"listeners\" must be an array");
  }
  std::vector<ListenerReport> out;
  for (const Json& entry : *it) {
    Result<ListenerSpec> spec = specFrom(entry);
    if (!spec.ok()) return bad("listeners", spec.status());
    Result<uint32_t> fd = boundedUint(entry, "fd", INT_MAX);
    if (!fd.ok()) return bad("listeners", fd.status());
    out.push_back(ListenerReport{std::move(spec).value(), static_cast<int>(*fd)});
  }
  return out;
}

void settingsInto(const WorkerSettings& s, Json& out) {
  out["instance"] = s.instance;
  out["slot"] = s.slot;
  out["mode"] = workerModeName(s.mode);
  out["loops"] = s.loops;
  out["cpus"] = s.cpus.toString();
  out["user"] = s.user;
  out["config"] = s.config;
  out["config_path"] = s.config_path;
  out["php_pools"] = phpPoolGrantsJson(s.php_pools);
  putAppGrants(s.apps, out);
}

Result<WorkerSettings> settingsFrom(const Json& args) {
  WorkerSettings s;
  Result<std::string> instance = stringField(args, "instance");
  if (!instance.ok()) return instance.status();
  if (instance->empty()) return common::invalidArgument("\"instance\" must not be empty");
  s.instance = std::move(instance).value();
  Result<uint32_t> slot = boundedUint(args, "slot", kMaxWorkerLoops);
  if (!slot.ok()) return slot.status();
  s.slot = *slot;
  Result<std::string> mode = stringField(args, "mode");
  if (!mode.ok()) return mode.status();
  Result<WorkerMode> parsed = parseWorkerMode(*mode);
  if (!parsed.ok()) return parsed.status();
  s.mode = *parsed;
  Result<uint32_t> loops = boundedUint(args, "loops", kMaxWorkerLoops);
  if (!loops.ok()) return loops.status();
  if (*loops == 0) return common::invalidArgument("\"loops\" must be at least 1");
  if (s.mode == WorkerMode::kMulti && *loops != 1) {
    return common::invalidArgument("a multi-mode worker runs exactly one loop");
  }
  s.loops = *loops;
  Result<std::string> cpus = stringField(args, "cpus");
  if (!cpus.ok()) return cpus.status();
  Result<common::CpuSet> set = common::parseCpuList(*cpus);
  if (!set.ok()) return set.status();
  s.cpus = std::move(set).value();
  Result<std::string> user = stringField(args, "user");
  if (!user.ok()) return user.status();
  if (user->empty()) return common::invalidArgument("\"user\" must not be empty");
  s.user = std::move(user).value();
  Result<std::string> config = stringField(args, "config");
  if (!config.ok()) return config.status();
  s.config = std::move(config).value();
  Result<std::string> path = stringField(args, "config_path");
  if (!path.ok()) return path.status();
  s.config_path = std::move(path).value();
  Result<std::vector<PhpPoolGrant>> pools = parsePhpPoolGrants(args);
  if (!pools.ok()) return pools.status();
  s.php_pools = std::move(pools).value();
  Result<std::vector<AppGrant>> apps = parseAppGrants(args);
  if (!apps.ok()) return apps.status();
  s.apps = std::move(apps).value();
  return s;
}

}  // namespace

Json settingsJson(const WorkerSettings& settings) {
  Json out = Json::object();
  settingsInto(settings, out);
  return out;
}

std::string_view workerModeName(WorkerMode mode) {
  return mode == WorkerMode::kSingle ? "single" : "multi";
}

Result<WorkerMode> parseWorkerMode(std::string_view name) {
  if (name == "multi") return WorkerMode::kMulti;
  if (name == "single") return WorkerMode::kSingle;
  return common::invalidArgument("mode must be multi or single, not '" + std::string(name) + "'");
}

// --- hello -------------------------------------------------------------------------------

Json HelloArgs::encode() const {
  Json out = {{"pid", static_cast<uint64_t>(pid)},
              {"instance", instance},
              {"attached", attached.has_value()},
              {"attach_address", attach_address}};
  if (!attached) return out;
  settingsInto(attached->settings, out);
  out["instance"] = instance;  // the worker's own name, whatever the settings say
  out["state"] = attached->stopping ? "stopping" : "serving";
  out["listeners"] = reportsJson(attached->listeners);
  if (!attached->caches.empty()) out["caches"] = cacheAreaReportsJson(attached->caches);
  return out;
}

Result<HelloArgs> HelloArgs::decode(const Json& args) {
  HelloArgs h;
  Result<int64_t> pid = pidField(args);
  if (!pid.ok()) return bad("hello", pid.status());
  h.pid = *pid;
  Result<std::string> instance = stringField(args, "instance");
  if (!instance.ok()) return bad("hello", instance.status());
  h.instance = std::move(instance).value();
  Result<std::string> address = stringField(args, "attach_address");
  h.attach_address = address.ok() ? std::move(address).value() : "";
  Result<bool> attached = boolField(args, "attached");
  if (!attached.ok() || !*attached) return h;
  Attached a;
  Result<std::string> state = stringField(args, "state");
  if (!state.ok()) return bad("hello", state.status());
  if (*state != "serving" && *state != "stopping") {
    return common::invalidArgument("hello: \"state\" must be \"serving\" or \"stopping\"");
  }
  a.stopping = *state == "stopping";
  Result<WorkerSettings> settings = settingsFrom(args);
  if (!settings.ok()) return bad("hello", settings.status());
  a.settings = std::move(settings).value();
  Result<std::vector<ListenerReport>> listeners = reportsFrom(args);
  if (!listeners.ok()) return bad("hello", listeners.status());
  a.listeners = std::move(listeners).value();
  Result<std::vector<CacheAreaReport>> caches = cacheAreaReportsFrom(args);
  if (!caches.ok()) return bad("hello", caches.status());
  a.caches = std::move(caches).value();
  h.attached = std::move(a);
  return h;
}

// --- config ------------------------------------------------------------------------------

Json ConfigArgs::encode() const {
  Json out = Json::object();
  settingsInto(settings, out);
  out["controller_uid"] = controller_uid;
  if (!tls_ticket_secret.empty()) out["tls_ticket_secret"] = common::toHex(tls_ticket_secret);
  return out;
}

Result<ConfigArgs> ConfigArgs::decode(const Json& args) {
  ConfigArgs c;
  Result<WorkerSettings> settings = settingsFrom(args);
  if (!settings.ok()) return bad("config", settings.status());
  c.settings = std::move(settings).value();
  Result<uint64_t> uid = uintField(args, "controller_uid");
  if (!uid.ok()) return bad("config", uid.status());
  if (*uid > UINT32_MAX) return common::invalidArgument("config: \"controller_uid\" too large");
  c.controller_uid = *uid;
  if (args.contains("tls_ticket_secret")) {
    Result<std::string> hex = stringField(args, "tls_ticket_secret");
    if (!hex.ok()) return bad("config", hex.status());
    std::optional<std::string> secret = common::fromHex(*hex);
    if (!secret || secret->empty()) {
      return common::invalidArgument("config: \"tls_ticket_secret\" must be non-empty hex");
    }
    c.tls_ticket_secret = std::move(*secret);
  }
  return c;
}

// --- listeners ---------------------------------------------------------------------------

Json ListenersArgs::encode() const {
  Json list = Json::array();
  for (const ListenerSpec& s : listeners) list.push_back(specJson(s));
  Json out = {{"listeners", std::move(list)}};
  if (!caches.empty()) out["caches"] = caches;
  if (!shared.empty()) sharedNamesInto(shared, out);
  if (access_log) out["access_log"] = true;
  return out;
}

Result<ListenersArgs> ListenersArgs::decode(const Json& args) {
  auto it = args.find("listeners");
  if (it == args.end() || !it->is_array()) {
    return common::invalidArgument("\"listeners\" must be an array");
  }
  ListenersArgs l;
  for (const Json& entry : *it) {
    Result<ListenerSpec> spec = specFrom(entry);
    if (!spec.ok()) return bad("listeners", spec.status());
    l.listeners.push_back(std::move(spec).value());
  }
  if (auto c = args.find("caches"); c != args.end()) {
    if (!c->is_array()) return common::invalidArgument("listeners: \"caches\" must be an array");
    for (const Json& name : *c) {
      if (!name.is_string() || !isAreaName(name.get<std::string>())) {
        return common::invalidArgument("listeners: \"caches\" must hold cache names");
      }
      l.caches.push_back(name.get<std::string>());
    }
  }
  Result<std::vector<SharedAddressNames>> shared = sharedNamesFrom(args);
  if (!shared.ok()) return bad("listeners", shared.status());
  l.shared = std::move(shared).value();
  if (auto a = args.find("access_log"); a != args.end()) {
    if (!a->is_boolean())
      return common::invalidArgument("listeners: \"access_log\" must be a bool");
    l.access_log = a->get<bool>();
  }
  return l;
}

// --- ready -------------------------------------------------------------------------------

Json ReadyArgs::encode() const {
  if (!ok) return {{"ok", false}, {"error", error}};
  Json out = {{"ok", true},
              {"pid", static_cast<uint64_t>(pid)},
              {"loops", loops},
              {"listeners", reportsJson(listeners)},
              {"sandbox", sandbox.encode()}};
  if (!caches.empty()) out["caches"] = cacheAreaReportsJson(caches);
  return out;
}

Result<ReadyArgs> ReadyArgs::decode(const Json& args) {
  ReadyArgs r;
  Result<bool> ok = boolField(args, "ok");
  if (!ok.ok()) return bad("ready", ok.status());
  r.ok = *ok;
  if (!r.ok) {
    Result<std::string> error = stringField(args, "error");
    r.error = error.ok() ? std::move(error).value() : "said it is not ready";
    return r;
  }
  Result<int64_t> pid = pidField(args);
  if (!pid.ok()) return bad("ready", pid.status());
  r.pid = *pid;
  Result<uint32_t> loops = boundedUint(args, "loops", kMaxWorkerLoops);
  if (!loops.ok()) return bad("ready", loops.status());
  r.loops = *loops;
  Result<std::vector<ListenerReport>> listeners = reportsFrom(args);
  if (!listeners.ok()) return bad("ready", listeners.status());
  r.listeners = std::move(listeners).value();
  Result<std::vector<CacheAreaReport>> caches = cacheAreaReportsFrom(args);
  if (!caches.ok()) return bad("ready", caches.status());
  r.caches = std::move(caches).value();
  auto sandbox = args.find("sandbox");
  if (sandbox == args.end()) return common::invalidArgument("ready: no \"sandbox\"");
  Result<SandboxSummary> summary = SandboxSummary::decode(*sandbox);
  if (!summary.ok()) return bad("ready", summary.status());
  r.sandbox = std::move(summary).value();
  return r;
}

// --- reload ------------------------------------------------------------------------------

Json ReloadArgs::encode() const {
  Json out = {{"config", config},
              {"config_path", config_path},
              {"php_pools", phpPoolGrantsJson(php_pools)}};
  putAppGrants(apps, out);
  return out;
}

Result<ReloadArgs> ReloadArgs::decode(const Json& args) {
  ReloadArgs r;
  Result<std::string> config = stringField(args, "config");
  if (!config.ok()) return bad("reload", config.status());
  Result<std::string> path = stringField(args, "config_path");
  if (!path.ok()) return bad("reload", path.status());
  Result<std::vector<PhpPoolGrant>> pools = parsePhpPoolGrants(args);
  if (!pools.ok()) return bad("reload", pools.status());
  Result<std::vector<AppGrant>> apps = parseAppGrants(args);
  if (!apps.ok()) return bad("reload", apps.status());
  r.config = std::move(config).value();
  r.config_path = std::move(path).value();
  r.php_pools = std::move(pools).value();
  r.apps = std::move(apps).value();
  return r;
}

// --- metrics -----------------------------------------------------------------------------

Json MetricsArgs::encode() const {
  Json out = {{"pid", static_cast<uint64_t>(pid)},
              {"slot", slot},
              {"metrics", common::metrics::toJson(metrics)}};
  if (!upstreams.empty()) out["upstreams"] = common::metrics::toJson(upstreams);
  if (!caches.empty()) out["caches"] = cacheFiguresJson(caches);
  return out;
}

Result<MetricsArgs> MetricsArgs::decode(const Json& args) {
  MetricsArgs m;
  Result<int64_t> pid = pidField(args);
  if (!pid.ok()) return bad("metrics", pid.status());
  m.pid = *pid;
  Result<uint32_t> slot = boundedUint(args, "slot", kMaxWorkerLoops);
  if (!slot.ok()) return bad("metrics", slot.status());
  m.slot = *slot;
  auto it = args.find("metrics");
  if (it == args.end()) return common::invalidArgument("metrics: no \"metrics\"");
  Result<common::metrics::MetricsSnapshot> s = common::metrics::metricsFromJson(*it);
  if (!s.ok()) return s.status();
  m.metrics = std::move(s).value();
  if (auto u = args.find("upstreams"); u != args.end()) {
    Result<std::vector<common::metrics::UpstreamMetrics>> upstreams =
        common::metrics::upstreamMetricsFromJson(*u);
    if (!upstreams.ok()) return bad("metrics", upstreams.status());
    m.upstreams = std::move(upstreams).value();
  }
  if (auto c = args.find("caches"); c != args.end()) {
    Result<std::vector<CacheFigures>> caches = cacheFiguresFrom(*c);
    if (!caches.ok()) return bad("metrics", caches.status());
    m.caches = std::move(caches).value();
  }
  return m;
}

}  // namespace scalws::ipc
