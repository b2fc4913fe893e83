#include "worker/server/multi_process_server.h"

#include <poll.h>
#include <sched.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/log.h"
#include "common/net/listen_socket.h"
#include "worker/server/cpu_binding.h"
#include "worker/server/loop_group.h"
#include "worker/server/worker_sandbox.h"
#if SCALWS_HTTP3
#include "common/net/quic_steering.h"
#endif

namespace scalws::worker {
namespace {

constexpr uint64_t kStableAfterMs = 10'000;  // a child up this long resets its crash count
constexpr uint64_t kFirstBackoffMs = 100;
constexpr uint64_t kMaxBackoffMs = 30'000;
constexpr uint64_t kKillGraceMs = 5'000;  // after shutdown_timeout, before SIGKILL
// Metrics slots: enough for several generations of the largest worker count to overlap
// during reloads; untouched slots cost address space only.
constexpr size_t kMetricsSlots = 2048;

sigset_t handledSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGCHLD);
  return set;
}

}  // namespace

MultiProcessServer::MultiProcessServer(std::string config_path, SiteRuntime runtime)
    : config_path_(std::move(config_path)), runtime_(std::move(runtime)) {}

MultiProcessServer::~MultiProcessServer() {
  for (auto& [address, fds] : listeners_) {
    for (int fd : fds) ::close(fd);
  }
  for (auto& [address, group] : quic_groups_) {
    for (int fd : group.fds) ::close(fd);
  }
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (runtime_.access_log_fd >= 0) ::close(runtime_.access_log_fd);
}

uint64_t MultiProcessServer::nowMs() const {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

common::Status MultiProcessServer::openListeners(const common::config::SiteConfig& site,
                                                 uint32_t workers) {
  std::map<std::string, std::vector<int>> next;
  std::vector<int> fresh;
  for (const auto& listen : site.listens) {
    std::vector<int>& fds = next[listen.address];
    auto old = listeners_.find(listen.address);
    for (uint32_t i = 0; i < workers; ++i) {
      if (old != listeners_.end() && i < old->second.size()) {
        fds.push_back(old->second[i]);  // same queue, so nothing waiting in it is lost
        continue;
      }
      common::Result<common::UniqueFd> fd = common::net::openListenSocket(listen);
      if (!fd.ok()) {
        for (int f : fresh) ::close(f);  // the running set stays as it was
        return fd.status();
      }
      int raw = fd->release();  // owned by listeners_ from here
      fresh.push_back(raw);
      fds.push_back(raw);
    }
  }
  for (auto& [address, fds] : listeners_) {
    auto kept = next.find(address);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (kept == next.end() || i >= kept->second.size()) ::close(fds[i]);
    }
  }
  listeners_ = std::move(next);
  return common::okStatus();
}

common::Result<MultiProcessServer::QuicPlan> MultiProcessServer::planQuicSockets(
    const common::config::SiteConfig& site, uint32_t workers) {
  QuicPlan plan;
#if SCALWS_HTTP3
  for (const auto& listen : site.listens) {
    if (!listen.http3) continue;
    std::vector<uint16_t>& ids = plan.chosen[listen.address];
    auto group = quic_groups_.find(listen.address);
    size_t size = 0;
    if (group != quic_groups_.end()) {
      size = group->second.fds.size();
      for (size_t i = 0; i < size && ids.size() < workers; ++i) {
        if (group->second.generation[i] == 0) ids.push_back(static_cast<uint16_t>(i));
      }
    }
    // New sockets join the end of the group (and leave it from the end if the plan is
    // dropped, so no socket before them moves). A group's program covers them as they join.
    std::vector<common::UniqueFd>& fresh = plan.bound[listen.address];
    while (ids.size() < workers) {
      if (size + fresh.size() >= common::net::kMaxSteeringSockets) {
        return common::internalError(listen.address + " (UDP): more than " +
                                     std::to_string(common::net::kMaxSteeringSockets) +
                                     " sockets for the generations still running");
      }
      common::Result<common::UniqueFd> fd = common::net::bindUdpSocket(listen);
      if (!fd.ok()) return fd.status();
      ids.push_back(static_cast<uint16_t>(size + fresh.size()));
      fresh.push_back(std::move(fd).value());
    }
  }
#else
  (void)site, (void)workers;
#endif
  return plan;
}

void MultiProcessServer::applyQuicPlan(QuicPlan plan, uint64_t generation) {
#if SCALWS_HTTP3
  for (auto& [address, group] : quic_groups_) {
    if (plan.chosen.count(address) != 0) continue;
    // No longer served: the parent's copies go (a draining child keeps its own).
    for (int fd : group.fds) ::close(fd);
  }
  std::erase_if(quic_groups_, [&](const auto& g) { return plan.chosen.count(g.first) == 0; });
  for (auto& [address, ids] : plan.chosen) {
    QuicGroup& group = quic_groups_[address];
    for (common::UniqueFd& fd : plan.bound[address]) {
      group.fds.push_back(fd.release());
      group.generation.push_back(0);
    }
    for (uint16_t id : ids) group.generation[id] = generation;
    group.current = ids;
    common::Status steered =
        common::net::attachProgram(group.fds[0], common::net::generationSteeringProgram(ids));
    if (!steered.ok()) LOG_ERROR("%s (UDP): %s", address.c_str(), steered.message().c_str());
  }
#else
  (void)plan, (void)generation;
#endif
}

void MultiProcessServer::releaseQuicSockets(uint64_t generation) {
  for (auto& [address, group] : quic_groups_) {
    for (uint64_t& g : group.generation) {
      if (g == generation) g = 0;
    }
  }
}

int MultiProcessServer::run() {
  const auto& server = runtime_.snapshot->server();
  workers_ = std::max<uint32_t>(1, server.workers);
  sigset_t set = handledSignals();
  sigprocmask(SIG_BLOCK, &set, nullptr);
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) {
    LOG_ERROR("signalfd: %s", strerror(errno));
    return 1;
  }
  common::Status sandbox_ok = preflightSandbox(*runtime_.snapshot, config_path_);
  if (!sandbox_ok.ok()) {
    LOG_ERROR("sandbox: %s", sandbox_ok.message().c_str());
    return 1;
  }
  common::Result<QuicPlan> quic = planQuicSockets(runtime_.snapshot->site(), workers_);
  common::Status opened =
      quic.ok() ? openListeners(runtime_.snapshot->site(), workers_) : quic.status();
  if (!opened.ok()) {
    LOG_ERROR("%s", opened.message().c_str());
    return 1;
  }
  applyQuicPlan(std::move(quic).value(), generation_);
  common::Result<std::unique_ptr<MetricsArea>> area = MetricsArea::create(kMetricsSlots, false);
  if (!area.ok()) {
    LOG_ERROR("%s", area.status().message().c_str());
    return 1;
  }
  metrics_ = std::move(area).value();
  for (size_t i = kMetricsSlots; i > 0; --i) free_metrics_slots_.push_back(i - 1);
  slots_.assign(workers_, Slot{});
  for (uint32_t i = 0; i < workers_; ++i) spawn(i);
  LOG_INFO("serving %s with %u worker processes", config_path_.c_str(), workers_);

  uint64_t kill_at = 0;
  while (!(stopping_ && children_.empty())) {
    int timeout = -1;
    uint64_t now = nowMs();
    for (const Slot& s : slots_) {
      if (s.restart_at_ms != 0) {
        int wait = static_cast<int>(s.restart_at_ms > now ? s.restart_at_ms - now : 0);
        timeout = timeout < 0 ? wait : std::min(timeout, wait);
      }
    }
    if (kill_at != 0) {
      int wait = static_cast<int>(kill_at > now ? kill_at - now : 0);
      timeout = timeout < 0 ? wait : std::min(timeout, wait);
    }
    pollfd pfd{signal_fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, timeout);
    if (r < 0 && errno != EINTR) {
      LOG_ERROR("poll: %s", strerror(errno));
      break;
    }
    signalfd_siginfo info;
    while (::read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
      switch (info.ssi_signo) {
        case SIGCHLD:
          break;  // reaped below
        case SIGHUP:
          if (!stopping_) reload();
          break;
        case SIGUSR1:
          if (!stopping_) reopenLogs();
          break;
        default:
          if (!stopping_) {
            LOG_INFO("signal %u: stopping workers gracefully", info.ssi_signo);
            stopping_ = true;
            stopAll();
            kill_at = nowMs() + runtime_.snapshot->server().shutdown_timeout + kKillGraceMs;
          }
          break;
      }
    }
    reapChildren();
    now = nowMs();
    if (kill_at != 0 && now >= kill_at) {
      for (const Child& c : children_) ::kill(c.pid, SIGKILL);
      kill_at = 0;
    }
    for (uint32_t i = 0; i < slots_.size() && !stopping_; ++i) {
      if (slots_[i].restart_at_ms != 0 && now >= slots_[i].restart_at_ms) {
        slots_[i].restart_at_ms = 0;
        spawn(i);
      }
    }
  }
  LOG_INFO("all workers stopped");
  return 0;
}

size_t MultiProcessServer::takeMetricsSlot() {
  if (free_metrics_slots_.empty()) {
    LOG_WARN("out of metrics slots: a worker shares slot 0 and its counts may be off");
    return 0;
  }
  size_t slot = free_metrics_slots_.back();
  free_metrics_slots_.pop_back();
  metrics_->claim(slot);
  return slot;
}

pid_t MultiProcessServer::spawn(uint32_t index) {
  size_t slot = takeMetricsSlot();
  pid_t pid = ::fork();
  if (pid < 0) {
    LOG_ERROR("fork: %s", strerror(errno));
    slots_[index].restart_at_ms = nowMs() + kFirstBackoffMs;
    free_metrics_slots_.push_back(slot);
    return -1;
  }
  if (pid == 0) runChild(index, slot);
  children_.push_back(Child{pid, index, slot, generation_, nowMs()});
  return pid;
}

void MultiProcessServer::runChild(uint32_t index, size_t metrics_slot) {
  sigset_t set = handledSignals();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::close(signal_fd_);
  LoopGroupOptions options;
  options.listeners_per_loop.resize(1);
  const auto& listens = runtime_.snapshot->site().listens;
  for (size_t l = 0; l < listens.size(); ++l) {
    const auto& listen = listens[l];
    auto it = listeners_.find(listen.address);
    if (it == listeners_.end()) continue;
    for (uint32_t i = 0; i < it->second.size(); ++i) {
      if (i == index) {
        options.listeners_per_loop[0].push_back(ListenerSocket{
            it->second[i], listen.port, listen.tls.has_value(), static_cast<int>(l)});
      } else {
        ::close(it->second[i]);  // another worker's queue
      }
    }
    auto quic = quic_groups_.find(listen.address);
    if (quic == quic_groups_.end()) continue;
    const QuicGroup& group = quic->second;
    const uint16_t own = group.current[index];
    for (size_t i = 0; i < group.fds.size(); ++i) {
      if (i == own) {
        ListenerSocket udp{group.fds[i], listen.port, true, static_cast<int>(l)};
        udp.quic = true;
        udp.steering_id = own;
        options.listeners_per_loop[0].push_back(udp);
      } else {
        ::close(group.fds[i]);  // another worker's socket (the parent keeps it in the group)
      }
    }
  }
  options.access_log_fd = runtime_.access_log_fd;
  options.metrics_area = metrics_.get();
  options.metrics_first_slot = metrics_slot;
  int code = 0;
  {
    LoopGroup group(runtime_.snapshot, std::move(options));  // opens what /proc it needs
    // Bound before the sandbox, which refuses sched_setaffinity.
    std::vector<uint32_t> cpus = cpusForMultiWorker(runtime_.snapshot->server().cpus, index);
    common::Status bound = bindCallingThread(cpus);
    if (!bound.ok()) LOG_WARN("worker %u: %s; it runs on any CPU", index, bound.message().c_str());
    common::Result<sandbox::SandboxReport> sandboxed =
        enterSandbox(*runtime_.snapshot, config_path_);
    if (!sandboxed.ok()) {
      LOG_ERROR("worker %u: sandbox: %s", index, sandboxed.status().message().c_str());
      _exit(1);
    }
    code = group.run();
  }
  _exit(code);
}

void MultiProcessServer::reapChildren() {
  while (true) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    auto it = std::find_if(children_.begin(), children_.end(),
                           [pid](const Child& c) { return c.pid == pid; });
    if (it == children_.end()) continue;
    Child child = *it;
    children_.erase(it);
    // Its counts stay in the totals; the slot is clean for the next process.
    metrics_->retire(child.metrics_slot);
    free_metrics_slots_.push_back(child.metrics_slot);
    if (child.generation != generation_ &&
        std::none_of(children_.begin(), children_.end(),
                     [&](const Child& c) { return c.generation == child.generation; })) {
      releaseQuicSockets(child.generation);
    }
    if (stopping_ || child.generation != generation_) continue;  // asked to go
    uint64_t now = nowMs();
    Slot& slot = slots_[child.index];
    slot.crashes = now - child.started_ms >= kStableAfterMs ? 1 : slot.crashes + 1;
    uint64_t backoff = kFirstBackoffMs;
    for (uint32_t i = 1; i < slot.crashes && backoff < kMaxBackoffMs; ++i) backoff *= 2;
    backoff = std::min(backoff, kMaxBackoffMs);
    if (WIFSIGNALED(status)) {
      LOG_ERROR("worker %u (pid %d) killed by signal %d; restarting in %llu ms", child.index, pid,
                WTERMSIG(status), static_cast<unsigned long long>(backoff));
    } else {
      LOG_ERROR("worker %u (pid %d) exited with %d; restarting in %llu ms", child.index, pid,
                WEXITSTATUS(status), static_cast<unsigned long long>(backoff));
    }
    // The first restart is immediate: a single crash must not cost a gap in service.
    slot.restart_at_ms = slot.crashes <= 1 ? now : now + backoff;
  }
}

void MultiProcessServer::reload() {
  LOG_INFO("reloading %s", config_path_.c_str());
  common::Result<SiteRuntime> next = prepareSite(config_path_, &runtime_);
  if (!next.ok()) {
    LOG_ERROR("reload refused, keeping the running config:\n%s", next.status().message().c_str());
    return;
  }
  const auto& server = next->snapshot->server();
  if (server.mode != common::config::WorkerMode::kMulti) {
    LOG_ERROR("reload refused: changing the worker mode needs a restart");
    if (next->access_log_fd >= 0) ::close(next->access_log_fd);
    return;
  }
  uint32_t workers = std::max<uint32_t>(1, server.workers);
  common::Status sandbox_ok = preflightSandbox(*next->snapshot, config_path_);
  if (!sandbox_ok.ok()) {
    LOG_ERROR("reload refused: sandbox: %s", sandbox_ok.message().c_str());
    if (next->access_log_fd >= 0) ::close(next->access_log_fd);
    return;
  }
  common::Result<QuicPlan> quic = planQuicSockets(next->snapshot->site(), workers);
  common::Status opened =
      quic.ok() ? openListeners(next->snapshot->site(), workers) : quic.status();
  if (!opened.ok()) {
    LOG_ERROR("reload refused: %s", opened.message().c_str());
    if (next->access_log_fd >= 0) ::close(next->access_log_fd);
    return;
  }
  applyQuicPlan(std::move(quic).value(), generation_ + 1);
  common::Status logs = applyErrorLogSettings(server);
  if (!logs.ok()) LOG_ERROR("%s", logs.message().c_str());
  if (runtime_.access_log_fd >= 0) ::close(runtime_.access_log_fd);
  runtime_ = std::move(next).value();
  workers_ = workers;
  startGeneration();
  LOG_INFO("reloaded: generation %llu with %u workers",
           static_cast<unsigned long long>(generation_), workers_);
}

void MultiProcessServer::reopenLogs() {
  // The workers are sandboxed and hold no channel to this process: rather than have each
  // reopen a path (a new inode their Landlock rules may not cover) or pass fds to them,
  // this process (not sandboxed) reopens the files in its own fd table and starts a new
  // generation on the running config, which inherits them at fork. The old generation
  // drains (its listeners' queues are kept, as on SIGHUP) and writes its last lines to the
  // renamed files; no line is lost and no connection waiting is dropped.
  common::Status reopened = reopenLogFiles(runtime_.snapshot->server(), runtime_.access_log_fd);
  if (!reopened.ok()) {
    LOG_ERROR("reopening the logs: %s; the workers keep the files they have",
              reopened.message().c_str());
    return;
  }
  common::Result<QuicPlan> quic = planQuicSockets(runtime_.snapshot->site(), workers_);
  if (quic.ok()) applyQuicPlan(std::move(quic).value(), generation_ + 1);
  startGeneration();
  if (!quic.ok()) {
    // The new generation shares the old one's UDP sockets, which stay taken until it is
    // gone: HTTP/3 connections of the old one may be reset, as a restart would.
    LOG_ERROR("HTTP/3: %s; the new workers share the old ones' sockets",
              quic.status().message().c_str());
    for (auto& [address, group] : quic_groups_) {
      for (uint16_t id : group.current) group.generation[id] = generation_;
    }
  }
  LOG_INFO("logs reopened: generation %llu", static_cast<unsigned long long>(generation_));
}

void MultiProcessServer::startGeneration() {
  // New generation first, then the old one drains: the listeners never go unattended.
  std::vector<pid_t> old;
  for (const Child& c : children_) old.push_back(c.pid);
  ++generation_;
  slots_.assign(workers_, Slot{});
  for (uint32_t i = 0; i < workers_; ++i) spawn(i);
  for (pid_t pid : old) ::kill(pid, SIGTERM);
}

void MultiProcessServer::stopAll() {
  for (const Child& c : children_) ::kill(c.pid, SIGTERM);
}

}  // namespace scalws::worker
