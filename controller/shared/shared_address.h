// SharedAddress: one host and port several instances listen on, as the controller runs it —
// its listening sockets, its fronts, the hand-off channels to the workers of the instances
// running there, and the table of who claims which name.
//
// Sockets: one per front (SO_REUSEPORT, TCP_DEFER_ACCEPT so a client is accepted once its
// first bytes are there), bound here and kept: a front that dies leaves its accept queue to
// its replacement, as a worker's listeners do. With HTTP/3, a UDP group too: its first
// socket is front 0's and receives everything; each worker loop gets one more, to send.
// Fronts: `processes` of them, unpinned, restarted after a backoff when one dies
// (restart_policy.h; a front never gives up).
//
// Members: the instances running here. Each has one channel per worker loop
// (handoff_channel.h); a channel is in the fronts' tables only while its worker is up. When
// a worker dies its channels leave the tables and, once every front answered, what waits in
// them is handed on to the instance's other workers (or left for the replacement when
// there is none). Claims (setClaims) come from the registry (shared_listeners.h): every
// instance whose config names this address, running or not, in the order that decides a
// name claimed twice.
//
// Everything runs on the controller's loop; callbacks never fire from inside a call here.
// The fronts' side is in shared_address_fronts.cpp, the channels and table here.
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
#include "common/unique_fd.h"
#include "controller/loop_handles.h"
#include "controller/restart_policy.h"
#include "controller/shared/front_process.h"
#include "controller/shared/handoff_channel.h"
#include "controller/state/state_store.h"
#include "ipc/front_messages.h"
#include "ipc/message.h"
#include "ipc/shared_names.h"

namespace scalws::controller {

struct SharedListenersOptions {
  std::string front_binary;  // absolute path of scalws-front
  std::string front_user = "scalws-front";
  uint32_t processes = 1;  // fronts per shared address
  uint64_t header_timeout_ms = 10'000;
  uint32_t max_waiting = 4096;  // per front
  RestartLimits restart;
};

class SharedAddress {
 public:
  struct Env {
    uv_loop_t* loop = nullptr;
    state::StateStore* store = nullptr;
    const SharedListenersOptions* options = nullptr;
    // The address has no member and no front any more (it may be forgotten).
    std::function<void(SharedAddress&)> on_empty;
  };
  struct Claim {
    std::string instance;
    std::vector<std::string> names;
    bool is_default = false;
  };

  SharedAddress(Env env, std::string key, const common::config::ListenConfig& listen);
  ~SharedAddress();
  SharedAddress(const SharedAddress&) = delete;
  SharedAddress& operator=(const SharedAddress&) = delete;

  // A new address: checks nobody holds it, binds the sockets and starts the fronts.
  common::Status open();
  // Re-attach: the front of `row`, kept when it answers with a listening socket on this
  // address (then its socket is kept as ours and its channel ends for adoptChannel), else
  // killed. `done` once it answered or was given up.
  void attachFront(const state::FrontRecord& row, std::function<void()> done);
  // After re-attach: fronts that did not come back (or are missing) are started anew.
  void completeFronts();
  // While held (a controller re-attaching), nothing is sent to the fronts: the tables they
  // kept route on until every instance is back, and only then are replaced in full.
  void hold(bool held);

  // With HTTP/3: `loops` new UDP sockets in the address's group for the slot's loops,
  // which only send (the front receives every datagram; common/net/quic_steering.h).
  // Refused when the instance's QUIC routes would collide with another member's.
  common::Result<std::vector<common::UniqueFd>> udpSocketsFor(const std::string& instance,
                                                              uint32_t loops);
  bool quic() const { return quic_; }

  // Instance `instance` runs here; its worker slot `slot` has `loops` loops: one channel
  // each (made when missing), down until setSlotUp. Returns the receiving ends in loop
  // order (copies).
  common::Result<std::vector<common::UniqueFd>> channelsFor(const std::string& instance,
                                                            uint32_t slot, uint32_t loops);
  // A re-attached worker's receiving end (a copy) for (slot, loop): paired with the sending
  // end an attached front holds (by the kernel's name of the pair). kNotFound when no
  // front holds its other end.
  common::Status adoptChannel(const std::string& instance, uint32_t slot, uint32_t loop,
                              common::UniqueFd receive);
  void setSlotUp(const std::string& instance, uint32_t slot, bool up);
  // Every channel of the instance out of the tables; `done` once each front answered.
  void detachMember(const std::string& instance, std::function<void()> done);
  // The instance's workers are gone: its channels close. With no member left for
  // kEmptyLingerMs (an `instance restart` starts again well within it), the fronts stop
  // and, once they exited, on_empty fires.
  void removeMember(const std::string& instance);
  static constexpr uint64_t kEmptyLingerMs = 2'000;
  // Stopping (or stopped): a member cannot join any more.
  bool stopping() const { return stopping_; }
  bool hasMember(const std::string& instance) const { return members_.count(instance) != 0; }
  bool hasMembers() const { return !members_.empty(); }

  // Who claims what here now; what changed goes to the fronts.
  void setClaims(std::vector<Claim> claims);
  // What a worker of `instance` checks hosts against here.
  ipc::SharedAddressNames namesFor(const std::string& instance) const;

  // Stops the fronts (graceful), closes the sockets; `done` once they exited.
  void stop(std::function<void()> done);
  void leave();  // the controller exits: fronts keep serving, untouched

  const std::string& key() const { return key_; }
  const common::config::ListenConfig& listen() const { return listen_; }
  // {address, tls, fronts:[{slot, pid, state, started_ms, restarts, sandbox}], default,
  //  instances:[{name, names, default, running, workers_up, handoffs}], counters}
  ipc::Json describe() const;
  ipc::FrontCounters counters() const;
  uint64_t handoffs(const std::string& instance) const;

 private:
  struct Channel {
    uint32_t slot = 0;
    uint32_t loop = 0;
    common::UniqueFd send;
    common::UniqueFd receive;
  };
  struct Member {
    std::vector<Channel> channels;
    std::set<uint32_t> up;  // slots whose worker serves
    size_t next = 0;        // where a drain hands the next connection
  };
  // What a front's table holds for one instance, as last sent.
  struct Sent {
    std::vector<std::string> names;
    bool is_default = false;
    std::vector<ipc::FrontChannel> channels;
    friend bool operator==(const Sent&, const Sent&) = default;
  };
  struct Front {
    uint32_t index = 0;
    common::UniqueFd listener;  // ours
    std::unique_ptr<FrontProcess> process;
    std::unique_ptr<LoopTimer> restart_timer;
    uint32_t restarts = 0;
    std::map<std::string, Sent> sent;
    size_t in_flight = 0;     // route/unroute requests not answered yet
    ipc::FrontCounters last;  // its latest figures
    std::map<std::string, uint64_t> last_handoffs;
  };

  // One front's listening socket: SO_REUSEPORT (openListenSocket) and TCP_DEFER_ACCEPT.
  common::Result<common::UniqueFd> bindFrontSocket() const;
  common::Status spawnFront(Front& front);
  FrontProcess::Callbacks callbacks();
  Front* frontOf(const FrontProcess& process);
  void onFrontReady(FrontProcess& process, const common::Status& status);
  void onFrontExit(FrontProcess& process, const std::string& how);
  void scheduleRespawn(Front& front, uint64_t delay_ms);
  void push();                // every front
  void pushTo(Front& front);  // what changed in its table
  void whenAnswered(std::function<void()> done);
  void answered(Front& front);
  void drain(const std::string& instance, uint32_t slot);
  void bury(std::unique_ptr<FrontProcess> process);
  void adoptFront(std::unique_ptr<FrontProcess> process);
  void maybeEmpty();

  Env env_;
  std::string key_;
  common::config::ListenConfig listen_;  // as a front sees it: http3 off
  // HTTP/3: the group's first UDP socket, the one every datagram reaches (front 0 reads
  // it). Kept here too, so it keeps its place while front 0 restarts.
  bool quic_ = false;
  common::UniqueFd udp_;
  std::vector<Front> fronts_;
  std::map<std::string, Member> members_;
  std::vector<Claim> claims_;
  std::vector<std::function<void()>> waiting_answers_;
  // Channel ends attached fronts held, by the name of the receiving end, until adopted.
  std::map<std::string, common::UniqueFd> orphan_sends_;
  // Figures of fronts that exited, so totals never go back.
  ipc::FrontCounters retired_;
  std::map<std::string, uint64_t> retired_handoffs_;
  RestartPolicy policy_;
  LoopTimer linger_;
  bool held_ = false;
  bool stopping_ = false;
  std::function<void()> stopped_;
  std::vector<std::unique_ptr<FrontProcess>> graveyard_;
  // Re-attaching, with what to call once each answered.
  std::vector<std::pair<std::unique_ptr<FrontProcess>, std::function<void()>>> attaching_;
  LoopTimer reaper_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace scalws::controller
