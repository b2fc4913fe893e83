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

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR2};

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
  std::signal(SIGPIPE, SIG_IGN);
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    uv_signal_init(&loop_, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(&signals_[i], &Controller::onSignal, kSignals[i]);
  }
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

void Controller::reattachAll() {
  // The fronts first: the workers' channels are paired with the ends they hold.
  shared_->reattach([this] { reattachWorkers(); });
}

void Controller::reattachWorkers() {
  Result<std::vector<state::WorkerRecord>> rows = store_.listWorkers(std::nullopt);
  if (!rows.ok()) {
    LOG_ERROR("cannot read the workers table: %s", rows.status().message().c_str());
    rows = std::vector<state::WorkerRecord>();
  }
  std::map<std::string, std::vector<state::WorkerRecord>> by_instance;
  for (const state::WorkerRecord& row : *rows) by_instance[row.instance].push_back(row);
  start_pending_ = supervisors_.size();
  if (start_pending_ == 0) {
    reattached_ = true;
    return maybeConverge();
  }
  for (auto& [name, sup] : supervisors_) {
    sup->reattach(by_instance[name], [this](const Status&) {
      if (--start_pending_ != 0) return;
      reattached_ = true;
      maybeConverge();
    });
  }
}

void Controller::maybeConverge() {
  if (reattached_ && pools_started_ && !shutting_down_ && !converging_) {
    converging_ = true;
    converge();
  }
}

void Controller::converge() {
  std::vector<InstanceSupervisor*> todo;
  for (auto& [name, sup] : supervisors_) todo.push_back(sup.get());
  start_pending_ = 0;
  auto one_done = [this](const Status&) {
    if (--start_pending_ == 0 && !shutting_down_) {
      ready_ = true;
      shared_->settle();
      notifySystemd("READY=1");
      notifyStatus();
      LOG_INFO("converged on the state DB");
    }
  };
  for (InstanceSupervisor* sup : todo) {
    Result<state::InstanceRecord> record = store_.getInstance(sup->record().name);
    if (!record.ok()) continue;
    bool want = record->desired == state::DesiredState::kRunning;
    auto st = sup->state();
    if (want && st != InstanceSupervisor::State::kRunning) {
      ++start_pending_;
      sup->start(nullptr, one_done);
    } else if (!want && sup->liveProcesses() > 0) {
      ++start_pending_;
      sup->stop(one_done);
    }
  }
  if (start_pending_ == 0) {
    ++start_pending_;
    one_done(common::okStatus());
  }
}

void Controller::notifyStatus() {
  size_t running = 0;
  for (auto& [name, sup] : supervisors_) {
    if (sup->state() == InstanceSupervisor::State::kRunning) ++running;
  }
  notifySystemd("STATUS=" + std::to_string(supervisors_.size()) + " instance(s), " +
                std::to_string(running) + " running");
}

// --- metrics -----------------------------------------------------------------------------

Status Controller::startMetrics() {
  metrics_ = std::make_unique<MetricsCollector>(store_, MetricsCollector::Options());
  metrics_timer_ = new uv_timer_t;
  uv_timer_init(&loop_, metrics_timer_);
  metrics_timer_->data = this;
  uv_timer_start(
      metrics_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Controller*>(t->data);
        if (self->state_disk_) self->state_disk_->check();
        self->metrics_->tick();
      },
      1000, 1000);
  if (options_.metrics_listen.empty()) return common::okStatus();
  Result<std::unique_ptr<MetricsHttpServer>> http = MetricsHttpServer::open(
      &loop_, options_.metrics_listen, [this] { return renderPrometheusText(); });
  if (!http.ok()) return http.status();
  metrics_http_ = std::move(http).value();
  LOG_INFO("Prometheus metrics at http://%s/metrics", options_.metrics_listen.c_str());
  return common::okStatus();
}

Status Controller::startDashboard() {
  if (options_.dashboard_listen.empty()) return common::okStatus();
  std::optional<common::auth::Htpasswd> users;
  if (!options_.dashboard_auth.empty()) {
    Result<common::auth::Htpasswd> loaded = common::auth::Htpasswd::load(options_.dashboard_auth);
    if (!loaded.ok())
      return common::invalidArgument("--dashboard-auth: " + loaded.status().message());
    users = std::move(loaded).value();
  }
  Result<std::unique_ptr<dashboard::Dashboard>> d = dashboard::Dashboard::open(
      &loop_, options_.dashboard_listen, std::move(users), *handlers_, store_);
  if (!d.ok()) return d.status();
  dashboard_ = std::move(d).value();
  LOG_INFO("dashboard at http://%s/%s", options_.dashboard_listen.c_str(),
           options_.dashboard_auth.empty() ? "" : " (credentials from --dashboard-auth)");
  return common::okStatus();
}

std::string Controller::renderPrometheusText() const {
  std::vector<PrometheusInstance> list;
  for (auto& [name, total] : metrics_->totals()) {
    list.push_back({name, total, metrics_->liveWorkers(name), metrics_->upstreamTotals(name)});
  }
  return renderPrometheus(list) + (shared_ ? shared_->prometheus() : "");
}

// --- shutdown ----------------------------------------------------------------------------

void Controller::onSignal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<Controller*>(handle->data);
  if (signum == SIGHUP) {
    LOG_INFO("SIGHUP ignored: instances are reloaded with `scalwsctl instance reload`");
    return;
  }
  if (self->shutting_down_) {
    LOG_WARN("signal %d during shutdown: leaving now; the workers finish on their own", signum);
    self->beginShutdown(ShutdownMode::kLeaveInstances);
    return;
  }
  std::optional<std::string> job = signum == SIGTERM ? systemdJobType() : std::nullopt;
  ShutdownMode mode = shutdownModeFor(signum, job);
  LOG_INFO("signal %d%s: shutting down, %s", signum,
           job ? (" (systemd job " + *job + ")").c_str() : "",
           std::string(shutdownModeName(mode)).c_str());
  self->beginShutdown(mode);
}

void Controller::beginShutdown(ShutdownMode mode) {
  bool again = shutting_down_;
  shutting_down_ = true;
  if (!again) {
    notifySystemd("STOPPING=1");
    if (server_) server_->close();
  }
  if (mode == ShutdownMode::kLeaveInstances) {
    for (auto& [name, sup] : supervisors_) sup->leave();
    if (shared_) shared_->leaveAll();
    if (pools_) pools_->leave();
    if (apps_) apps_->leave();
    deferCall(&loop_, [this] { finishShutdown(); });
    return;
  }
  if (again) return;
  // The instances first, so their requests in flight finish on PHP; then the fronts of
  // shared addresses (every instance there is gone), then the pools.
  auto stop_pools = [this] {
    if (shared_) {
      auto stopped = std::make_shared<bool>(false);
      shared_->stopAll([this, stopped] {
        if (*stopped) return;
        *stopped = true;
        stopPools();
      });
      return;
    }
    stopPools();
  };
  stop_pending_ = supervisors_.size();
  if (stop_pending_ == 0) return deferCall(&loop_, stop_pools);
  for (auto& [name, sup] : supervisors_) {
    sup->stop([this, stop_pools](const Status&) {
      if (--stop_pending_ == 0) deferCall(&loop_, stop_pools);
    });
  }
}

void Controller::stopPools() {
  if (!pools_) return finishShutdown();
  pools_->stopAll([this](const Status&) {
    if (!apps_) return deferCall(&loop_, [this] { finishShutdown(); });
    apps_->stopAll([this](const Status&) { deferCall(&loop_, [this] { finishShutdown(); }); });
  });
}

void Controller::finishShutdown() {
  if (signals_[0].data == nullptr) return;  // done already
  Result<state::EventRecord> event = store_.appendEvent(
      std::nullopt, state::kEventControllerStopped, "pid " + std::to_string(::getpid()));
  (void)event;
  for (uv_signal_t& s : signals_) {
    s.data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&s), nullptr);
  }
  if (server_) server_->close();
  if (metrics_http_) metrics_http_->close();
  if (dashboard_) dashboard_->close();
  if (metrics_timer_ != nullptr) {
    ipc::closeAndDelete(metrics_timer_);
  }
  // Whatever still runs was left on purpose (leave) or is being killed: let go of it.
  for (auto& [name, sup] : supervisors_) sup->leave();
  if (shared_) shared_->leaveAll();
  if (pools_) pools_->leave();
  if (apps_) apps_->leave();
  supervisors_.clear();
  removed_.clear();
  shared_.reset();  // after the supervisors, which point at it
  LOG_INFO("stopped");
}

// --- InstanceRuntime ---------------------------------------------------------------------

void Controller::instanceStored(const state::InstanceRecord& record) {
  InstanceSupervisor* sup = find(record.name);
  if (sup == nullptr) {
    supervisorFor(record);
  } else {
    sup->setRecord(record);
  }
  // A stopped instance's names are claimed from its stored config: the fronts hear.
  if (shared_) shared_->refresh();
}

namespace {

Status gone(const std::string& name) {
  return common::notFound("no instance named '" + name + "'");
}

}  // namespace

void Controller::start(const std::string& name, Commit commit, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  if (shutting_down_) {
    return deferCall(&loop_, [done] {
      done(Status(StatusCode::kUnavailable, "the controller is shutting down"));
    });
  }
  sup->start(std::move(commit), [this, done](const Status& s) {
    notifyStatus();
    done(s);
  });
}

void Controller::stop(const std::string& name, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->stop([this, done](const Status& s) {
    notifyStatus();
    done(s);
  });
}

void Controller::restart(const std::string& name, Commit commit, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->restart(std::move(commit), done);
}

void Controller::reload(const std::string& name, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->reload(std::move(done));
}

void Controller::remove(const std::string& name, Commit commit, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->stop([this, name, commit, done](const Status& stopped) {
    if (!stopped.ok()) return done(stopped);
    Status removed = commit();
    if (!removed.ok()) return done(removed);
    auto it = supervisors_.find(name);
    if (it != supervisors_.end()) {
      // Freed on the next turn: this callback runs inside the supervisor.
      removed_[name] = std::move(it->second);
      supervisors_.erase(it);
      deferCall(&loop_, [this, name] { removed_.erase(name); });
    }
    if (metrics_) metrics_->forget(name);
    if (shared_) shared_->refresh();  // its names are nobody's now
    LOG_INFO("instance %s removed", name.c_str());
    done(common::okStatus());
  });
}

std::string Controller::runtimeState(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup == nullptr ? "stopped" : std::string(sup->stateName());
}

size_t Controller::processCount(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup == nullptr ? 0 : sup->liveProcesses();
}

ipc::Json Controller::processes(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup == nullptr ? ipc::Json::array() : sup->processes();
}

std::optional<common::config::SiteConfig> Controller::runningSite(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return std::nullopt;
  return sup->runningSite();
}

std::optional<std::vector<ipc::PhpPoolGrant>> Controller::runningPools(
    const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr || !sup->runningSite()) return std::nullopt;
  return sup->runningPools();
}

std::optional<std::vector<ipc::AppGrant>> Controller::runningApps(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr || !sup->runningSite()) return std::nullopt;
  return sup->runningApps();
}

void Controller::purgeCache(const std::string& name, const ipc::CachePurge& purge, PurgeDone done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->purgeCache(purge, std::move(done));
}

void Controller::reopenLogs(const std::string& name, Done done) {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return deferCall(&loop_, [done, name] { done(gone(name)); });
  sup->reopenLogs(std::move(done));
}

std::vector<ipc::CacheFigures> Controller::cacheFigures(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  if (sup == nullptr) return {};
  return sup->cacheFigures();
}

bool Controller::reloadPending(const std::string& name) const {
  InstanceSupervisor* sup = find(name);
  return sup != nullptr && sup->runningConfigDiffers();
}

}  // namespace scalws::controller
