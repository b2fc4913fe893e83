// SharedListeners: the addresses instances share, and what the rest of the controller asks
// of them. An instance whose listener is the only one on its address keeps listening
// directly (its own SO_REUSEPORT sockets, no front, nothing added per connection); one
// whose address another instance's config names too goes through that address's fronts
// (shared_address.h). The choice is made when the instance starts, so an instance that
// started alone keeps its direct listeners until it restarts, and a second instance's start
// on that address is refused until then (saying so).
//
// Who claims which name comes from the configs (claimed_names.h): a running instance's
// running config, else its stored one, so a stopped instance's names stay claimed (its
// clients get a 503 or an internal_error alert, never another site). After every change —
// an instance starts, stops, reloads, is added, changed or removed, a worker comes or goes —
// refresh() recomputes each address's table, sends the fronts what changed, and sends the
// workers of every instance whose names changed a `shared_names`.
//
// Used by the Controller (life cycle, status) and by each InstanceSupervisor (its workers'
// channels). Single-threaded, on the controller's loop.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "controller/instances/instance_listeners.h"
#include "controller/shared/shared_address.h"
#include "controller/state/state_store.h"
#include "ipc/message.h"
#include "ipc/shared_names.h"

namespace scalws::controller {

// An instance as the registry sees it.
struct InstanceView {
  std::string name;
  common::config::SiteConfig site;  // what it runs, else what it would run
  bool running = false;
};

class SharedListeners {
 public:
  struct Env {
    uv_loop_t* loop = nullptr;
    state::StateStore* store = nullptr;
    SharedListenersOptions options;
    std::function<std::vector<InstanceView>()> instances;
    // Sends `names` to the instance's serving workers (a `shared_names`).
    std::function<void(const std::string& instance, const std::vector<ipc::SharedAddressNames>&)>
        push_names;
    // Makes sure the fronts' user exists (made when missing) before an address opens.
    std::function<common::Status()> ensure_user;
  };

  explicit SharedListeners(Env env);
  ~SharedListeners();
  SharedListeners(const SharedListeners&) = delete;
  SharedListeners& operator=(const SharedListeners&) = delete;

  // Which of `site`'s listeners go through a front when `instance` starts (indices into
  // site.listens): those on an address a front serves already, or that another instance's
  // config names too.
  std::set<size_t> sharedListens(const std::string& instance,
                                 const common::config::SiteConfig& site) const;

  // `instance` starts with `site`; slot s of its workers runs loops[s] loops. Opens the
  // addresses that are new (refused when something else holds one: an instance that listens
  // there directly is named). Returns, per slot, the channel ends to hand its worker, as
  // handoff listeners in slotListenerSpecs order (loop-major, then listen order).
  common::Result<std::vector<SlotListeners>> join(const std::string& instance,
                                                  const common::config::SiteConfig& site,
                                                  const std::set<size_t>& shared,
                                                  const std::vector<uint32_t>& loops);
  // The channel ends of one slot (made where missing: a slot whose worker is replaced after
  // a re-attach that could not keep its channels), as join() lays them out.
  common::Result<SlotListeners> slotChannels(const std::string& instance,
                                             const common::config::SiteConfig& site,
                                             const std::set<size_t>& shared, uint32_t slot,
                                             uint32_t loops);
  // A re-attached worker's channel ends (its handoff listeners, copies): each paired with
  // the sending end a re-attached front holds. An error when one cannot be (the worker is
  // then replaced, which makes new channels).
  common::Status adopt(const std::string& instance, const common::config::SiteConfig& site,
                       uint32_t slot, SlotListeners& handoffs);
  void workerUp(const std::string& instance, uint32_t slot);
  void workerDown(const std::string& instance, uint32_t slot);
  // The instance stops: out of the fronts' tables, `done` once each front answered.
  void detach(const std::string& instance, std::function<void()> done);
  // Its workers are gone: its channels close (an address nobody runs on closes shortly).
  void release(const std::string& instance);
  // Claims may have changed (a config stored, removed or reloaded): tables and names again.
  void refresh();
  // What the workers of `instance` check hosts against (`listeners`, `shared_names`).
  std::vector<ipc::SharedAddressNames> namesFor(const std::string& instance) const;

  // Start-up: the fronts of the DB re-attached (or let go); `done` once each answered or
  // was given up.
  void reattach(std::function<void()> done);
  // After every instance re-attached or started: addresses missing fronts get them, tables
  // go out in full.
  void settle();
  // Shutdown: every front stopped (graceful), `done` once they exited; or left serving.
  void stopAll(std::function<void()> done);
  void leaveAll();

  // For `status`: [{address, tls, default, fronts, instances, counters}]; for `instance
  // show` and `instance metrics`: the addresses `instance` is on.
  ipc::Json describe() const;
  ipc::Json describeFor(const std::string& instance) const;
  // Prometheus text of every address's figures (scalws_front_*).
  std::string prometheus() const;

 private:
  SharedAddress* find(const std::string& key) const;
  SharedAddress& make(const std::string& key, const common::config::ListenConfig& listen);
  // The address of `listen`, opened when it is new (*opened then says so); refused while it
  // is still closing, or when something else holds it.
  common::Result<SharedAddress*> ensureAddress(const std::string& instance,
                                               const common::config::ListenConfig& listen,
                                               bool* opened);
  // The claims of every address, from the instances' configs.
  void computeClaims(const std::vector<InstanceView>& views);
  const std::vector<std::string>& namesOf(const std::string& instance,
                                          const common::config::ListenConfig& listen);
  void pushNames();

  Env env_;
  std::map<std::string, std::unique_ptr<SharedAddress>> addresses_;
  // claimedNames() per instance and listener, so certificate files are read once per change.
  struct CachedNames {
    std::string key;
    std::vector<std::string> names;
  };
  std::map<std::string, std::map<std::string, CachedNames>> names_cache_;
  std::map<std::string, std::vector<ipc::SharedAddressNames>> pushed_;
  std::vector<std::unique_ptr<SharedAddress>> closed_;  // freed on the next turn
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace scalws::controller
