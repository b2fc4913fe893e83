#include "controller/ctl/scalwsctl_main.h"

#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/printable.h"
#include "controller/ctl/ctl_command.h"
#include "controller/ctl/ctl_output.h"
#include "ipc/blocking_client.h"

#ifndef SCALWS_VERSION
#define SCALWS_VERSION "0.0.0"
#endif

namespace scalws::ctl {
namespace {

constexpr size_t kMaxConfigBytes = 512 * 1024;  // well inside one 1 MiB frame

// Messages come from the controller, and some from workers through it: escaped.
int failed(const std::string& message) {
  std::fprintf(stderr, "scalwsctl: %s\n", common::printable(message).c_str());
  return 1;
}

// The file's text and its absolute path (relative paths inside it resolve against it).
common::Status readConfig(const std::string& file, std::string& text, std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(file.c_str(), resolved) == nullptr) {
    return common::errnoStatus(errno, "cannot read " + file);
  }
  std::ifstream in(resolved, std::ios::binary);
  if (!in) return common::errnoStatus(errno, "cannot read " + file);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (buf.str().size() > kMaxConfigBytes) {
    return common::invalidArgument(file + " is over " + std::to_string(kMaxConfigBytes / 1024) +
                                   " KiB");
  }
  text = buf.str();
  path = resolved;
  return common::okStatus();
}

}  // namespace

int scalwsctlMain(const std::vector<std::string>& args, const char* env_socket) {
  common::Result<CtlCommand> cmd = parseCtlArgs(args, env_socket);
  if (!cmd.ok()) {
    std::fprintf(stderr, "scalwsctl: %s\n%s", cmd.status().message().c_str(), kCtlUsage);
    return 2;
  }
  if (cmd->help) {
    std::fputs(kCtlUsage, stdout);
    return 0;
  }
  if (cmd->version) {
    std::printf("scalwsctl %s\n", SCALWS_VERSION);
    return 0;
  }
  if (!cmd->config_file.empty()) {
    std::string text;
    std::string path;
    common::Status read = readConfig(cmd->config_file, text, path);
    if (!read.ok()) return failed(read.message());
    cmd->args["config"] = text;
    cmd->args["config_path"] = path;
  }
  common::Result<ipc::BlockingClient> client =
      ipc::BlockingClient::connect(cmd->socket, std::chrono::milliseconds(5000));
  if (!client.ok()) {
    return failed("cannot reach the controller at " + cmd->socket + ": " +
                  client.status().message());
  }
  common::Result<ipc::Json> result = client->call(cmd->op, cmd->args, cmd->timeout());
  if (!result.ok()) return failed(result.status().message());
  if (cmd->json) {
    // ASCII only: a worker's string cannot reach the terminal as a C1 control either.
    std::printf("%s\n", result->dump(2, ' ', true).c_str());
  } else {
    std::fputs(renderResult(cmd->op, *result).c_str(), stdout);
  }
  return 0;
}

}  // namespace scalws::ctl
