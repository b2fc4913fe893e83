#include "front/front_main.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/log.h"
#include "front/front_sandbox.h"
#include "front/front_session.h"

#ifndef SCALWS_VERSION
#define SCALWS_VERSION "0.0.0"
#endif

namespace scalws::front {
namespace {

constexpr const char* kUsage =
    "usage: scalws-front --address ADDR --ipc-fd N [--attach-fd M]\n"
    "       scalws-front --sandbox-report [--user USER] [--json]\n"
    "       scalws-front --version | --help\n"
    "The controller runs one per shared address; it is not meant to be started by hand.\n";

int usageError(const std::string& message) {
  std::fprintf(stderr, "scalws-front: %s\n%s", message.c_str(), kUsage);
  return 2;
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

// The report comes from a child that really enters the sandbox and then tries what it
// must not be able to do, so it says what the kernel enforces.
int sandboxReport(const std::string& user, bool json) {
  int fds[2];
  if (::pipe(fds) != 0) return 1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    common::Result<sandbox::SandboxReport> report = enterFrontSandbox(user);
    std::string out;
    if (!report.ok()) {
      out = "error: " + report.status().message() + "\n";
    } else {
      std::vector<std::string> probes = probeFrontSandbox();
      if (json) {
        nlohmann::json j = report->toJson();
        j["probes"] = probes;
        out = j.dump(2) + "\n";
      } else {
        for (const std::string& line : report->toLines()) out += line + "\n";
        for (const std::string& line : probes) out += "probe " + line + "\n";
      }
    }
    ssize_t ignored = ::write(fds[1], out.data(), out.size());
    (void)ignored;
    _exit(report.ok() ? 0 : 1);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) {
    std::fwrite(buf, 1, static_cast<size_t>(n), stdout);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int serve(const std::string& address, int channel, int attach) {
  common::log::setProgramName("scalws-front[" + address + "]");
  uv_loop_t loop;
  uv_loop_init(&loop);
  int code = 1;
  {
    FrontSession session(&loop, address, common::UniqueFd(channel),
                         common::UniqueFd(attach >= 0 ? attach : -1));
    common::Status started = session.start();
    if (!started.ok()) {
      LOG_ERROR("cannot talk to the controller: %s", started.message().c_str());
    } else {
      uv_run(&loop, UV_RUN_DEFAULT);
      code = session.exitCode();
    }
  }
  uv_run(&loop, UV_RUN_NOWAIT);  // close callbacks of what the session still held
  uv_loop_close(&loop);
  return code;
}

}  // namespace

int frontMain(int argc, char** argv) {
  common::log::setProgramName("scalws-front");
  std::string address;
  std::string ipc_fd;
  std::string attach_fd;
  std::string user = "nobody";
  bool report = false;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("scalws-front %s\n", SCALWS_VERSION);
      return 0;
    }
    if (arg == "--address") {
      if (!value(address)) return usageError("--address needs ADDR");
    } else if (arg == "--ipc-fd") {
      if (!value(ipc_fd)) return usageError("--ipc-fd needs a number");
    } else if (arg == "--attach-fd") {
      if (!value(attach_fd)) return usageError("--attach-fd needs a number");
    } else if (arg == "--user") {
      if (!value(user)) return usageError("--user needs a USER");
    } else if (arg == "--sandbox-report") {
      report = true;
    } else if (arg == "--json") {
      json = true;
    } else {
      return usageError("unknown argument " + std::string(arg));
    }
  }
  if (report) {
    if (!address.empty() || !ipc_fd.empty() || !attach_fd.empty()) {
      return usageError("--sandbox-report goes without --address, --ipc-fd and --attach-fd");
    }
    return sandboxReport(user, json);
  }
  if (json) return usageError("--json goes with --sandbox-report");
  int channel = -1;
  int attach = -1;
  if (address.empty() || !parseFd(ipc_fd, channel)) {
    return usageError("needs --address ADDR and --ipc-fd N (N >= 3)");
  }
  if (!attach_fd.empty() && (!parseFd(attach_fd, attach) || attach == channel)) {
    return usageError("--attach-fd needs a number >= 3, other than --ipc-fd");
  }
  return serve(address, channel, attach);
}

}  // namespace scalws::front
