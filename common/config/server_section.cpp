// [server]: how a standalone scalwsd runs (processes, CPUs, user, timeouts, limits, logs).
#include <algorithm>
#include <cstdint>

#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

constexpr int64_t kMaxWorkers = 1024;
constexpr int64_t kMaxCpu = 1023;  // CPU_SETSIZE - 1
constexpr int64_t kMaxU32 = UINT32_MAX;

void readPositiveSize(TableReader& table, std::string_view key, Bytes& out) {
  Bytes bytes = 0;
  if (!table.readSize(key, bytes)) return;
  if (bytes == 0) {
    table.error(*table.get(key), key, "must be greater than zero");
    return;
  }
  out = bytes;
}

void readCpus(TableReader& table, ServerConfig& server) {
  const ConfigValue* cpus = table.get("cpus");
  if (cpus == nullptr) return;
  std::string path = table.keyPath("cpus");
  if (!expectType(*cpus, ConfigValue::Type::kArray, path, table.context())) return;
  for (size_t i = 0; i < cpus->array.size(); ++i) {
    const ConfigValue& element = cpus->array[i];
    std::string element_path = path + "[" + std::to_string(i) + "]";
    int64_t cpu = 0;
    if (!readIntegerValue(element, 0, kMaxCpu, element_path, table.context(), cpu)) continue;
    uint32_t id = static_cast<uint32_t>(cpu);
    if (std::find(server.cpus.begin(), server.cpus.end(), id) != server.cpus.end()) {
      table.context().error(element.where,
                            element_path + ": CPU " + std::to_string(cpu) + " is listed twice");
      continue;
    }
    server.cpus.push_back(id);
  }
}

void readSandbox(TableReader& table, ServerConfig& server) {
  const ConfigValue* sandbox = table.get("sandbox");
  if (sandbox == nullptr) return;
  if (sandbox->is(ConfigValue::Type::kBoolean)) {
    server.sandbox = sandbox->boolean ? SandboxMode::kOn : SandboxMode::kOff;
  } else if (sandbox->is(ConfigValue::Type::kString) && sandbox->string == "required") {
    server.sandbox = SandboxMode::kRequired;
  } else {
    std::string found = sandbox->is(ConfigValue::Type::kString)
                            ? "\"" + sandbox->string + "\""
                            : std::string(describeType(sandbox->type));
    table.error(*sandbox, "sandbox", "expected true, false or \"required\", found " + found);
  }
}

void readServerHeader(TableReader& table, ServerConfig& server) {
  const ConfigValue* header = table.get("server_header");
  if (header == nullptr) return;
  if (header->is(ConfigValue::Type::kBoolean) && !header->boolean) {
    server.server_header.clear();
  } else if (header->is(ConfigValue::Type::kString)) {
    if (!isValidFieldValue(header->string)) {
      table.error(*header, "server_header", "must not contain control characters");
      return;
    }
    server.server_header = header->string;
  } else {
    std::string found =
        header->is(ConfigValue::Type::kBoolean) ? "true" : std::string(describeType(header->type));
    table.error(*header, "server_header", "expected a string or false, found " + found);
  }
}

void readLogPath(TableReader& table, std::string_view key, std::string& out) {
  std::string path;
  if (!table.readString(key, path)) return;
  out = path.empty() ? path : table.context().resolvePath(path);
}

// The keys only the controller sets for an instance, and where each one comes from.
struct ControllerKey {
  std::string_view key;
  std::string_view from;
};
constexpr ControllerKey kControllerKeys[] = {
    {"workers", "scalwsctl instance add --cpus (one worker per CPU) and --mode"},
    {"mode", "scalwsctl instance add --mode"},
    {"cpus", "scalwsctl instance add --cpus"},
    {"user", "scalwsctl instance add --user"},
    {"sandbox", "the controller: instance workers always run sandboxed"},
    {"seccomp_action", "the controller"},
    {"temp_dir", "the controller"},
    {"error_log", "the controller: LOG_DIR/NAME/error.log (scalws-controller --log-dir)"},
};

// Under the controller: each controller-owned key is refused where it is set; the access
// log is the controller's file, which `access_log = false` turns off.
void refuseControllerKeys(TableReader& table, ServerConfig& server) {
  for (const ControllerKey& k : kControllerKeys) {
    if (const ConfigValue* value = table.get(k.key); value != nullptr) {
      table.error(*value, k.key, "set by the controller (" + std::string(k.from) + ")");
    }
  }
  const ConfigValue* access_log = table.get("access_log");
  if (access_log == nullptr) return;
  if (access_log->is(ConfigValue::Type::kBoolean)) {
    server.instance_access_log = access_log->boolean;
  } else {
    table.error(*access_log, "access_log",
                "set by the controller (LOG_DIR/NAME/access.log, scalws-controller --log-dir); "
                "only true or false here");
  }
}

void readControllerKeys(TableReader& table, ServerConfig& server) {
  table.readInteger("workers", 1, kMaxWorkers, server.workers);
  table.readEnum<WorkerMode>(
      "mode", {{"multi", WorkerMode::kMulti}, {"single", WorkerMode::kSingle}}, server.mode);
  readCpus(table, server);
  table.readString("user", server.user);
  readSandbox(table, server);
  table.readEnum<SeccompAction>("seccomp_action",
                                {{"errno", SeccompAction::kErrno}, {"kill", SeccompAction::kKill}},
                                server.seccomp_action);
  readLogPath(table, "access_log", server.access_log);
  readLogPath(table, "error_log", server.error_log);
  if (table.readString("temp_dir", server.temp_dir)) {
    if (server.temp_dir.empty() || server.temp_dir.find('\0') != std::string::npos) {
      table.error(*table.get("temp_dir"), "temp_dir", "must name a directory");
    } else {
      server.temp_dir = table.context().resolvePath(server.temp_dir);
      while (server.temp_dir.size() > 1 && server.temp_dir.back() == '/')
        server.temp_dir.pop_back();
    }
  }
}

}  // namespace

void parseServerSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "server", ctx)) return;
  ServerConfig server;
  server.where = value.where;
  TableReader table(value, "server", ctx);

  if (ctx.options().server_table == ServerTable::kSiteOnly) {
    refuseControllerKeys(table, server);
  } else {
    readControllerKeys(table, server);
  }

  table.readPositiveDuration("header_timeout", server.header_timeout);
  table.readDuration("keepalive_timeout", server.keepalive_timeout);  // 0: no keep-alive
  table.readPositiveDuration("body_timeout", server.body_timeout);
  table.readPositiveDuration("send_timeout", server.send_timeout);
  table.readDuration("shutdown_timeout", server.shutdown_timeout);  // 0: no drain

  readPositiveSize(table, "max_request_line", server.max_request_line);
  readPositiveSize(table, "max_header_size", server.max_header_size);
  table.readInteger("max_headers", 1, kMaxU32, server.max_headers);
  table.readSize("max_body", server.max_body);  // 0: no request body accepted
  table.readInteger("max_requests_per_connection", 1, kMaxU32, server.max_requests_per_connection);
  table.readInteger("max_connections", 1, kMaxU32, server.max_connections);

  readServerHeader(table, server);
  table.readEnum<AccessLogFormat>(
      "access_log_format",
      {{"combined", AccessLogFormat::kCombined}, {"json", AccessLogFormat::kJson}},
      server.access_log_format);
  std::string_view level;
  if (table.readEnum<std::string_view>("log_level",
                                       {{"debug", "debug"},
                                        {"info", "info"},
                                        {"notice", "notice"},
                                        {"warn", "warn"},
                                        {"error", "error"},
                                        {"alert", "alert"}},
                                       level)) {
    server.log_level = std::string(level);
  }
  table.finish();
  site.server = std::move(server);
}

}  // namespace scalws::common::config
