#include "ipc/ops.h"

#include <array>

namespace scalws::ipc {
namespace {

constexpr Role kController = Role::kController;
constexpr Role kWorker = Role::kWorker;
constexpr Role kCtl = Role::kCtl;
constexpr Role kFront = Role::kFront;
constexpr Access kRead = Access::kRead;
constexpr Access kWrite = Access::kWrite;

// Names are unique (a test checks). Args and results are each op's own contract,
// documented where its handler lives; the summary says what the op is for.
constexpr std::array kOps = {
    // Worker channel (socketpair per worker).
    OpSpec{op::kHello, kWorker, kController, kRead, true, "a worker announces itself (pid)"},
    OpSpec{op::kConfig, kController, kWorker, kWrite, true, "the instance's config and CPU set"},
    OpSpec{op::kListeners, kController, kWorker, kWrite, true, "listener sockets, as fds"},
    OpSpec{op::kReady, kWorker, kController, kRead, true, "the worker serves (or says why not)"},
    OpSpec{op::kReload, kController, kWorker, kWrite, true, "swap to a new validated config"},
    OpSpec{op::kStop, kController, kWorker, kWrite, true, "stop gracefully within a timeout"},
    OpSpec{op::kMetrics, kWorker, kController, kRead, false, "periodic counters"},
    OpSpec{op::kStderr, kController, kWorker, kWrite, true,
           "a new stderr (one fd: a pipe the re-attached controller reads)"},
    OpSpec{op::kCachePurge, kController, kWorker, kWrite, true,
           "drop cached answers (a URL, a prefix, all)"},
    OpSpec{op::kSharedNames, kController, kWorker, kWrite, true,
           "who claims which names on the shared addresses it listens on"},
    OpSpec{op::kReopenLogs, kController, kWorker, kWrite, true,
           "the access log reopened after a rotation (one fd, put in place of the old)"},

    // Front channel (socketpair per front of a shared address).
    OpSpec{op::kFrontHello, kFront, kController, kRead, true, "a front announces itself"},
    OpSpec{op::kFrontConfig, kController, kFront, kWrite, true,
           "its address, limits and user, with the listening socket"},
    OpSpec{op::kFrontReady, kFront, kController, kRead, true, "it accepts (or says why not)"},
    OpSpec{op::kFrontRoute, kController, kFront, kWrite, true,
           "an instance's names and the channels to its workers, as fds"},
    OpSpec{op::kFrontUnroute, kController, kFront, kWrite, true, "forget an instance"},
    OpSpec{op::kFrontStop, kController, kFront, kWrite, true,
           "stop accepting, hand over what waits, exit"},
    OpSpec{op::kFrontMetrics, kFront, kController, kRead, false, "periodic counters"},
    OpSpec{op::kFrontStderr, kController, kFront, kWrite, true,
           "a new stderr (one fd) for a re-attached controller"},

    // Control socket (scalwsctl -> controller).
    OpSpec{op::kStatus, kCtl, kController, kRead, true, "controller and host summary"},
    OpSpec{op::kCpuList, kCtl, kController, kRead, true, "CPUs and their assignments"},
    OpSpec{op::kInstanceList, kCtl, kController, kRead, true, "every instance"},
    OpSpec{op::kInstanceShow, kCtl, kController, kRead, true, "one instance in detail"},
    OpSpec{op::kInstanceMetrics, kCtl, kController, kRead, true, "one instance's metrics"},
    OpSpec{op::kInstanceLogs, kCtl, kController, kRead, true, "one instance's recent events"},
    OpSpec{op::kInstanceAdd, kCtl, kController, kWrite, true, "store a new instance"},
    OpSpec{op::kInstanceSet, kCtl, kController, kWrite, true, "replace an instance's config"},
    OpSpec{op::kInstanceRemove, kCtl, kController, kWrite, true, "stop and delete an instance"},
    OpSpec{op::kInstanceStart, kCtl, kController, kWrite, true, "start; replies once ready"},
    OpSpec{op::kInstanceStop, kCtl, kController, kWrite, true, "stop gracefully"},
    OpSpec{op::kInstanceRestart, kCtl, kController, kWrite, true, "stop then start"},
    OpSpec{op::kInstanceReload, kCtl, kController, kWrite, true, "send the stored config"},
    OpSpec{op::kInstanceCachePurge, kCtl, kController, kWrite, true,
           "drop cached answers in every worker; replies once all did"},
    OpSpec{op::kInstanceCacheShow, kCtl, kController, kRead, true, "an instance's caches"},
    OpSpec{op::kInstanceReopenLogs, kCtl, kController, kWrite, true,
           "reopen the log files of an instance (or of all) after a rotation"},
    OpSpec{op::kPoolList, kCtl, kController, kRead, true, "PHP pools"},
    OpSpec{op::kPoolShow, kCtl, kController, kRead, true, "one PHP pool in detail"},
    OpSpec{op::kPoolAdd, kCtl, kController, kWrite, true, "register a PHP pool"},
    OpSpec{op::kPoolRemove, kCtl, kController, kWrite, true, "unregister a PHP pool"},
    OpSpec{op::kPoolAssign, kCtl, kController, kWrite, true, "assign a pool to an instance"},
    OpSpec{op::kPoolRelease, kCtl, kController, kWrite, true, "unassign a pool"},
    OpSpec{op::kAppList, kCtl, kController, kRead, true, "Node.js and Python apps"},
    OpSpec{op::kAppShow, kCtl, kController, kRead, true, "one app: processes, sandbox"},
    OpSpec{op::kAppAdd, kCtl, kController, kWrite, true, "register and start an app"},
    OpSpec{op::kAppRemove, kCtl, kController, kWrite, true, "stop and unregister an app"},
    OpSpec{op::kAppRestart, kCtl, kController, kWrite, true, "stop and start an app"},
    OpSpec{op::kAppLogs, kCtl, kController, kRead, true, "the end of an app's log"},
    OpSpec{op::kAppAssign, kCtl, kController, kWrite, true, "assign an app to an instance"},
    OpSpec{op::kAppRelease, kCtl, kController, kWrite, true, "unassign an app"},
};

}  // namespace

std::string_view roleName(Role role) {
  switch (role) {
    case Role::kController:
      return "controller";
    case Role::kWorker:
      return "worker";
    case Role::kCtl:
      return "scalwsctl";
    case Role::kFront:
      return "front";
  }
  return "unknown";
}

const OpSpec* findOp(std::string_view name) {
  for (const OpSpec& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

const OpSpec* findOp(std::string_view name, Role from, Role to) {
  const OpSpec* op = findOp(name);
  return op != nullptr && op->from == from && op->to == to ? op : nullptr;
}

std::span<const OpSpec> allOps() {
  return kOps;
}

}  // namespace scalws::ipc
