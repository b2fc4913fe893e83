// The listening sockets of an instance, bound by the controller (so ports below 1024 work
// and workers never bind): for each worker slot, one SO_REUSEPORT socket per [[listen]] and
// per loop of that worker, and for a listener with http3 = true one UDP socket more per
// loop. The controller keeps its copies while the instance runs, so a worker that dies
// leaves its accept queue (and its datagrams) to its replacement instead of resetting it.
//
// A UDP socket's steering id is its place in the port's reuseport group: a start binds the
// group from empty (checkAddressFree first), slot after slot and loop after loop, so the
// id is the count of UDP sockets bound for that address before it; the connection IDs the
// worker issues carry it and the group's BPF program steers by it (worker/quic/).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "ipc/worker_messages.h"

namespace scalws::controller {

using ipc::ListenerSpec;

// One worker's listeners: specs[i] describes fds[i].
struct SlotListeners {
  std::vector<ListenerSpec> specs;
  std::vector<common::UniqueFd> fds;

  // Copies of every fd (close-on-exec), to hand to a worker while keeping ours.
  common::Result<std::vector<common::UniqueFd>> duplicateFds() const;
};

// Binds one listener socket: SO_REUSEADDR + SO_REUSEPORT, IPv6 sockets
// v6-only, non-blocking, close-on-exec, backlog 4096.
common::Result<common::UniqueFd> bindListener(const common::config::ListenConfig& listen);

// Whether anyone listens on the address already. SO_REUSEPORT lets a socket join another
// process's group on the same port (any process of the same uid: root here), where it would
// silently share that process's traffic; so a start first binds a probe without
// SO_REUSEPORT, which fails (kAlreadyExists) when the address is taken in any way.
common::Status checkAddressFree(const common::config::ListenConfig& listen);

// What a worker with `loops` loops listens on: loop-major, then [[listen]] order (a
// listener's UDP socket right after its TCP one). `first_steering` is the number of loops
// of the slots before this one (the steering id of this slot's first UDP socket). The
// listeners in `shared` (indices into site.listens) go through a shared address's front:
// they come after all the others, as one handoff channel per loop (loop-major, then listen
// order; controller/shared/shared_listeners.h makes them).
std::vector<ListenerSpec> slotListenerSpecs(const common::config::SiteConfig& site, uint32_t loops,
                                            uint32_t first_steering = 0,
                                            const std::set<size_t>& shared = {});
// Binds every listener of slotListenerSpecs() but the shared ones (specs and fds describe
// what was bound; the caller appends the channels).
common::Result<SlotListeners> bindSlotListeners(const common::config::SiteConfig& site,
                                                uint32_t loops, uint32_t first_steering = 0,
                                                const std::set<size_t>& shared = {});

// The port a socket is bound to (0 when it is not a bound TCP socket).
uint16_t boundPort(int fd);

}  // namespace scalws::controller
