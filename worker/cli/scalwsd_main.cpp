#include "worker/cli/scalwsd_main.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/build_info.h"
#include "common/config/config_loader.h"
#include "common/log.h"
#include "worker/server/instance_server.h"
#include "worker/server/multi_process_server.h"
#include "worker/server/single_process_server.h"
#include "worker/server/site_runtime.h"
#include "worker/server/worker_sandbox.h"

namespace scalws::worker {
namespace {

constexpr const char* kUsage =
    "usage: scalwsd --config FILE        serve a site (standalone)\n"
    "       scalwsd --check-config FILE  validate a config and exit (0 valid, 1 invalid)\n"
    "       scalwsd --sandbox-report --config FILE [--json]\n"
    "                                    apply the site's sandbox in a child process and\n"
    "                                    print what is in force\n"
    "       scalwsd --instance NAME --ipc-fd N [--attach-fd M]\n"
    "                                    serve an instance for scalws-controller (which\n"
    "                                    starts it so; not for use by hand)\n"
    "       scalwsd --version            print the version, the commit and how it was built\n"
    "       scalwsd --help               this text\n";

// Three lines: "scalwsd 0.1.0", the commit, and how it was built (build type, compiler,
// PGO, LTO, sanitizers, metrics), so a benchmark or a bug report names the binary exactly.
int printVersion() {
  std::printf("scalwsd %s\ncommit %s\nbuilt %s\n", common::build_info::version(),
              common::build_info::commit(), common::build_info::flavour());
  return 0;
}

int usageError(const char* message) {
  std::fprintf(stderr, "scalwsd: %s\n%s", message, kUsage);
  return 2;
}

// Builds everything serving would (docroots opened, handlers made) without binding:
// a missing root or an unreadable certificate fails the check, not the start.
int checkConfig(const std::string& path) {
  auto config = common::config::loadSiteConfigFile(path);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 1;
  }
  // What serving would load too: handlers, certificates and keys (named when refused).
  auto snapshot = ConfigSnapshot::build(std::move(config).value());
  if (!snapshot.ok()) {
    std::fprintf(stderr, "%s\n", snapshot.status().message().c_str());
    return 1;
  }
  std::printf("%s: ok\n", path.c_str());
  return 0;
}

// The report comes from a child that really applies the policy, so it says what the
// kernel enforces, not what we hope it would.
int sandboxReport(const std::string& path, bool json) {
  common::Result<SiteRuntime> runtime = prepareSite(path, nullptr);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().message().c_str());
    return 1;
  }
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t pid = fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto report = enterSandbox(*runtime->snapshot, path);
    std::string out;
    if (!report.ok()) {
      out = "error: " + report.status().message() + "\n";
    } else if (json) {
      out = report->toJson().dump(2) + "\n";
    } else {
      for (const std::string& line : report->toLines()) out += line + "\n";
    }
    ssize_t ignored = ::write(fds[1], out.data(), out.size());
    (void)ignored;
    _exit(report.ok() ? 0 : 1);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) fwrite(buf, 1, static_cast<size_t>(n), stdout);
  ::close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int serve(const std::string& path) {
  common::log::setProgramName("scalwsd");
  common::Result<SiteRuntime> runtime = prepareSite(path, nullptr);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().message().c_str());
    return 1;
  }
  const auto& server = runtime->snapshot->server();
  common::Status logs = applyErrorLogSettings(server);
  if (!logs.ok()) {
    std::fprintf(stderr, "%s\n", logs.message().c_str());
    return 1;
  }
  if (server.mode == common::config::WorkerMode::kSingle) {
    SingleProcessServer single(path, std::move(runtime).value());
    return single.run();
  }
  MultiProcessServer multi(path, std::move(runtime).value());
  return multi.run();
}

// An inherited descriptor number: a decimal >= 3 (0-2 are the standard streams).
bool parseFd(const std::string& text, int& out) {
  if (text.empty() || text.size() > 9) return false;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value < 3) return false;
  out = value;
  return true;
}

}  // namespace

int scalwsdMain(int argc, char** argv) {
  common::log::setProgramName("scalwsd");
  std::string config;
  std::string check;
  std::string instance;
  std::string ipc_fd;
  std::string attach_fd;
  bool report = false;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string& out) -> bool {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version" || arg == "-v") {
      return printVersion();
    }
    if (arg == "--config" || arg == "-c") {
      if (!value(config)) return usageError("--config needs a FILE");
    } else if (arg == "--instance") {
      if (!value(instance)) return usageError("--instance needs a NAME");
    } else if (arg == "--ipc-fd") {
      if (!value(ipc_fd)) return usageError("--ipc-fd needs a number");
    } else if (arg == "--attach-fd") {
      if (!value(attach_fd)) return usageError("--attach-fd needs a number");
    } else if (arg == "--sandbox-report") {
      report = true;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--check-config" || arg == "-t") {
      if (!value(check)) return usageError("--check-config needs a FILE");
    } else {
      std::string message = "unknown argument " + std::string(arg);
      return usageError(message.c_str());
    }
  }
  if (!instance.empty() || !ipc_fd.empty() || !attach_fd.empty()) {
    int channel = -1;
    int attach = -1;
    if (instance.empty() || !parseFd(ipc_fd, channel)) {
      return usageError("instance mode needs --instance NAME and --ipc-fd N (N >= 3)");
    }
    if (!attach_fd.empty() && (!parseFd(attach_fd, attach) || attach == channel)) {
      return usageError("--attach-fd needs a number >= 3, other than --ipc-fd");
    }
    if (!config.empty() || !check.empty() || report || json) {
      return usageError("--instance goes without --config, --check-config or --sandbox-report");
    }
    return runInstanceWorker(instance, channel, attach);
  }
  if (!check.empty()) return checkConfig(check);
  if (config.empty()) return usageError("nothing to do: give --config FILE");
  if (report) return sandboxReport(config, json);
  if (json) return usageError("--json goes with --sandbox-report");
  return serve(config);
}

}  // namespace scalws::worker
