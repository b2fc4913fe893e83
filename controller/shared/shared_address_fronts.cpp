// SharedAddress: its fronts — started, re-attached, restarted after a backoff, and what
// they report. The address's channels and table are in shared_address.cpp.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

#include "common/log.h"
#include "common/net/listen_socket.h"
#include "common/net/quic_steering.h"
#include "controller/deferred_call.h"
#include "controller/instances/instance_listeners.h"
#include "controller/shared/shared_address.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::UniqueFd;

namespace {

// Seconds a connection may sit in the kernel before its first bytes come: a client that
// connects and says nothing is accepted only after this (then the header timeout runs).
constexpr int kDeferAcceptSeconds = 1;

int frontSocketOption(int fd, int level, int option) {
  int value = -1;
  socklen_t len = sizeof(value);
  return ::getsockopt(fd, level, option, &value, &len) == 0 ? value : -1;
}

}  // namespace

// --- fronts ------------------------------------------------------------------------------

Result<UniqueFd> SharedAddress::bindFrontSocket() const {
  Result<UniqueFd> fd = common::net::openListenSocket(listen_);
  if (!fd.ok()) return fd.status();
  int defer = kDeferAcceptSeconds;
  ::setsockopt(fd->get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer));
  return fd;
}

void SharedAddress::attachFront(const state::FrontRecord& row, std::function<void()> done) {
  Result<std::unique_ptr<FrontProcess>> process = FrontProcess::attach(env_.loop, row, callbacks());
  if (!process.ok()) {
    LOG_INFO("shared address %s: front pid %lld not re-attached: %s", key_.c_str(),
             static_cast<long long>(row.pid), process.status().message().c_str());
    Status forgotten = env_.store->forgetFront(row.pid);
    (void)forgotten;
    return deferCall(env_.loop, std::move(done));
  }
  attaching_.emplace_back(std::move(process).value(), std::move(done));
}

FrontProcess::Callbacks SharedAddress::callbacks() {
  FrontProcess::Callbacks cb;
  cb.on_ready = [this](FrontProcess& f, const Status& s) {
    for (auto it = attaching_.begin(); it != attaching_.end(); ++it) {
      if (it->first.get() != &f) continue;
      std::unique_ptr<FrontProcess> process = std::move(it->first);
      std::function<void()> done = std::move(it->second);
      attaching_.erase(it);
      if (s.ok()) {
        adoptFront(std::move(process));
      } else {
        LOG_WARN("shared address %s: front pid %d did not re-attach (%s); killing it", key_.c_str(),
                 static_cast<int>(f.pid()), s.message().c_str());
        process->kill();
        bury(std::move(process));
      }
      done();
      return;
    }
    onFrontReady(f, s);
  };
  cb.on_hello = [this](FrontProcess& f) {
    state::FrontRecord row{f.pid(),           key_,         f.slot(), f.startTicks(),
                           f.attachAddress(), f.startedMs()};
    Status stored = env_.store->recordFront(row);
    if (!stored.ok()) LOG_WARN("cannot record front %d: %s", f.pid(), stored.message().c_str());
  };
  cb.on_exit = [this](FrontProcess& f, const std::string& how) { onFrontExit(f, how); };
  cb.on_metrics = [this](FrontProcess& f, ipc::FrontMetricsArgs&& m) {
    Front* front = frontOf(f);
    if (front == nullptr) return;
    front->last = m.counters;
    front->last_handoffs.clear();
    for (auto& [name, n] : m.handoffs) front->last_handoffs[name] = n;
  };
  return cb;
}

SharedAddress::Front* SharedAddress::frontOf(const FrontProcess& process) {
  for (Front& f : fronts_) {
    if (f.process.get() == &process) return &f;
  }
  return nullptr;
}

Status SharedAddress::spawnFront(Front& front) {
  Result<UniqueFd> copy = UniqueFd::duplicate(front.listener.get());
  if (!copy.ok()) return copy.status();
  FrontProcess::Launch launch;
  launch.binary = env_.options->front_binary;
  launch.settings.address = key_;
  launch.settings.port = listen_.port;
  launch.settings.tls = listen_.tls.has_value();
  launch.settings.slot = front.index;
  launch.settings.header_timeout_ms = env_.options->header_timeout_ms;
  launch.settings.max_waiting = env_.options->max_waiting;
  launch.settings.user = env_.options->front_user;
  launch.listener = std::move(copy).value();
  if (quic_ && front.index == 0 && udp_) {
    Result<UniqueFd> udp = UniqueFd::duplicate(udp_.get());
    if (!udp.ok()) return udp.status();
    launch.settings.quic = true;
    launch.udp = std::move(udp).value();
  }
  Result<std::unique_ptr<FrontProcess>> process =
      FrontProcess::spawn(env_.loop, std::move(launch), callbacks());
  if (!process.ok()) return process.status();
  front.process = std::move(process).value();
  front.sent.clear();
  front.in_flight = 0;
  return common::okStatus();
}

void SharedAddress::adoptFront(std::unique_ptr<FrontProcess> process) {
  uint32_t index = process->slot();
  UniqueFd listener = process->takeAttachedListener();
  UniqueFd udp = process->takeAttachedUdp();
  bool reads_udp = quic_ && index == 0;
  bool fits = index < fronts_.size() && !fronts_[index].process && listener &&
              process->settings().quic == reads_udp &&
              (!reads_udp || boundPort(udp.get()) == listen_.port) &&
              process->state() == FrontProcess::State::kReady &&
              frontSocketOption(listener.get(), SOL_SOCKET, SO_ACCEPTCONN) == 1 &&
              boundPort(listener.get()) == listen_.port &&
              process->settings().tls == listen_.tls.has_value() &&
              process->settings().user == env_.options->front_user;
  if (!fits) {
    LOG_WARN("shared address %s: front pid %d does not fit (slot, socket or settings); killing it",
             key_.c_str(), static_cast<int>(process->pid()));
    process->kill();
    bury(std::move(process));
    return;
  }
  for (UniqueFd& end : process->takeAttachedChannels()) {
    std::string name = sendingEndPeer(end.get());
    if (!name.empty() && isChannelEnd(end.get())) orphan_sends_[name] = std::move(end);
  }
  Front& front = fronts_[index];
  front.listener = std::move(listener);
  if (reads_udp && !udp_) udp_ = std::move(udp);
  front.process = std::move(process);
  front.sent.clear();  // its table is rebuilt from ours: everything is sent again
  LOG_INFO("shared address %s: front %u (pid %d) re-attached", key_.c_str(), index,
           static_cast<int>(front.process->pid()));
}

void SharedAddress::completeFronts() {
  for (Front& front : fronts_) {
    if (front.process) continue;
    if (!front.listener) {
      // Its socket went with the front that died while no controller ran.
      Result<UniqueFd> fd = bindFrontSocket();
      if (!fd.ok()) {
        LOG_ERROR("shared address %s: cannot bind for front %u: %s", key_.c_str(), front.index,
                  fd.status().message().c_str());
        continue;
      }
      front.listener = std::move(fd).value();
    }
    if (quic_ && front.index == 0 && !udp_) {
      // Gone with front 0 while no controller ran. Workers still holding their sockets keep
      // the group, and this one joins it last: until they are replaced, the datagrams go
      // to one of them, which drops what is not its own.
      Result<UniqueFd> udp = common::net::bindSharedGroupSocket(listen_);
      if (!udp.ok()) {
        LOG_ERROR("shared address %s: cannot bind its UDP socket: %s", key_.c_str(),
                  udp.status().message().c_str());
      } else {
        udp_ = std::move(udp).value();
      }
    }
    Status spawned = spawnFront(front);
    if (!spawned.ok()) {
      LOG_ERROR("shared address %s: cannot start front %u: %s", key_.c_str(), front.index,
                spawned.message().c_str());
      scheduleRespawn(front, policy_.onCrash(front.index, uv_now(env_.loop), 0).delay_ms);
    }
  }
}

void SharedAddress::onFrontReady(FrontProcess& process, const Status& status) {
  Front* front = frontOf(process);
  if (front == nullptr) return;
  if (!status.ok()) return;  // its exit follows; onFrontExit restarts it
  pushTo(*front);
}

void SharedAddress::onFrontExit(FrontProcess& process, const std::string& how) {
  Status forgotten = env_.store->forgetFront(process.pid());
  (void)forgotten;
  Front* front = frontOf(process);
  if (front == nullptr) {
    maybeEmpty();
    return;
  }
  front->in_flight = 0;
  retired_ += front->last;
  retired_.waiting -= front->last.waiting;
  for (auto& [name, n] : front->last_handoffs) retired_handoffs_[name] += n;
  front->last = ipc::FrontCounters();
  front->last_handoffs.clear();
  uint64_t now = uv_now(env_.loop);
  uint64_t uptime = now - std::min(now, process.startedMonoMs());
  bury(std::move(front->process));
  answered(*front);
  if (stopping_) return maybeEmpty();
  RestartPolicy::Decision d = policy_.onCrash(front->index, now, uptime);
  ++front->restarts;
  LOG_ERROR("shared address %s: front %u (pid %d) %s; restarting in %llu ms", key_.c_str(),
            front->index, static_cast<int>(process.pid()), how.c_str(),
            static_cast<unsigned long long>(d.delay_ms));
  scheduleRespawn(*front, d.delay_ms);
}

void SharedAddress::scheduleRespawn(Front& front, uint64_t delay_ms) {
  front.restart_timer = std::make_unique<LoopTimer>(env_.loop);
  uint32_t index = front.index;
  front.restart_timer->start(delay_ms, 0, [this, index] {
    Front& f = fronts_[index];
    f.restart_timer.reset();
    if (stopping_ || f.process) return;
    Status spawned = spawnFront(f);
    if (spawned.ok()) return;
    LOG_ERROR("shared address %s: cannot restart front %u: %s", key_.c_str(), index,
              spawned.message().c_str());
    scheduleRespawn(f, policy_.onCrash(index, uv_now(env_.loop), 0).delay_ms);
  });
}

void SharedAddress::bury(std::unique_ptr<FrontProcess> process) {
  graveyard_.push_back(std::move(process));
  reaper_.start(0, 0, [this] { graveyard_.clear(); });
}

}  // namespace scalws::controller
