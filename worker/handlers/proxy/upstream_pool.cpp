#include "worker/handlers/proxy/upstream_pool.h"

#include <netinet/in.h>

#include <chrono>
#include <cstring>

#include "common/log.h"
#include "worker/handlers/proxy/health_probe.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::proxy {
namespace {

uint64_t nowMs() {
  return uv_hrtime() / 1'000'000;
}

// The value of cookie `name` in a Cookie header (RFC 6265 §4.2.1: "a=1; b=2").
std::string_view cookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view pair = trimOws(header.substr(0, semi));
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
    if (semi == std::string_view::npos) break;
    header.remove_prefix(semi + 1);
  }
  return {};
}

}  // namespace

UpstreamPool::UpstreamPool(WorkerLoop& loop, std::shared_ptr<const UpstreamSpec> spec)
    : loop_(loop),
      spec_(std::move(spec)),
      slots_(spec_->servers.size()),
      active_(spec_->servers.size(), 0),
      // Loops of one process start their rotations apart.
      balancer_(reinterpret_cast<uintptr_t>(this) ^ uv_hrtime()) {
  startProbes();
}

UpstreamPool::~UpstreamPool() {
  // Connections and probes were closed by stop() while the loop still ran; by now the uv
  // loop may be gone, so nothing of libuv is touched here.
  for (ServerSlot& s : slots_) {
    if (s.tls_session != nullptr) SSL_SESSION_free(s.tls_session);
  }
}

HealthPolicy UpstreamPool::policy() const {
  HealthPolicy p;
  p.max_fails = spec_->max_fails;
  p.fail_timeout_ms = spec_->fail_timeout_ms;
  p.active_checks = spec_->health.has_value();
  if (spec_->health) {
    p.probe_fails = spec_->health->fails;
    p.probe_passes = spec_->health->passes;
  }
  return p;
}

void UpstreamPool::startProbes() {
  if (!spec_->health || stopped_ || retired_) return;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].probe) {
      slots_[i].probe = std::make_unique<HealthProbe>(*this, static_cast<int>(i));
      slots_[i].probe->start();
    }
  }
}

void UpstreamPool::update(std::shared_ptr<const UpstreamSpec> spec) {
  spec_ = std::move(spec);
  if (!spec_->health) {
    for (ServerSlot& s : slots_) s.probe.reset();
  } else {
    startProbes();
  }
  while (idle_count_ > spec_->keepalive && closeOneIdle(-1)) {
  }
}

void UpstreamPool::retire() {
  retired_ = true;
  for (ServerSlot& s : slots_) s.probe.reset();
  closeIdle();
}

void UpstreamPool::stop() {
  stopped_ = true;
  for (ServerSlot& s : slots_) s.probe.reset();
  closeIdle();
}

bool UpstreamPool::hashKeyOf(const Request& request, uint64_t& hash) const {
  using Kind = common::config::HashKeyConfig::Kind;
  std::string_view key;
  switch (spec_->hash_key.kind) {
    case Kind::kClientIp: {
      const sockaddr_storage& a = request.peer->address;
      if (a.ss_family == AF_INET) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(&a);
        key = std::string_view(reinterpret_cast<const char*>(&sin->sin_addr), 4);
      } else if (a.ss_family == AF_INET6) {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&a);
        // An IPv4 client on a dual-stack listener hashes as the IPv4 address it is.
        key = IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)
                  ? std::string_view(reinterpret_cast<const char*>(&sin6->sin6_addr) + 12, 4)
                  : std::string_view(reinterpret_cast<const char*>(&sin6->sin6_addr), 16);
      }
      break;
    }
    case Kind::kHeader:
      key = request.header(spec_->hash_key.name);
      break;
    case Kind::kCookie:
      key = cookieValue(request.header("cookie"), spec_->hash_key.name);
      break;
  }
  if (key.empty()) return false;  // no key: the request is balanced in turn
  hash = hashKey(key);
  return true;
}

int UpstreamPool::choose(const Request& request, uint64_t tried, bool& all_down) {
  const uint64_t now = nowMs();
  const HealthPolicy p = policy();
  uint64_t primaries = 0;
  uint64_t backups = 0;
  bool any_up = false;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].health.available(p, now)) continue;
    any_up = true;
    if (((tried >> i) & 1) != 0) continue;
    (spec_->servers[i].backup ? backups : primaries) |= uint64_t{1} << i;
  }
  all_down = !any_up;
  uint64_t candidates = primaries != 0 ? primaries : backups;
  uint64_t hash = 0;
  bool keyed = spec_->balance == common::config::BalanceMode::kHash && hashKeyOf(request, hash);
  int chosen = balancer_.pick(*spec_, candidates, active_, keyed ? &hash : nullptr);
  if (chosen >= 0) slots_[static_cast<size_t>(chosen)].health.onChosen(p, now);
  return chosen;
}

UpstreamConnection* UpstreamPool::connect(int server, UpstreamConnectionUser& user,
                                          bool allow_reuse, bool& reused, int& err) {
  const auto index = static_cast<size_t>(server);
  if (UpstreamConnection* c = allow_reuse ? slots_[index].idle_head : nullptr) {
    unlinkIdle(*c);
    c->lend(&user);
    slots_[index].counters.active.set(++active_[index]);
    reused = true;
    loop_.counters().upstream_reuses.add();
    return c;
  }
  reused = false;
  const ServerSpec& spec = spec_->servers[index];
  UpstreamConnection* c = UpstreamConnection::open(loop_, spec, spec_->tls.get(),
                                                   slots_[index].tls_session, server, *this, err);
  if (c == nullptr) return nullptr;
  loop_.counters().upstream_connects.add();
  c->lend(&user);
  slots_[index].counters.active.set(++active_[index]);
  return c;
}

void UpstreamPool::release(UpstreamConnection& c, bool reusable) {
  const auto index = static_cast<size_t>(c.serverIndex());
  if (active_[index] > 0) slots_[index].counters.active.set(--active_[index]);
  c.countServed();
  if (spec_->tls && c.requestsServed() == 1 && c.state() == UpstreamConnection::State::kInUse) {
    // A completed handshake: keep its session to resume the next connection with (a TLS 1.3
    // ticket arrives after the handshake, so it is taken once a request went through).
    if (SSL_SESSION* session = c.takeTlsSession()) {
      if (slots_[index].tls_session != nullptr) SSL_SESSION_free(slots_[index].tls_session);
      slots_[index].tls_session = session;
    }
  }
  bool keep = reusable && !retired_ && !stopped_ && spec_->keepalive > 0 &&
              c.requestsServed() < spec_->keepalive_requests;
  if (!keep) {
    c.close();
    return;
  }
  c.makeIdle(spec_->keepalive_timeout_ms);
  pushIdle(c);
  // Counted with `c`; on a tie another server gives one up, so that a server that had
  // none keeps the one it just got back.
  if (idle_count_ > spec_->keepalive) closeOneIdle(c.serverIndex());
}

void UpstreamPool::onIdleClosed(UpstreamConnection& c) noexcept {
  // The server closed a kept connection (its own keep-alive timeout, a restart), sent bytes
  // nobody asked for, or it sat idle too long: either way it is not reusable.
  unlinkIdle(c);
  c.close();
}

void UpstreamPool::recordResponse(int server, uint16_t status, uint64_t us) {
  ServerSlot& s = slots_[static_cast<size_t>(server)];
  s.counters.requests.add();
  if (status >= 500) s.counters.responses_5xx.add();
  s.counters.latency_sum_us.add(us);
  s.counters.latency[common::metrics::latencyBucket(us)].add();
  if (s.health.onSuccess(policy())) {
    LOG_NOTICE("upstream %s: server %s is up again", spec_->name.c_str(),
               spec_->servers[static_cast<size_t>(server)].text.c_str());
    publishHealth(static_cast<size_t>(server));
  }
}

void UpstreamPool::recordFailure(int server, bool connect_failure, const char* why) {
  ServerSlot& s = slots_[static_cast<size_t>(server)];
  s.counters.failures.add();
  if (connect_failure) s.counters.connect_failures.add();
  loop_.counters().upstream_errors.add();
  bool went_down = s.health.onFailure(policy(), nowMs());
  publishHealth(static_cast<size_t>(server));
  if (went_down) {
    LOG_WARN("upstream %s: server %s is down (%u failures within %llu ms; last: %s)",
             spec_->name.c_str(), spec_->servers[static_cast<size_t>(server)].text.c_str(),
             s.health.failures(), static_cast<unsigned long long>(spec_->fail_timeout_ms), why);
  }
}

void UpstreamPool::recordProbe(int server, bool passed, const char* why) {
  ServerSlot& s = slots_[static_cast<size_t>(server)];
  bool changed = s.health.onProbe(policy(), passed, nowMs());
  publishHealth(static_cast<size_t>(server));
  if (!changed) return;
  const char* name = spec_->servers[static_cast<size_t>(server)].text.c_str();
  if (passed) {
    LOG_NOTICE("upstream %s: server %s is up again (health check passed)", spec_->name.c_str(),
               name);
  } else {
    LOG_WARN("upstream %s: server %s is down (health check: %s)", spec_->name.c_str(), name, why);
  }
}

void UpstreamPool::publishHealth(size_t server) {
  ServerSlot& s = slots_[server];
  bool down = s.health.state() == ServerHealth::State::kDown;
  if (down && !s.counters.down.load(std::memory_order_relaxed)) {
    // For reports: when, on the wall clock (the health itself runs on the monotonic one).
    s.counters.down_since_unix_ms.store(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count(),
                                        std::memory_order_relaxed);
  }
  s.counters.down.store(down, std::memory_order_relaxed);
  s.counters.health_failures.store(s.health.failures(), std::memory_order_relaxed);
}

void UpstreamPool::pushIdle(UpstreamConnection& c) {
  ServerSlot& slot = slots_[static_cast<size_t>(c.serverIndex())];
  c.idle_prev = nullptr;
  c.idle_next = slot.idle_head;
  if (slot.idle_head != nullptr) {
    slot.idle_head->idle_prev = &c;
  } else {
    slot.idle_tail = &c;
  }
  slot.idle_head = &c;
  ++idle_count_;
  slot.counters.idle.set(++slot.idle);
}

void UpstreamPool::unlinkIdle(UpstreamConnection& c) {
  ServerSlot& slot = slots_[static_cast<size_t>(c.serverIndex())];
  if (c.idle_prev != nullptr) {
    c.idle_prev->idle_next = c.idle_next;
  } else {
    slot.idle_head = c.idle_next;
  }
  if (c.idle_next != nullptr) {
    c.idle_next->idle_prev = c.idle_prev;
  } else {
    slot.idle_tail = c.idle_prev;
  }
  c.idle_next = c.idle_prev = nullptr;
  --idle_count_;
  slot.counters.idle.set(--slot.idle);
}

bool UpstreamPool::closeOneIdle(int spare_server) {
  ServerSlot* fullest = nullptr;
  bool fullest_is_spare = false;
  for (size_t i = 0; i < slots_.size(); ++i) {
    ServerSlot& slot = slots_[i];
    if (slot.idle == 0) continue;
    if (fullest == nullptr || slot.idle > fullest->idle ||
        (slot.idle == fullest->idle && fullest_is_spare)) {
      fullest = &slot;
      fullest_is_spare = static_cast<int>(i) == spare_server;
    }
  }
  if (fullest == nullptr) return false;
  UpstreamConnection* oldest = fullest->idle_tail;
  unlinkIdle(*oldest);
  oldest->close();
  return true;
}

void UpstreamPool::closeIdle() {
  for (ServerSlot& slot : slots_) {
    while (UpstreamConnection* c = slot.idle_head) {
      unlinkIdle(*c);
      c->close();
    }
  }
}

}  // namespace scalws::worker::proxy
