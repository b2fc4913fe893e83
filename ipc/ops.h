// The op table: which process may send which op to whom (NGINX Unit's send matrix).
//
// Every op ScalWS speaks is one row of kOps in ipc/ops.cpp; nothing else decides. An
// Endpoint accepts a request only if its row says peer -> local (else unknown_op), refuses
// a write op from an unprivileged scalwsctl (permission_denied, ipc/peer_credentials.h),
// and sends only what its row allows. Adding an op = adding a row there.
#pragma once

#include <span>
#include <string_view>

namespace scalws::ipc {

enum class Role { kController, kWorker, kCtl };

// kWrite ops change state; over the control socket only root and group scalws may send
// them. Worker-channel ops are marked too, but there the peer is trusted by construction.
enum class Access { kRead, kWrite };

struct OpSpec {
  std::string_view name;
  Role from;
  Role to;
  Access access;
  bool expects_reply;  // false: sent as a notification (id 0), never answered
  std::string_view summary;
};

std::string_view roleName(Role role);

// The row for `name`, or nullptr when no such op exists.
const OpSpec* findOp(std::string_view name);

// The row for `name` when it may travel from -> to, else nullptr.
const OpSpec* findOp(std::string_view name, Role from, Role to);

std::span<const OpSpec> allOps();

}  // namespace scalws::ipc
