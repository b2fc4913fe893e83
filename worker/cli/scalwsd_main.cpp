#include "worker/cli/scalwsd_main.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "common/config/config_loader.h"
#include "common/log.h"
#include "worker/server/multi_process_server.h"
#include "worker/server/single_process_server.h"
#include "worker/server/site_runtime.h"

#ifndef SCALWS_VERSION
#define SCALWS_VERSION "0.0.0"
#endif

namespace scalws::worker {
namespace {

constexpr const char* kUsage =
    "usage: scalwsd --config FILE        serve a site (standalone)\n"
    "       scalwsd --check-config FILE  validate a config and exit (0 valid, 1 invalid)\n"
    "       scalwsd --version            print the version\n"
    "       scalwsd --help               this text\n";

int usageError(const char* message) {
  std::fprintf(stderr, "scalwsd: %s\n%s", message, kUsage);
  return 2;
}

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

}  // namespace

int scalwsdMain(int argc, char** argv) {
  std::string config;
  std::string check;
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
      std::printf("scalwsd %s\n", SCALWS_VERSION);
      return 0;
    }
    if (arg == "--config" || arg == "-c") {
      if (!value(config)) return usageError("--config needs a FILE");
    } else if (arg == "--check-config" || arg == "-t") {
      if (!value(check)) return usageError("--check-config needs a FILE");
    } else {
      std::string message = "unknown argument " + std::string(arg);
      return usageError(message.c_str());
    }
  }
  if (!check.empty()) return checkConfig(check);
  if (config.empty()) return usageError("nothing to do: give --config FILE");
  return serve(config);
}

}  // namespace scalws::worker
