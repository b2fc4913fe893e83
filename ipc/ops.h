// The op table: which process may send which op to whom (NGINX Unit's send matrix).
//
// Every op ScalWS speaks is one row of kOps in ipc/ops.cpp; nothing else decides. An
// Endpoint accepts a request only if its row says peer -> local (else unknown_op), refuses
// a write op from an unprivileged scalwsctl (permission_denied, ipc/peer_credentials.h),
// and sends only what its row allows. Adding an op = a name below, a row there, and a row
// in the handler table (ipc/handler_table.h) of the process that accepts it. Names are
// spelled only here: the rows, the handler tables and the senders use these constants.
#pragma once

#include <span>
#include <string_view>

namespace scalws::ipc {

namespace op {
// Worker channel (a socketpair per worker; the worker's attach socket after a restart).
inline constexpr std::string_view kHello = "hello";
inline constexpr std::string_view kConfig = "config";
inline constexpr std::string_view kListeners = "listeners";
inline constexpr std::string_view kReady = "ready";
inline constexpr std::string_view kReload = "reload";
inline constexpr std::string_view kStop = "stop";
inline constexpr std::string_view kMetrics = "metrics";
inline constexpr std::string_view kStderr = "stderr";
inline constexpr std::string_view kCachePurge = "cache_purge";
inline constexpr std::string_view kSharedNames = "shared_names";
inline constexpr std::string_view kReopenLogs = "reopen_logs";
// Front channel (a socketpair per front; its attach socket after a controller restart).
inline constexpr std::string_view kFrontHello = "front.hello";
inline constexpr std::string_view kFrontConfig = "front.config";
inline constexpr std::string_view kFrontReady = "front.ready";
inline constexpr std::string_view kFrontRoute = "front.route";
inline constexpr std::string_view kFrontUnroute = "front.unroute";
inline constexpr std::string_view kFrontStop = "front.stop";
inline constexpr std::string_view kFrontMetrics = "front.metrics";
inline constexpr std::string_view kFrontStderr = "front.stderr";
// Control socket (scalwsctl -> controller).
inline constexpr std::string_view kStatus = "status";
inline constexpr std::string_view kCpuList = "cpu.list";
inline constexpr std::string_view kInstanceList = "instance.list";
inline constexpr std::string_view kInstanceShow = "instance.show";
inline constexpr std::string_view kInstanceMetrics = "instance.metrics";
inline constexpr std::string_view kInstanceLogs = "instance.logs";
inline constexpr std::string_view kInstanceAdd = "instance.add";
inline constexpr std::string_view kInstanceSet = "instance.set";
inline constexpr std::string_view kInstanceRemove = "instance.remove";
inline constexpr std::string_view kInstanceStart = "instance.start";
inline constexpr std::string_view kInstanceStop = "instance.stop";
inline constexpr std::string_view kInstanceRestart = "instance.restart";
inline constexpr std::string_view kInstanceReload = "instance.reload";
inline constexpr std::string_view kInstanceCachePurge = "instance.cache.purge";
inline constexpr std::string_view kInstanceCacheShow = "instance.cache.show";
inline constexpr std::string_view kInstanceReopenLogs = "instance.reopen_logs";
inline constexpr std::string_view kPoolList = "pool.list";
inline constexpr std::string_view kPoolShow = "pool.show";
inline constexpr std::string_view kPoolAdd = "pool.add";
inline constexpr std::string_view kPoolRemove = "pool.remove";
inline constexpr std::string_view kPoolAssign = "pool.assign";
inline constexpr std::string_view kPoolRelease = "pool.release";
inline constexpr std::string_view kAppList = "app.list";
inline constexpr std::string_view kAppShow = "app.show";
inline constexpr std::string_view kAppAdd = "app.add";
inline constexpr std::string_view kAppRemove = "app.remove";
inline constexpr std::string_view kAppRestart = "app.restart";
inline constexpr std::string_view kAppLogs = "app.logs";
inline constexpr std::string_view kAppAssign = "app.assign";
inline constexpr std::string_view kAppRelease = "app.release";
}  // namespace op

enum class Role { kController, kWorker, kCtl, kFront };

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
