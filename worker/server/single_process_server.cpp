#include "worker/server/single_process_server.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "common/config/config_loader.h"
#include "common/log.h"
#include "common/net/listen_socket.h"
#include "worker/metrics/metrics_area.h"
#include "worker/server/cpu_binding.h"
#include "worker/server/loop_group.h"
#include "worker/server/worker_sandbox.h"
#if SCALWS_HTTP3
#include "common/net/quic_steering.h"
#endif

namespace scalws::worker {

SingleProcessServer::SingleProcessServer(std::string config_path, SiteRuntime runtime)
    : config_path_(std::move(config_path)), runtime_(std::move(runtime)) {}

SingleProcessServer::~SingleProcessServer() {
  for (int fd : listener_fds_) ::close(fd);
  if (config_fd_ >= 0) ::close(config_fd_);
  if (runtime_.access_log_fd >= 0) ::close(runtime_.access_log_fd);
}

common::Result<std::string> SingleProcessServer::readConfig() const {
  int fd = ::open(config_path_.c_str(), O_RDONLY | O_CLOEXEC);
  bool own = fd >= 0;
  if (!own) {
    int err = errno;
    struct stat st;
    if (config_fd_ < 0 || fstat(config_fd_, &st) != 0 || st.st_nlink == 0) {
      return common::errnoStatus(err, "cannot read config file \"" + config_path_ +
                                          "\" (a replaced file cannot be re-opened from "
                                          "inside the sandbox: edit it in place or restart)");
    }
    fd = config_fd_;
  }
  std::string text;
  char buf[65536];
  off_t offset = 0;
  ssize_t n;
  while ((n = ::pread(fd, buf, sizeof(buf), offset)) > 0) {
    text.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  int err = errno;
  if (own) ::close(fd);
  if (n < 0) return common::errnoStatus(err, "read " + config_path_);
  return text;
}

int SingleProcessServer::run() {
  config_fd_ = ::open(config_path_.c_str(), O_RDONLY | O_CLOEXEC);
  const auto& server = runtime_.snapshot->server();
  uint32_t loops = std::max<uint32_t>(1, server.workers);
  LoopGroupOptions options;
  options.listeners_per_loop.resize(loops);
  for (uint32_t i = 0; i < loops; ++i) {
    const auto& listens = runtime_.snapshot->site().listens;
    for (size_t l = 0; l < listens.size(); ++l) {
      const auto& listen = listens[l];
      common::Result<common::UniqueFd> fd = common::net::openListenSocket(listen);
      if (!fd.ok()) {
        LOG_ERROR("%s", fd.status().message().c_str());
        return 1;
      }
      int raw = fd->release();  // closed by the destructor with the others
      listener_fds_.push_back(raw);
      options.listeners_per_loop[i].push_back(
          ListenerSocket{raw, listen.port, listen.tls.has_value(), static_cast<int>(l)});
#if SCALWS_HTTP3
      if (!listen.http3) continue;
      // Loop i's UDP socket is its group's i-th: the steering id its connection IDs carry.
      common::Result<common::UniqueFd> udp = common::net::bindSteeredSocket(listen);
      if (!udp.ok()) {
        LOG_ERROR("%s", udp.status().message().c_str());
        return 1;
      }
      ListenerSocket quic_socket{udp->get(), listen.port, true, static_cast<int>(l)};
      quic_socket.quic = true;
      quic_socket.steering_id = static_cast<uint16_t>(i);
      listener_fds_.push_back(udp->release());
      options.listeners_per_loop[i].push_back(quic_socket);
#endif
    }
  }
  // Inside the sandbox the loops share the CPUs the process is bound to below; outside it
  // each loop thread also pins itself to one of them.
  if (server.sandbox == common::config::SandboxMode::kOff) options.loop_cpus = server.cpus;
  options.access_log_fd = runtime_.access_log_fd;
  options.on_reload = [this] { reload(); };
  // Inside the sandbox only the log files' own inodes may be opened (worker_sandbox.cpp):
  // after copytruncate this reopens the same files; after a rename it fails, says so, and
  // the lines keep going to the renamed file (none is lost).
  options.on_reopen_logs = [this] {
    common::Status reopened = reopenLogFiles(runtime_.snapshot->server(), runtime_.access_log_fd);
    if (!reopened.ok()) {
      LOG_ERROR("reopening the logs: %s", reopened.message().c_str());
    } else {
      LOG_INFO("logs reopened");
    }
  };
  common::Result<std::unique_ptr<MetricsArea>> area = MetricsArea::create(loops);
  if (!area.ok()) {
    LOG_ERROR("%s", area.status().message().c_str());
    return 1;
  }
  std::unique_ptr<MetricsArea> metrics = std::move(area).value();
  options.metrics_area = metrics.get();
  LoopGroup group(runtime_.snapshot, std::move(options));
  // Before any loop thread exists: the CPU set, Landlock and the credentials bind the
  // calling thread and what it starts afterwards.
  common::Status bound = bindCallingThread(server.cpus);
  if (!bound.ok()) LOG_WARN("%s; the loops run on any CPU", bound.message().c_str());
  common::Result<sandbox::SandboxReport> sandboxed = enterSandbox(*runtime_.snapshot, config_path_);
  if (!sandboxed.ok()) {
    LOG_ERROR("sandbox: %s", sandboxed.status().message().c_str());
    return 1;
  }
  group_ = &group;
  LOG_INFO("serving %s with %u loops in one process", config_path_.c_str(), loops);
  int code = group.run();
  group_ = nullptr;
  LOG_INFO("stopped");
  return code;
}

void SingleProcessServer::reload() {
  LOG_INFO("reloading %s", config_path_.c_str());
  common::Result<std::string> text = readConfig();
  if (!text.ok()) {
    LOG_ERROR("reload refused, keeping the running config: %s", text.status().message().c_str());
    return;
  }
  // A new limit table would be a memfd made inside the sandbox, which forbids that.
  common::Result<common::config::SiteConfig> parsed =
      common::config::loadSiteConfigString(*text, config_path_);
  if (parsed.ok() && common::config::hasLimits(*parsed)) {
    const auto& table = runtime_.caches != nullptr ? runtime_.caches->limits() : nullptr;
    if (table == nullptr || table->bytes() != parsed->limit_table) {
      LOG_ERROR(
          "reload refused: the limit table would be a new one (a limit where there was "
          "none, or another limit_table); single mode needs a restart for that");
      return;
    }
  }
  common::Result<SiteRuntime> next = prepareSiteFromText(*text, config_path_, &runtime_);
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
