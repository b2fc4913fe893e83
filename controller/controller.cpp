// Controller: creating it, start-up and its supervisors. Re-attach and converge are in
// controller_converge.cpp, metrics and the dashboard in controller_metrics.cpp, signals
// and shutdown in controller_shutdown.cpp, the InstanceRuntime in controller_runtime.cpp.
#include "controller/controller.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "common/log.h"
#include "controller/child_process.h"
#include "controller/cpu/host_cpus.h"
#include "controller/deferred_call.h"
#include "controller/instances/ticket_secret.h"
#include "controller/metrics/metrics_prometheus.h"
#include "ipc/uv_handle.h"

#ifndef SCALWS_VERSION
#define SCALWS_VERSION "0.0.0"
#endif

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;

namespace {

// `flag`, or the program called `name` next to this executable.
Result<std::string> resolveSibling(const std::string& flag, const std::string& name,
                                   const std::string& option) {
  std::string path = flag;
  if (path.empty()) {
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) return common::errnoStatus(errno, "readlink /proc/self/exe");
    self[n] = '\0';
    path = std::filesystem::path(self).parent_path() / name;
  }
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec || ::access(absolute.c_str(), X_OK) != 0) {
    return common::notFound("no executable " + name + " at " + path + " (use " + option + " PATH)");
  }
  return absolute.string();
}

Status prepareStateDir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec)) {
    ::chmod(dir.c_str(), 0750);  // the DB holds every tenant's config
  }
  if (ec) return Status(StatusCode::kIoError, "cannot create " + dir + ": " + ec.message());
  return common::okStatus();
}

}  // namespace

Result<std::unique_ptr<Controller>> Controller::create(const ControllerOptions& options,
                                                       std::unique_ptr<Accounts> accounts) {
  SCALWS_ASSIGN_OR_RETURN(common::CpuSet host, cpu::hostCpusFromOptions(options.reserve_cpus));
  SCALWS_ASSIGN_OR_RETURN(common::CpuSet reserved, common::parseCpuList(options.reserve_cpus));
  SCALWS_RETURN_IF_ERROR(prepareStateDir(options.state_dir));
  SCALWS_ASSIGN_OR_RETURN(state::StateLock lock, state::StateLock::acquire(options.state_dir));
  SCALWS_ASSIGN_OR_RETURN(state::StateStore store,
                          state::StateStore::open(state::StateStore::dbPath(options.state_dir),
                                                  cpu::CpuAllocator(std::move(host))));
  SCALWS_ASSIGN_OR_RETURN(std::string scalwsd,
                          resolveSibling(options.scalwsd, "scalwsd", "--scalwsd"));
  std::unique_ptr<Controller> controller(new Controller(options, std::move(lock), std::move(store),
                                                        std::move(scalwsd), std::move(reserved)));
  controller->accounts_ = accounts ? std::move(accounts) : std::make_unique<SystemAccounts>();
  return controller;
}

int Controller::run(const ControllerOptions& options) {
  common::log::setProgramName("scalws-controller");
  auto fail = [](const Status& status) {
    std::fprintf(stderr, "scalws-controller: %s\n", status.message().c_str());
    return 1;
  };
  Result<std::unique_ptr<Controller>> controller = create(options);
  if (!controller.ok()) return fail(controller.status());
  Status started = (*controller)->startUp();
  if (!started.ok()) {
    fail(started);
    (*controller)->exit_code_ = 1;
    (*controller)->finishShutdown();
  }
  uv_run((*controller)->loop(), UV_RUN_DEFAULT);
  return (*controller)->exit_code_;
}

Controller::Controller(ControllerOptions options, state::StateLock lock, state::StateStore store,
                       std::string scalwsd, common::CpuSet reserved)
    : options_(std::move(options)),
      lock_(std::move(lock)),
      store_(std::move(store)),
      scalwsd_(std::move(scalwsd)),
      reserved_(std::move(reserved)) {
  uv_loop_init(&loop_);
}

Controller::~Controller() {
  supervisors_.clear();
  removed_.clear();
  shared_.reset();
  server_.reset();
  metrics_http_.reset();
  dashboard_.reset();
  handlers_.reset();
  pools_.reset();
  apps_.reset();
  uv_run(&loop_, UV_RUN_NOWAIT);  // close callbacks of what was just destroyed
  if (uv_loop_close(&loop_) != 0) LOG_WARN("event loop closed with handles still open");
}

Status Controller::startUp() {
  installSignals();
  ControllerInfo info;
  info.version = SCALWS_VERSION;
  info.pid = ::getpid();
  info.state_dir = options_.state_dir;
  info.socket_path = options_.socket_path;
  info.started_ms = wallMs();
  info.reserved_cpus = reserved_;
  info.allow_root_instances = options_.allow_root_instances;
  Result<std::string> ticket_secret = loadOrCreateHostTicketSecret(options_.state_dir);
  if (!ticket_secret.ok()) return ticket_secret.status();
  host_ticket_secret_ = std::move(ticket_secret).value();
  state_disk_ = std::make_unique<state::StateDisk>(options_.state_dir);
  state_disk_->check();
  SCALWS_RETURN_IF_ERROR(startMetrics());
  PoolManagerOptions pool_options;
  pool_options.state_dir = options_.state_dir;
  pool_options.socket_dir = options_.pool_dir;
  pool_options.php_fpm = options_.php_fpm;
  pool_options.allowed_php_fpm = options_.allowed_php_fpm;
  pool_options.log_cap = options_.pool_log_size;
  pools_ = std::make_unique<PoolManager>(&loop_, store_, pool_options);
  AppManagerOptions app_options;
  app_options.state_dir = options_.state_dir;
  app_options.socket_dir = options_.app_dir;
  app_options.limits = options_.restart;
  app_options.log_cap = options_.app_log_size;
  apps_ = std::make_unique<AppManager>(&loop_, store_, app_options);
  handlers_ =
      std::make_unique<ControlHandlers>(store_, *this, *accounts_, info, pools_.get(), apps_.get());
  handlers_->setMetrics(metrics_.get());
  handlers_->setStateDisk(state_disk_.get());
  Result<std::unique_ptr<ControlServer>> server =
      ControlServer::open(&loop_, options_.socket_path, *handlers_);
  if (!server.ok()) return server.status();
  server_ = std::move(server).value();
  SCALWS_RETURN_IF_ERROR(startDashboard());

  startShared();
  Result<std::vector<state::InstanceRecord>> all = store_.listInstances();
  if (!all.ok()) return all.status();
  for (const state::InstanceRecord& record : *all) supervisorFor(record);
  Result<state::EventRecord> event = store_.appendEvent(
      std::nullopt, state::kEventControllerStarted,
      "pid " + std::to_string(::getpid()) + ", host CPUs " + store_.allocator().host().toString());
  (void)event;
  LOG_INFO("started: state %s, socket %s, host CPUs %s, %zu instance(s)",
           options_.state_dir.c_str(), options_.socket_path.c_str(),
           store_.allocator().host().toString().c_str(), all->size());
  // Both at once: workers re-attach (they serve already) while php-fpm masters are adopted
  // or started; instances are started only once both are done, so their first requests
  // find their pools up.
  // Apps are adopted or started beside them; nothing waits for them (a route to an app
  // that is not up yet answers 502 until it is).
  apps_->startAll([](const Status&) {});
  pools_->startAll([this](const Status&) {
    pools_started_ = true;
    maybeConverge();
  });
  reattachAll();
  return common::okStatus();
}

InstanceSupervisor& Controller::supervisorFor(const state::InstanceRecord& record) {
  auto it = supervisors_.find(record.name);
  if (it != supervisors_.end()) return *it->second;
  InstanceSupervisor::Env env;
  env.loop = &loop_;
  env.store = &store_;
  env.scalwsd = scalwsd_;
  env.limits = options_.restart;
  env.metrics = metrics_.get();
  env.ticket_secret = instanceTicketSecret(host_ticket_secret_, record.name);
  env.app_dir = options_.app_dir;
  env.log_dir = options_.log_dir;
  env.shared = shared_.get();
  auto sup = std::make_unique<InstanceSupervisor>(std::move(env), record);
  InstanceSupervisor& ref = *sup;
  supervisors_[record.name] = std::move(sup);
  return ref;
}

InstanceSupervisor* Controller::find(const std::string& name) const {
  auto it = supervisors_.find(name);
  return it == supervisors_.end() ? nullptr : it->second.get();
}

// --- start-up ----------------------------------------------------------------------------

void Controller::startShared() {
  SharedListeners::Env env;
  env.loop = &loop_;
  env.store = &store_;
  // Found now, used when an address is first shared: a missing binary refuses that start.
  Result<std::string> front =
      resolveSibling(options_.front_binary, "scalws-front", "--scalws-front");
  env.options.front_binary = front.ok() ? *front : options_.front_binary;
  if (!front.ok()) LOG_WARN("%s: addresses cannot be shared", front.status().message().c_str());
  env.options.front_user = options_.front_user;
  env.options.processes = options_.front_processes;
  env.options.header_timeout_ms = options_.front_header_timeout_ms;
  env.options.max_waiting = options_.front_max_waiting;
  env.options.restart = options_.restart;
  env.instances = [this] { return instanceViews(); };
  env.push_names = [this](const std::string& instance,
                          const std::vector<ipc::SharedAddressNames>& names) {
    if (InstanceSupervisor* sup = find(instance)) sup->pushSharedNames(names);
  };
  env.ensure_user = [this]() -> Status {
    if (accounts_->lookUp(options_.front_user).ok()) return common::okStatus();
    Result<Account> made =
        accounts_->create(options_.front_user, "ScalWS fronts of shared addresses");
    if (!made.ok()) {
      return Status(made.status().code(), "cannot make user " + options_.front_user +
                                              " for the fronts: " + made.status().message());
    }
    LOG_INFO("user %s made for the fronts of shared addresses", options_.front_user.c_str());
    return common::okStatus();
  };
  shared_ = std::make_unique<SharedListeners>(std::move(env));
}

std::vector<InstanceView> Controller::instanceViews() const {
  std::vector<InstanceView> out;
  for (const auto& [name, sup] : supervisors_) {
    const std::optional<common::config::SiteConfig>& running = sup->runningSite();
    if (running) {
      out.push_back({name, *running, true});
    } else if (const std::optional<common::config::SiteConfig>& stored = sup->storedSite()) {
      out.push_back({name, *stored, false});
    }
  }
  return out;
}

ipc::Json Controller::sharedAddresses(const std::optional<std::string>& instance) const {
  if (!shared_) return ipc::Json::array();
  return instance ? shared_->describeFor(*instance) : shared_->describe();
}

}  // namespace scalws::controller
