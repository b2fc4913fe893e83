#include "controller/shared/shared_listeners.h"

#include <sys/stat.h>

#include <algorithm>

#include "common/config/listen_address.h"
#include "common/log.h"
#include "controller/deferred_call.h"
#include "controller/instances/instance_config.h"
#include "controller/shared/claimed_names.h"
#include "controller/shared/sharing_rules.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using common::config::ListenConfig;
using common::config::SiteConfig;
using ipc::Json;

namespace {

const ListenConfig* listenerOn(const SiteConfig& site, const std::string& key) {
  for (const ListenConfig& l : site.listens) {
    if (sharedAddressKey(l) == key) return &l;
  }
  return nullptr;
}

// What claimedNames() depends on: the listener's own names, else its certificate files as
// they are now (a renewed certificate may name other hosts).
std::string namesKey(const ListenConfig& listen) {
  std::string key = listen.address + (listen.is_default ? "|d" : "|");
  for (const std::string& n : listen.names) key += n + ",";
  if (!listen.names.empty() || !listen.tls) return key;
  for (const common::config::TlsCertificateConfig& c : listen.tls->allCertificates()) {
    key += "|" + c.cert + ":";
    for (const std::string& n : c.names) key += n + ",";
    struct stat st {};
    if (c.names.empty() && ::stat(c.cert.c_str(), &st) == 0) {
      key += std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "." +
             std::to_string(st.st_size);
    }
  }
  return key;
}

}  // namespace

SharedListeners::SharedListeners(Env env) : env_(std::move(env)) {}

SharedListeners::~SharedListeners() {
  *alive_ = false;
}

SharedAddress* SharedListeners::find(const std::string& key) const {
  auto it = addresses_.find(key);
  return it == addresses_.end() ? nullptr : it->second.get();
}

SharedAddress& SharedListeners::make(const std::string& key, const ListenConfig& listen) {
  SharedAddress::Env env;
  env.loop = env_.loop;
  env.store = env_.store;
  env.options = &env_.options;
  env.on_empty = [this](SharedAddress& gone) {
    auto it = addresses_.find(gone.key());
    if (it == addresses_.end() || it->second.get() != &gone) return;
    LOG_INFO("shared address %s: closed", gone.key().c_str());
    closed_.push_back(std::move(it->second));
    addresses_.erase(it);
    std::weak_ptr<bool> alive = alive_;
    deferCall(env_.loop, [this, alive] {
      if (!alive.expired()) closed_.clear();
    });
  };
  auto address = std::make_unique<SharedAddress>(std::move(env), key, listen);
  SharedAddress& ref = *address;
  addresses_[key] = std::move(address);
  return ref;
}

std::set<size_t> SharedListeners::sharedListens(const std::string& instance,
                                                const SiteConfig& site) const {
  std::set<size_t> out;
  std::vector<InstanceView> views = env_.instances();
  for (size_t i = 0; i < site.listens.size(); ++i) {
    std::string key = sharedAddressKey(site.listens[i]);
    bool shared = find(key) != nullptr;
    for (const InstanceView& v : views) {
      if (shared) break;
      shared = v.name != instance && listenerOn(v.site, key) != nullptr;
    }
    if (shared) out.insert(i);
  }
  return out;
}

Result<SharedAddress*> SharedListeners::ensureAddress(const std::string& instance,
                                                      const ListenConfig& listen, bool* opened) {
  std::string key = sharedAddressKey(listen);
  SharedAddress* address = find(key);
  if (address != nullptr && address->stopping()) {
    return Status(StatusCode::kUnavailable, "address " + key +
                                                ": its fronts are still stopping; start " +
                                                instance + " again in a few seconds");
  }
  if (address != nullptr) return address;
  if (env_.ensure_user) SCALWS_RETURN_IF_ERROR(env_.ensure_user());
  SharedAddress& made = make(key, listen);
  Status open = made.open();
  if (open.ok()) {
    *opened = true;
    return &made;
  }
  // Say who, when it is one of ours listening there on its own.
  std::string why = open.message();
  for (const InstanceView& v : env_.instances()) {
    if (v.name == instance || !v.running || listenerOn(v.site, key) == nullptr) continue;
    why = "address " + key + " is served directly by instance " + v.name +
          ", which was started when it alone listened there; restart it (scalwsctl instance "
          "restart " +
          v.name + ") so both go through the address's front";
  }
  made.stop([] {});
  return Status(open.code(), why);
}

Result<std::vector<SlotListeners>> SharedListeners::join(const std::string& instance,
                                                         const SiteConfig& site,
                                                         const std::set<size_t>& shared,
                                                         const std::vector<uint32_t>& loops) {
  std::vector<SharedAddress*> opened;
  auto undo = [&](const Status& why) -> Status {
    for (auto& [key, address] : addresses_) address->removeMember(instance);
    for (SharedAddress* a : opened) {
      if (!a->hasMembers() && !a->stopping()) a->stop([] {});
    }
    return why;
  };
  for (size_t index : shared) {
    bool made = false;
    Result<SharedAddress*> address = ensureAddress(instance, site.listens[index], &made);
    if (!address.ok()) return undo(address.status());
    if (made) opened.push_back(*address);
  }
  std::vector<SlotListeners> out(loops.size());
  for (uint32_t slot = 0; slot < loops.size(); ++slot) {
    Result<SlotListeners> ends = slotChannels(instance, site, shared, slot, loops[slot]);
    if (!ends.ok()) return undo(ends.status());
    out[slot] = std::move(ends).value();
  }
  refresh();
  return out;
}

Result<SlotListeners> SharedListeners::slotChannels(const std::string& instance,
                                                    const SiteConfig& site,
                                                    const std::set<size_t>& shared, uint32_t slot,
                                                    uint32_t loops) {
  // Per listener, the receiving ends of the slot's loops (and with HTTP/3 their UDP
  // sockets); then laid out loop-major, as slotListenerSpecs does.
  std::map<size_t, std::vector<UniqueFd>> ends;
  std::map<size_t, std::vector<UniqueFd>> udp;
  for (size_t index : shared) {
    const ListenConfig& listen = site.listens[index];
    SharedAddress* address = find(sharedAddressKey(listen));
    if (address == nullptr || address->stopping()) {
      return Status(StatusCode::kUnavailable, "address " + listen.address + " has no front");
    }
    Result<std::vector<UniqueFd>> made = address->channelsFor(instance, slot, loops);
    if (!made.ok()) return made.status();
    ends[index] = std::move(made).value();
    if (!listen.http3) continue;
    Result<std::vector<UniqueFd>> sockets = address->udpSocketsFor(instance, loops);
    if (!sockets.ok()) return sockets.status();
    udp[index] = std::move(sockets).value();
  }
  SlotListeners out;
  for (uint32_t loop = 0; loop < loops; ++loop) {
    for (size_t index : shared) {
      const ListenConfig& listen = site.listens[index];
      ipc::ListenerSpec spec{loop, listen.address, listen.port, listen.tls.has_value()};
      spec.handoff = true;
      out.specs.push_back(spec);
      out.fds.push_back(std::move(ends[index][loop]));
      if (!listen.http3) continue;
      spec.quic = true;
      out.specs.push_back(std::move(spec));
      out.fds.push_back(std::move(udp[index][loop]));
    }
  }
  return out;
}

Status SharedListeners::adopt(const std::string& instance, const SiteConfig& site, uint32_t slot,
                              SlotListeners& handoffs) {
  for (size_t i = 0; i < handoffs.specs.size(); ++i) {
    const ipc::ListenerSpec& spec = handoffs.specs[i];
    // A UDP socket of a shared group is the worker's alone: nothing to pair it with.
    if (!spec.handoff || spec.quic) continue;
    const ListenConfig* listen = nullptr;
    for (const ListenConfig& l : site.listens) {
      if (l.address == spec.address && l.port == spec.port) listen = &l;
    }
    if (listen == nullptr) return common::notFound(spec.address + " is not in its config");
    // Fronts that died while no controller ran took their sockets along: the address is
    // opened anew, and this worker, whose channels nobody holds, is replaced.
    bool made = false;
    Result<SharedAddress*> address = ensureAddress(instance, *listen, &made);
    if (!address.ok()) return address.status();
    Result<UniqueFd> copy = UniqueFd::duplicate(handoffs.fds[i].get());
    if (!copy.ok()) return copy.status();
    SCALWS_RETURN_IF_ERROR((*address)->adoptChannel(instance, slot, spec.loop, std::move(*copy)));
  }
  return common::okStatus();
}

void SharedListeners::workerUp(const std::string& instance, uint32_t slot) {
  bool any = false;
  for (auto& [key, address] : addresses_) {
    if (!address->hasMember(instance)) continue;
    address->setSlotUp(instance, slot, true);
    any = true;
  }
  if (!any) return;
  // The claims as they are now (a re-attach computes them here first), and its instance's
  // workers hear them again: names may have changed while this one started.
  computeClaims(env_.instances());
  pushNames();
  if (env_.push_names) env_.push_names(instance, namesFor(instance));
}

void SharedListeners::workerDown(const std::string& instance, uint32_t slot) {
  for (auto& [key, address] : addresses_) {
    if (address->hasMember(instance)) address->setSlotUp(instance, slot, false);
  }
}

void SharedListeners::detach(const std::string& instance, std::function<void()> done) {
  auto waiting = std::make_shared<size_t>(1);
  auto one = [waiting, done] {
    if (--*waiting == 0) done();
  };
  for (auto& [key, address] : addresses_) {
    if (!address->hasMember(instance)) continue;
    ++*waiting;
    address->detachMember(instance, one);
  }
  deferCall(env_.loop, one);
}

void SharedListeners::release(const std::string& instance) {
  for (auto& [key, address] : addresses_) address->removeMember(instance);
  pushed_.erase(instance);
  refresh();
}

void SharedListeners::refresh() {
  computeClaims(env_.instances());
  pushNames();
}

const std::vector<std::string>& SharedListeners::namesOf(const std::string& instance,
                                                         const ListenConfig& listen) {
  CachedNames& cached = names_cache_[instance][listen.address];
  std::string key = namesKey(listen);
  if (cached.key == key && !key.empty()) return cached.names;
  Result<std::vector<std::string>> names = claimedNames(listen);
  if (!names.ok()) {
    LOG_WARN("instance %s: %s: claims no name: %s", instance.c_str(), listen.address.c_str(),
             names.status().message().c_str());
  }
  cached.key = key;
  cached.names = names.ok() ? std::move(names).value() : std::vector<std::string>();
  return cached.names;
}

void SharedListeners::computeClaims(const std::vector<InstanceView>& views) {
  // Running instances first: a name claimed twice (a certificate renewed with another's
  // name) stays with the one that serves it; then by name, so every front decides alike.
  std::vector<const InstanceView*> order;
  for (const InstanceView& v : views) order.push_back(&v);
  std::sort(order.begin(), order.end(), [](const InstanceView* a, const InstanceView* b) {
    if (a->running != b->running) return a->running;
    return a->name < b->name;
  });
  std::set<std::string> known;
  for (const InstanceView& v : views) known.insert(v.name);
  for (auto it = names_cache_.begin(); it != names_cache_.end();) {
    it = known.count(it->first) != 0 ? std::next(it) : names_cache_.erase(it);
  }
  for (auto& [key, address] : addresses_) {
    std::vector<SharedAddress::Claim> claims;
    for (const InstanceView* v : order) {
      const ListenConfig* listen = listenerOn(v->site, key);
      if (listen == nullptr || listen->tls.has_value() != address->listen().tls.has_value()) {
        continue;
      }
      claims.push_back({v->name, namesOf(v->name, *listen), listen->is_default});
    }
    address->setClaims(std::move(claims));
  }
}

std::vector<ipc::SharedAddressNames> SharedListeners::namesFor(const std::string& instance) const {
  std::vector<ipc::SharedAddressNames> out;
  for (const auto& [key, address] : addresses_) {
    if (address->hasMember(instance)) out.push_back(address->namesFor(instance));
  }
  return out;
}

void SharedListeners::pushNames() {
  std::set<std::string> members;
  for (const auto& [key, address] : addresses_) {
    for (const InstanceView& v : env_.instances()) {
      if (address->hasMember(v.name)) members.insert(v.name);
    }
  }
  for (const std::string& instance : members) {
    std::vector<ipc::SharedAddressNames> names = namesFor(instance);
    auto it = pushed_.find(instance);
    if (it != pushed_.end() && it->second == names) continue;
    pushed_[instance] = names;
    if (env_.push_names) env_.push_names(instance, names);
  }
}

// --- start-up and shutdown -------------------------------------------------------------------

void SharedListeners::reattach(std::function<void()> done) {
  Result<std::vector<state::FrontRecord>> rows = env_.store->listFronts();
  if (!rows.ok()) {
    LOG_ERROR("cannot read the fronts table: %s", rows.status().message().c_str());
    return deferCall(env_.loop, done);
  }
  std::vector<InstanceView> views = env_.instances();
  auto waiting = std::make_shared<size_t>(1);
  auto one = [waiting, done] {
    if (--*waiting == 0) done();
  };
  for (const state::FrontRecord& row : *rows) {
    const ListenConfig* listen = nullptr;
    for (const InstanceView& v : views) {
      if (listen == nullptr) listen = listenerOn(v.site, row.address);
    }
    if (listen == nullptr) {
      // No instance names this address any more: nothing to route; it is let go.
      LOG_INFO("front pid %lld of %s: no instance listens there; stopping it",
               static_cast<long long>(row.pid), row.address.c_str());
      SharedAddress* orphan = find(row.address);
      ListenConfig bare;
      Result<common::config::ListenAddress> parsed =
          common::config::parseListenAddress(row.address);
      if (!parsed.ok()) {
        Status forgotten = env_.store->forgetFront(row.pid);
        (void)forgotten;
        continue;
      }
      bare.address = row.address;
      bare.host = parsed->host;
      bare.port = parsed->port;
      if (orphan == nullptr) orphan = &make(row.address, bare);
      orphan->hold(true);
      ++*waiting;
      orphan->attachFront(row, one);
      continue;
    }
    SharedAddress* address = find(row.address);
    if (address == nullptr) address = &make(row.address, *listen);
    address->hold(true);
    ++*waiting;
    address->attachFront(row, one);
  }
  deferCall(env_.loop, one);
}

void SharedListeners::settle() {
  std::vector<SharedAddress*> idle;
  computeClaims(env_.instances());
  for (auto& [key, address] : addresses_) {
    if (address->stopping()) continue;
    if (address->hasMembers()) {
      address->completeFronts();
      address->hold(false);
    } else {
      idle.push_back(address.get());
    }
  }
  for (SharedAddress* address : idle) address->stop([] {});
  refresh();
}

void SharedListeners::stopAll(std::function<void()> done) {
  auto waiting = std::make_shared<size_t>(1);
  auto one = [waiting, done] {
    if (--*waiting == 0) done();
  };
  for (auto& [key, address] : addresses_) {
    ++*waiting;
    address->stop(one);
  }
  deferCall(env_.loop, one);
}

void SharedListeners::leaveAll() {
  for (auto& [key, address] : addresses_) address->leave();
}

// --- what is shown -------------------------------------------------------------------------

Json SharedListeners::describe() const {
  Json out = Json::array();
  for (const auto& [key, address] : addresses_) out.push_back(address->describe());
  return out;
}

Json SharedListeners::describeFor(const std::string& instance) const {
  Json out = Json::array();
  for (const auto& [key, address] : addresses_) {
    Json d = address->describe();
    for (const Json& i : d["instances"]) {
      if (i["name"] == instance) {
        out.push_back(std::move(d));
        break;
      }
    }
  }
  return out;
}

std::string SharedListeners::prometheus() const {
  if (addresses_.empty()) return "";
  std::string out;
  auto family = [&](const std::string& name, const char* help, const char* type) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto label = [](const std::string& value) {
    std::string escaped;
    for (char c : value) {
      if (c == '\\' || c == '"') escaped += '\\';
      escaped += c == '\n' ? 'n' : c;
    }
    return escaped;
  };
#define SCALWS_FRONT_PROMETHEUS(field, help)                                       \
  family("scalws_front_" #field "_total", help " on a shared address", "counter"); \
  for (const auto& [key, address] : addresses_) {                                  \
    out += "scalws_front_" #field "_total{address=\"" + label(key) + "\"} " +      \
           std::to_string(address->counters().field) + "\n";                       \
  }
  SCALWS_FRONT_COUNTERS(SCALWS_FRONT_PROMETHEUS)
#undef SCALWS_FRONT_PROMETHEUS
  family("scalws_front_waiting", "connections a front is still reading the first bytes of",
         "gauge");
  for (const auto& [key, address] : addresses_) {
    out += "scalws_front_waiting{address=\"" + label(key) + "\"} " +
           std::to_string(address->counters().waiting) + "\n";
  }
  family("scalws_front_instance_handoffs_total",
         "connections a shared address's fronts handed to an instance", "counter");
  for (const auto& [key, address] : addresses_) {
    Json d = address->describe();
    for (const Json& i : d["instances"]) {
      out += "scalws_front_instance_handoffs_total{address=\"" + label(key) + "\",instance=\"" +
             label(i["name"].get<std::string>()) + "\"} " +
             std::to_string(i["handoffs"].get<uint64_t>()) + "\n";
    }
  }
  return out;
}

}  // namespace scalws::controller
