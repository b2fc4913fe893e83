// The listening sockets of an instance, bound by the controller (so ports below 1024 work
// and workers never bind): for each worker slot, one SO_REUSEPORT socket per [[listen]] and
// per loop of that worker. The controller keeps its copies while the instance runs, so a
// worker that dies leaves its accept queue to its replacement instead of resetting it.
#pragma once

#include <cstdint>
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

// What a worker with `loops` loops listens on: loop-major, then [[listen]] order.
std::vector<ListenerSpec> slotListenerSpecs(const common::config::SiteConfig& site, uint32_t loops);
// Binds every listener of slotListenerSpecs().
common::Result<SlotListeners> bindSlotListeners(const common::config::SiteConfig& site,
                                                uint32_t loops);

// The port a socket is bound to (0 when it is not a bound TCP socket).
uint16_t boundPort(int fd);

}  // namespace scalws::controller
