#include "controller/apps/app_spec.h"

#include <algorithm>
#include <cctype>

namespace scalws::controller {

using common::Result;
using common::Status;
using ipc::Json;

namespace {

constexpr uint32_t kMaxProcesses = 256;

Status bad(const std::string& message) {
  return common::invalidArgument(message);
}

bool absolutePath(const std::string& path) {
  return !path.empty() && path.front() == '/' && path.find("/../") == std::string::npos &&
         !path.ends_with("/..") && path.find('\0') == std::string::npos;
}

bool validName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// "module:callable", both dotted Python identifiers.
bool validTarget(const std::string& target) {
  size_t colon = target.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == target.size()) return false;
  return std::all_of(target.begin(), target.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
  });
}

Result<uint16_t> portOf(const std::string& hostPort) {
  size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("--connect needs HOST:PORT");
  std::string port = hostPort.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad("--connect " + hostPort + ": the port must be a number");
  }
  unsigned long n = std::stoul(port);
  if (n == 0 || n > 65535) return bad("--connect " + hostPort + ": the port must be 1 to 65535");
  return static_cast<uint16_t>(n);
}

Result<std::vector<std::string>> stringList(const Json& json, const char* key) {
  std::vector<std::string> out;
  if (!json.contains(key)) return out;
  const Json& list = json.at(key);
  if (!list.is_array()) return bad(std::string("\"") + key + "\" must be a list of strings");
  for (const Json& item : list) {
    if (!item.is_string()) return bad(std::string("\"") + key + "\" must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

std::string_view runtimeName(AppSpec::Runtime runtime) {
  switch (runtime) {
    case AppSpec::Runtime::kNode:
      return "node";
    case AppSpec::Runtime::kWsgi:
      return "python-wsgi";
    case AppSpec::Runtime::kAsgi:
      return "python-asgi";
  }
  return "?";
}

Status validateAppSpec(AppSpec& spec) {
  if (!validName(spec.name)) {
    return bad("app name \"" + spec.name + "\" must be 1 to 64 letters, digits, '-' or '_'");
  }
  if (spec.runtime == AppSpec::Runtime::kNode) {
    if (!spec.target.empty()) return bad("--wsgi and --asgi are for --runtime python");
    if (!absolutePath(spec.entry)) return bad("--runtime node needs --entry /absolute/file.js");
    if (spec.dir.empty())
      spec.dir = spec.entry.substr(0, std::max<size_t>(1, spec.entry.rfind('/')));
  } else {
    if (!spec.entry.empty()) return bad("--entry is for --runtime node");
    if (!validTarget(spec.target)) {
      return bad("--runtime python needs --wsgi module:callable or --asgi module:app");
    }
    if (spec.dir.empty()) return bad("--runtime python needs --dir DIR (where the module is)");
  }
  if (!absolutePath(spec.dir)) return bad("--dir must be an absolute path");
  if (spec.processes == 0 || spec.processes > kMaxProcesses) {
    return bad("--processes must be 1 to " + std::to_string(kMaxProcesses));
  }
  if (spec.memory_bytes != 0 && spec.memory_bytes < kMinAppMemory) {
    return bad("--memory must be at least 4m (no runtime starts in less)");
  }
  if (spec.user.empty()) return bad("app add needs --user USER");
  if (spec.user == "root") return bad("an app never runs as root");
  for (const std::string& kv : spec.env) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || kv.find('\0') != std::string::npos) {
      return bad("--env needs K=V, not \"" + kv + "\"");
    }
    std::string key = kv.substr(0, eq);
    if (key == "PORT" || key == "TMPDIR" || key == "LD_PRELOAD" || key == "LD_LIBRARY_PATH") {
      return bad("--env " + key + " is set by the controller (or not at all)");
    }
  }
  for (const std::string& dir : spec.writable) {
    if (!absolutePath(dir))
      return bad("--writable needs an absolute directory, not \"" + dir + "\"");
  }
  for (const std::string& hp : spec.connect) {
    Result<uint16_t> port = portOf(hp);
    if (!port.ok()) return port.status();
  }
  return Status();
}

Json appSpecJson(const AppSpec& spec) {
  return {{"name", spec.name},
          {"runtime", runtimeName(spec.runtime)},
          {"entry", spec.entry},
          {"target", spec.target},
          {"processes", spec.processes},
          {"user", spec.user},
          {"dir", spec.dir},
          {"env", spec.env},
          {"writable", spec.writable},
          {"connect", spec.connect},
          {"memory_bytes", spec.memory_bytes}};
}

Result<AppSpec> parseAppSpec(const Json& json) {
  if (!json.is_object()) return bad("an app must be an object");
  AppSpec spec;
  SCALWS_ASSIGN_OR_RETURN(spec.name, ipc::stringField(json, "name"));
  SCALWS_ASSIGN_OR_RETURN(std::string runtime, ipc::stringField(json, "runtime"));
  if (runtime == "node") {
    spec.runtime = AppSpec::Runtime::kNode;
  } else if (runtime == "python-wsgi") {
    spec.runtime = AppSpec::Runtime::kWsgi;
  } else if (runtime == "python-asgi") {
    spec.runtime = AppSpec::Runtime::kAsgi;
  } else {
    return bad("runtime must be node, python-wsgi or python-asgi, not \"" + runtime + "\"");
  }
  auto optionalString = [&](const char* key, std::string& out) -> Status {
    if (!json.contains(key)) return Status();
    if (!json.at(key).is_string()) return bad(std::string("\"") + key + "\" must be a string");
    out = json.at(key).get<std::string>();
    return Status();
  };
  SCALWS_RETURN_IF_ERROR(optionalString("entry", spec.entry));
  SCALWS_RETURN_IF_ERROR(optionalString("target", spec.target));
  SCALWS_RETURN_IF_ERROR(optionalString("dir", spec.dir));
  SCALWS_ASSIGN_OR_RETURN(spec.user, ipc::stringField(json, "user"));
  SCALWS_ASSIGN_OR_RETURN(uint64_t processes, ipc::uintField(json, "processes"));
  if (processes > kMaxProcesses) return bad("--processes must be 1 to 256");
  spec.processes = static_cast<uint32_t>(processes);
  SCALWS_ASSIGN_OR_RETURN(spec.env, stringList(json, "env"));
  SCALWS_ASSIGN_OR_RETURN(spec.writable, stringList(json, "writable"));
  SCALWS_ASSIGN_OR_RETURN(spec.connect, stringList(json, "connect"));
  if (json.contains("memory_bytes")) {
    SCALWS_ASSIGN_OR_RETURN(spec.memory_bytes, ipc::uintField(json, "memory_bytes"));
  }
  SCALWS_RETURN_IF_ERROR(validateAppSpec(spec));
  return spec;
}

uint32_t appProcessCount(const AppSpec& spec) {
  return spec.runtime == AppSpec::Runtime::kNode ? spec.processes : 1;
}

std::vector<std::string> appSocketPaths(const std::string& app_dir, const AppSpec& spec) {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < appProcessCount(spec); ++i) {
    out.push_back(app_dir + "/" + spec.name + "/" + std::to_string(i) + ".sock");
  }
  return out;
}

std::vector<uint16_t> appConnectPorts(const AppSpec& spec) {
  std::vector<uint16_t> ports;
  for (const std::string& hp : spec.connect) {
    Result<uint16_t> port = portOf(hp);
    if (port.ok()) ports.push_back(*port);
  }
  return ports;
}

std::vector<std::string> appArgv(const AppSpec& spec, const std::string& socket) {
  std::string workers = std::to_string(spec.processes);
  switch (spec.runtime) {
    case AppSpec::Runtime::kNode:
      return {kNodeBinary, spec.entry};
    case AppSpec::Runtime::kWsgi:
      // No control socket, no pid file: the controller watches the master itself.
      // Its workers' heartbeat files go to TMPDIR (the default, /dev/shm, is not granted).
      return {kPython,     "-m",       "gunicorn", "--bind", "unix:" + socket,
              "--workers", workers,    "--chdir",  spec.dir, "--access-logfile",
              "-",         spec.target};
    case AppSpec::Runtime::kAsgi:
      return {kPython, "-m",        "uvicorn", "--uds",           socket,     "--workers",
              workers, "--app-dir", spec.dir,  "--no-access-log", spec.target};
  }
  return {};
}

std::vector<std::string> appEnv(const AppSpec& spec, const std::string& socket,
                                const std::string& tmp) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                  "HOME=" + spec.dir,
                                  "TMPDIR=" + tmp,
                                  "PORT=" + socket,
                                  "PYTHONUNBUFFERED=1",
                                  "PYTHONDONTWRITEBYTECODE=1",
                                  "NODE_ENV=production"};
  for (const std::string& kv : spec.env) env.push_back(kv);
  return env;
}

}  // namespace scalws::controller
