// SharedHosts: which host names this instance answers on an address it shares with other
// instances, for the connections the address's front handed over (worker_loop.h). The
// front routed the connection by its first request (or its SNI); a later request on it —
// a keep-alive HTTP/1.1 connection that switches Host, or an HTTP/2 connection a browser
// coalesces across names its certificate covers — may name a host another instance
// answers, and gets 421 Misdirected Request (RFC 9110 §15.5.20) so the client retries on a
// connection of its own. The rule is the front's table (common/net/host_name_table.h), so
// both decide alike.
//
// Built from what the controller sent (ipc/shared_names.h), read-only after; a connection
// keeps the one it was handed over with.
#pragma once

#include <memory>
#include <string_view>

#include "common/net/host_name_table.h"
#include "ipc/shared_names.h"

namespace scalws::worker {

class SharedHosts {
 public:
  static std::shared_ptr<const SharedHosts> build(const ipc::SharedAddressNames& names);

  // `host` as Request::host has it (lower-case, without port); "" when none was sent.
  bool serves(std::string_view host) const { return table_.find(host) == kMine; }

 private:
  static constexpr uint32_t kMine = 0;
  static constexpr uint32_t kOther = 1;
  common::net::HostNameTable table_;
};

}  // namespace scalws::worker
