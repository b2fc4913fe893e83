#include "controller/shared/shared_address.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/net/listen_socket.h"
#include "common/net/quic_route.h"
#include "common/net/quic_steering.h"
#include "controller/child_process.h"
#include "controller/deferred_call.h"
#include "controller/instances/instance_listeners.h"
#include "controller/instances/process_facts.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::UniqueFd;
using ipc::Json;

namespace {

// A front asked to stop has at most its header timeout of waiting clients to settle.
constexpr uint64_t kFrontStopGraceMs = 5'000;

}  // namespace

SharedAddress::SharedAddress(Env env, std::string key, const common::config::ListenConfig& listen)
    : env_(std::move(env)),
      key_(std::move(key)),
      listen_(listen),
      policy_(env_.options->restart),
      linger_(env_.loop),
      reaper_(env_.loop) {
  // A front is one listener's worth of a listen config: names are the claims', and HTTP/3
  // is the UDP group's, kept apart.
  quic_ = listen_.http3;
  listen_.http3 = false;
  fronts_.resize(std::max<uint32_t>(1, env_.options->processes));
  for (size_t i = 0; i < fronts_.size(); ++i) fronts_[i].index = static_cast<uint32_t>(i);
}

SharedAddress::~SharedAddress() {
  *alive_ = false;
}

Status SharedAddress::open() {
  common::config::ListenConfig probe = listen_;
  probe.http3 = quic_;
  Status free = checkAddressFree(probe);
  if (!free.ok()) return free;
  if (quic_) {
    // First, so that it is the group's socket 0 (common/net/quic_steering.h).
    Result<UniqueFd> udp = common::net::bindSharedGroupSocket(listen_);
    if (!udp.ok()) return udp.status();
    udp_ = std::move(udp).value();
  }
  for (Front& front : fronts_) {
    Result<UniqueFd> fd = bindFrontSocket();
    if (!fd.ok()) return fd.status();
    front.listener = std::move(fd).value();
  }
  for (Front& front : fronts_) {
    Status spawned = spawnFront(front);
    if (!spawned.ok()) return spawned;
  }
  LOG_INFO("shared address %s: %zu front(s) started", key_.c_str(), fronts_.size());
  return common::okStatus();
}

// --- members and channels ------------------------------------------------------------------

Result<std::vector<UniqueFd>> SharedAddress::channelsFor(const std::string& instance, uint32_t slot,
                                                         uint32_t loops) {
  Member& member = members_[instance];
  linger_.stop();
  std::vector<UniqueFd> out;
  for (uint32_t loop = 0; loop < loops; ++loop) {
    Channel* found = nullptr;
    for (Channel& c : member.channels) {
      if (c.slot == slot && c.loop == loop) found = &c;
    }
    if (found == nullptr) {
      Result<HandoffChannel> made = HandoffChannel::make();
      if (!made.ok()) return made.status();
      member.channels.push_back(
          Channel{slot, loop, std::move(made->send), std::move(made->receive)});
      found = &member.channels.back();
    }
    Result<UniqueFd> copy = UniqueFd::duplicate(found->receive.get());
    if (!copy.ok()) return copy.status();
    out.push_back(std::move(copy).value());
  }
  return out;
}

Result<std::vector<UniqueFd>> SharedAddress::udpSocketsFor(const std::string& instance,
                                                           uint32_t loops) {
  if (!quic_) return common::invalidArgument("address " + key_ + " serves no HTTP/3");
  uint32_t mine = common::net::quicInstanceHash(instance);
  for (const auto& [other, member] : members_) {
    if (other != instance && common::net::quicInstanceHash(other) == mine) {
      return Status(common::StatusCode::kFailedPrecondition,
                    "address " + key_ + ": instances " + other + " and " + instance +
                        " would share QUIC routes (their names hash alike); rename one");
    }
  }
  std::vector<UniqueFd> out;
  for (uint32_t loop = 0; loop < loops; ++loop) {
    Result<UniqueFd> fd = common::net::bindUdpSocket(listen_);
    if (!fd.ok()) return fd.status();
    out.push_back(std::move(fd).value());
  }
  return out;
}

Status SharedAddress::adoptChannel(const std::string& instance, uint32_t slot, uint32_t loop,
                                   UniqueFd receive) {
  std::string name = receivingEndName(receive.get());
  auto it = name.empty() ? orphan_sends_.end() : orphan_sends_.find(name);
  if (it == orphan_sends_.end() || !isChannelEnd(receive.get())) {
    return common::notFound("no front of " + key_ + " holds the other end of its channel");
  }
  Member& member = members_[instance];
  member.channels.push_back(Channel{slot, loop, std::move(it->second), std::move(receive)});
  orphan_sends_.erase(it);
  return common::okStatus();
}

void SharedAddress::setSlotUp(const std::string& instance, uint32_t slot, bool up) {
  auto it = members_.find(instance);
  if (it == members_.end()) return;
  bool was = it->second.up.count(slot) != 0;
  if (was == up) return;
  if (up) {
    it->second.up.insert(slot);
    push();
    return;
  }
  it->second.up.erase(slot);
  push();
  std::weak_ptr<bool> alive = alive_;
  whenAnswered([this, alive, instance, slot] {
    if (!alive.expired()) drain(instance, slot);
  });
}

void SharedAddress::detachMember(const std::string& instance, std::function<void()> done) {
  auto it = members_.find(instance);
  if (it != members_.end() && !it->second.up.empty()) {
    it->second.up.clear();
    push();
  }
  whenAnswered(std::move(done));
}

void SharedAddress::removeMember(const std::string& instance) {
  auto it = members_.find(instance);
  if (it == members_.end()) return;
  if (!it->second.up.empty()) {
    it->second.up.clear();
    push();
  }
  // The fronts may still hold copies of the sending ends until they answer; ours close now.
  members_.erase(it);
  if (!members_.empty() || stopping_) return;
  linger_.start(kEmptyLingerMs, 0, [this] {
    if (!members_.empty() || stopping_) return;
    LOG_INFO("shared address %s: no instance runs there any more; stopping its fronts",
             key_.c_str());
    stop([] {});
  });
}

// A dead worker's queue: the connections the fronts handed to it before they heard.
void SharedAddress::drain(const std::string& instance, uint32_t slot) {
  auto it = members_.find(instance);
  if (it == members_.end() || it->second.up.count(slot) != 0) return;  // back already
  Member& member = it->second;
  std::vector<Channel*> targets;
  for (Channel& c : member.channels) {
    if (member.up.count(c.slot) != 0) targets.push_back(&c);
  }
  if (targets.empty()) return;  // nobody else: they wait for the replacement
  size_t moved = 0;
  for (Channel& c : member.channels) {
    if (c.slot != slot) continue;
    while (true) {
      char byte;
      iovec iov{&byte, 1};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      ssize_t got = ::recvmsg(c.receive.get(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (got <= 0) break;
      for (cmsghdr* h = CMSG_FIRSTHDR(&msg); h != nullptr; h = CMSG_NXTHDR(&msg, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t k = 0; k < count; ++k) {
          int fd;
          std::memcpy(&fd, CMSG_DATA(h) + k * sizeof(int), sizeof(int));
          UniqueFd client(fd);
          // The same message the front sends, on another loop's channel.
          alignas(cmsghdr) char out_control[CMSG_SPACE(sizeof(int))];
          msghdr out{};
          out.msg_iov = &iov;
          out.msg_iovlen = 1;
          out.msg_control = out_control;
          out.msg_controllen = sizeof(out_control);
          cmsghdr* oc = CMSG_FIRSTHDR(&out);
          oc->cmsg_level = SOL_SOCKET;
          oc->cmsg_type = SCM_RIGHTS;
          oc->cmsg_len = CMSG_LEN(sizeof(int));
          std::memcpy(CMSG_DATA(oc), &fd, sizeof(int));
          for (size_t tried = 0; tried < targets.size(); ++tried) {
            Channel* target = targets[(member.next++) % targets.size()];
            if (::sendmsg(target->send.get(), &out, MSG_DONTWAIT | MSG_NOSIGNAL) == 1) {
              ++moved;
              break;
            }
          }
        }
      }
    }
  }
  if (moved > 0) {
    LOG_INFO("shared address %s: %zu connection(s) queued to a dead worker of %s handed on",
             key_.c_str(), moved, instance.c_str());
  }
}

// --- the table -----------------------------------------------------------------------------

void SharedAddress::setClaims(std::vector<Claim> claims) {
  claims_ = std::move(claims);
  push();
}

void SharedAddress::push() {
  for (Front& front : fronts_) pushTo(front);
}

void SharedAddress::hold(bool held) {
  held_ = held;
  if (!held_) push();
}

void SharedAddress::pushTo(Front& front) {
  if (held_ || !front.process || !front.process->ready()) return;
  std::set<std::string> listed;
  for (const Claim& claim : claims_) {
    listed.insert(claim.instance);
    Sent want{claim.names, claim.is_default, {}};
    std::vector<UniqueFd> fds;
    auto member = members_.find(claim.instance);
    if (member != members_.end()) {
      for (const Channel& c : member->second.channels) {
        if (member->second.up.count(c.slot) == 0) continue;
        Result<UniqueFd> copy = UniqueFd::duplicate(c.send.get());
        if (!copy.ok()) continue;
        want.channels.push_back({c.slot, c.loop});
        fds.push_back(std::move(copy).value());
      }
    }
    auto sent = front.sent.find(claim.instance);
    if (sent != front.sent.end() && sent->second == want) continue;
    ipc::FrontRouteArgs args{claim.instance, want.names, want.is_default, want.channels, false};
    front.sent[claim.instance] = std::move(want);
    ++front.in_flight;
    uint32_t index = front.index;
    std::weak_ptr<bool> alive = alive_;
    FrontProcess* process = front.process.get();
    process->route(args, std::move(fds), [this, alive, index, process](const Status& s) {
      if (alive.expired()) return;
      Front& f = fronts_[index];
      if (f.process.get() != process) return;
      if (!s.ok()) {
        LOG_WARN("shared address %s: front %u did not take a route: %s", key_.c_str(), index,
                 s.message().c_str());
      }
      answered(f);
    });
  }
  for (auto it = front.sent.begin(); it != front.sent.end();) {
    if (listed.count(it->first) != 0) {
      ++it;
      continue;
    }
    ++front.in_flight;
    uint32_t index = front.index;
    std::weak_ptr<bool> alive = alive_;
    FrontProcess* process = front.process.get();
    process->unroute(it->first, [this, alive, index, process](const Status&) {
      if (alive.expired()) return;
      Front& f = fronts_[index];
      if (f.process.get() == process) answered(f);
    });
    it = front.sent.erase(it);
  }
}

void SharedAddress::answered(Front& front) {
  if (front.in_flight > 0) --front.in_flight;
  for (const Front& f : fronts_) {
    if (f.in_flight > 0) return;
  }
  auto waiting = std::move(waiting_answers_);
  waiting_answers_.clear();
  for (auto& done : waiting) done();
}

void SharedAddress::whenAnswered(std::function<void()> done) {
  bool pending = false;
  for (const Front& f : fronts_) pending = pending || f.in_flight > 0;
  if (!pending) {
    std::weak_ptr<bool> alive = alive_;
    deferCall(env_.loop, [alive, done] {
      if (!alive.expired()) done();
    });
    return;
  }
  waiting_answers_.push_back(std::move(done));
}

ipc::SharedAddressNames SharedAddress::namesFor(const std::string& instance) const {
  ipc::SharedAddressNames out;
  out.address = listen_.address;
  out.port = listen_.port;
  bool default_seen = false;
  for (const Claim& claim : claims_) {
    std::vector<std::string>& into = claim.instance == instance ? out.mine : out.others;
    into.insert(into.end(), claim.names.begin(), claim.names.end());
    if (claim.is_default && !default_seen) {
      default_seen = true;
      out.fallback = claim.instance == instance ? ipc::SharedAddressNames::Fallback::kMine
                                                : ipc::SharedAddressNames::Fallback::kOther;
    }
  }
  return out;
}

// --- stopping --------------------------------------------------------------------------------

void SharedAddress::stop(std::function<void()> done) {
  stopping_ = true;
  linger_.stop();
  std::function<void()> previous = std::move(stopped_);
  stopped_ = [previous, done] {
    if (previous) previous();
    done();
  };
  for (Front& front : fronts_) {
    front.restart_timer.reset();
    if (front.process) {
      front.process->stop(env_.options->header_timeout_ms + kFrontStopGraceMs);
    }
    front.listener.reset();  // the front has its own copy until it exits
  }
  maybeEmpty();
}

void SharedAddress::maybeEmpty() {
  if (!stopping_) return;
  for (const Front& f : fronts_) {
    if (f.process) return;
  }
  if (stopped_) std::exchange(stopped_, nullptr)();
  if (members_.empty() && env_.on_empty) {
    std::weak_ptr<bool> alive = alive_;
    // Not from inside the caller's stack: on_empty may destroy this object.
    deferCall(env_.loop, [this, alive] {
      if (!alive.expired() && env_.on_empty) env_.on_empty(*this);
    });
  }
}

void SharedAddress::leave() {
  linger_.close();
  for (Front& front : fronts_) {
    front.restart_timer.reset();
    if (front.process) front.process->detach();
  }
}

// --- what is shown -------------------------------------------------------------------------

ipc::FrontCounters SharedAddress::counters() const {
  ipc::FrontCounters total = retired_;
  for (const Front& f : fronts_) total += f.last;
  return total;
}

uint64_t SharedAddress::handoffs(const std::string& instance) const {
  uint64_t n = 0;
  if (auto it = retired_handoffs_.find(instance); it != retired_handoffs_.end()) n += it->second;
  for (const Front& f : fronts_) {
    if (auto it = f.last_handoffs.find(instance); it != f.last_handoffs.end()) n += it->second;
  }
  return n;
}

Json SharedAddress::describe() const {
  Json fronts = Json::array();
  for (const Front& f : fronts_) {
    Json entry = {{"slot", f.index}, {"restarts", f.restarts}};
    if (f.process) {
      entry["pid"] = f.process->pid();
      entry["state"] = std::string(f.process->stateName());
      entry["started_ms"] = f.process->startedMs();
      entry["checked"] = processFacts(f.process->pid());
      entry["sandbox"] = f.process->sandbox() ? f.process->sandbox()->encode() : Json(nullptr);
    } else {
      entry["pid"] = 0;
      entry["state"] = f.restart_timer ? "restarting" : "stopped";
    }
    fronts.push_back(std::move(entry));
  }
  Json instances = Json::array();
  std::string default_instance;
  std::set<std::string> seen_names;
  for (const Claim& c : claims_) {
    auto member = members_.find(c.instance);
    bool running = member != members_.end();
    // What it really answers: a name claimed before by another is not its.
    std::vector<std::string> names;
    for (const std::string& n : c.names) {
      if (seen_names.insert(n).second) names.push_back(n);
    }
    if (c.is_default && default_instance.empty()) default_instance = c.instance;
    instances.push_back({{"name", c.instance},
                         {"names", names},
                         {"default", c.is_default && default_instance == c.instance},
                         {"running", running},
                         {"workers_up", running ? member->second.up.size() : 0},
                         {"handoffs", handoffs(c.instance)}});
  }
  return {{"address", key_},
          {"tls", listen_.tls.has_value()},
          {"http3", quic_},
          {"default", default_instance.empty() ? Json(nullptr) : Json(default_instance)},
          {"fronts", std::move(fronts)},
          {"instances", std::move(instances)},
          {"counters", counters().toJson()}};
}

}  // namespace scalws::controller
