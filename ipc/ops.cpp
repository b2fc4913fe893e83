#include "ipc/ops.h"

#include <array>

namespace scalws::ipc {
namespace {

constexpr Role kController = Role::kController;
constexpr Role kWorker = Role::kWorker;
constexpr Role kCtl = Role::kCtl;
constexpr Access kRead = Access::kRead;
constexpr Access kWrite = Access::kWrite;

// Names are unique (a test checks). Args and results are each op's own contract,
// documented where its handler lives; the summary says what the op is for.
constexpr std::array kOps = {
    // Worker channel (socketpair per worker).
    OpSpec{"hello", kWorker, kController, kRead, true, "a worker announces itself (pid)"},
    OpSpec{"config", kController, kWorker, kWrite, true, "the instance's config and CPU set"},
    OpSpec{"listeners", kController, kWorker, kWrite, true, "listener sockets, as fds"},
    OpSpec{"ready", kWorker, kController, kRead, true, "the worker serves (or says why not)"},
    OpSpec{"reload", kController, kWorker, kWrite, true, "swap to a new validated config"},
    OpSpec{"stop", kController, kWorker, kWrite, true, "stop gracefully within a timeout"},
    OpSpec{"metrics", kWorker, kController, kRead, false, "periodic counters"},

    // Control socket (scalwsctl -> controller).
    OpSpec{"status", kCtl, kController, kRead, true, "controller and host summary"},
    OpSpec{"cpu.list", kCtl, kController, kRead, true, "CPUs and their assignments"},
    OpSpec{"instance.list", kCtl, kController, kRead, true, "every instance"},
    OpSpec{"instance.show", kCtl, kController, kRead, true, "one instance in detail"},
    OpSpec{"instance.metrics", kCtl, kController, kRead, true, "one instance's metrics"},
    OpSpec{"instance.logs", kCtl, kController, kRead, true, "one instance's recent events"},
    OpSpec{"instance.add", kCtl, kController, kWrite, true, "store a new instance"},
    OpSpec{"instance.set", kCtl, kController, kWrite, true, "replace an instance's config"},
    OpSpec{"instance.remove", kCtl, kController, kWrite, true, "stop and delete an instance"},
    OpSpec{"instance.start", kCtl, kController, kWrite, true, "start; replies once ready"},
    OpSpec{"instance.stop", kCtl, kController, kWrite, true, "stop gracefully"},
    OpSpec{"instance.restart", kCtl, kController, kWrite, true, "stop then start"},
    OpSpec{"instance.reload", kCtl, kController, kWrite, true, "send the stored config"},
    OpSpec{"pool.list", kCtl, kController, kRead, true, "PHP pools"},
    OpSpec{"pool.show", kCtl, kController, kRead, true, "one PHP pool in detail"},
    OpSpec{"pool.add", kCtl, kController, kWrite, true, "register a PHP pool"},
    OpSpec{"pool.remove", kCtl, kController, kWrite, true, "unregister a PHP pool"},
    OpSpec{"pool.assign", kCtl, kController, kWrite, true, "assign a pool to an instance"},
    OpSpec{"pool.release", kCtl, kController, kWrite, true, "unassign a pool"},
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
