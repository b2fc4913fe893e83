#include "worker/server/single_process_server.h"

#include <unistd.h>

#include <algorithm>

#include "common/log.h"
#include "worker/server/listen_socket.h"
#include "worker/server/loop_group.h"

namespace scalws::worker {

SingleProcessServer::SingleProcessServer(std::string config_path, SiteRuntime runtime)
    : config_path_(std::move(config_path)), runtime_(std::move(runtime)) {}

SingleProcessServer::~SingleProcessServer() {
  for (int fd : listener_fds_) ::close(fd);
  if (runtime_.access_log_fd >= 0) ::close(runtime_.access_log_fd);
}

int SingleProcessServer::run() {
  const auto& server = runtime_.snapshot->server();
  uint32_t loops = std::max<uint32_t>(1, server.workers);
  LoopGroupOptions options;
  options.listeners_per_loop.resize(loops);
  for (uint32_t i = 0; i < loops; ++i) {
    const auto& listens = runtime_.snapshot->site().listens;
    for (size_t l = 0; l < listens.size(); ++l) {
      const auto& listen = listens[l];
      common::Result<int> fd = openListenSocket(listen);
      if (!fd.ok()) {
        LOG_ERROR("%s", fd.status().message().c_str());
        return 1;
      }
      listener_fds_.push_back(*fd);
      options.listeners_per_loop[i].push_back(
          ListenerSocket{*fd, listen.port, listen.tls.has_value(), static_cast<int>(l)});
    }
  }
  options.cpus = server.cpus;
  options.access_log_fd = runtime_.access_log_fd;
  options.on_reload = [this] { reload(); };
  LoopGroup group(runtime_.snapshot, std::move(options));
  group_ = &group;
  LOG_INFO("serving %s with %u loops in one process", config_path_.c_str(), loops);
  int code = group.run();
  group_ = nullptr;
  LOG_INFO("stopped");
  return code;
}

void SingleProcessServer::reload() {
  LOG_INFO("reloading %s", config_path_.c_str());
  common::Result<SiteRuntime> next = prepareSite(config_path_, &runtime_);
  if (!next.ok()) {
    LOG_ERROR("reload refused, keeping the running config:\n%s", next.status().message().c_str());
    return;
  }
  auto refuse = [&](const char* why) {
    LOG_ERROR("reload refused: %s", why);
    if (next->access_log_fd >= 0) ::close(next->access_log_fd);
  };
  const auto& old_server = runtime_.snapshot->server();
  const auto& server = next->snapshot->server();
  if (!sameListeners(runtime_.snapshot->site(), next->snapshot->site())) {
    return refuse("listen addresses changed; single mode needs a restart for that");
  }
  if (server.mode != old_server.mode || server.workers != old_server.workers) {
    return refuse("mode or worker count changed; that needs a restart");
  }
  if (server.access_log != old_server.access_log) {
    return refuse("access_log path changed; that needs a restart in single mode");
  }
  common::Status logs = applyErrorLogSettings(server);
  if (!logs.ok()) LOG_ERROR("%s", logs.message().c_str());
  if (next->access_log_fd >= 0) ::close(next->access_log_fd);
  next->access_log_fd = runtime_.access_log_fd;
  runtime_.access_log_fd = -1;
  runtime_ = std::move(next).value();
  if (group_ != nullptr) group_->broadcastSnapshot(runtime_.snapshot);
  LOG_INFO("reloaded");
}

}  // namespace scalws::worker
