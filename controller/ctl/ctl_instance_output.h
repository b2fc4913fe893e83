// scalwsctl's human output for the controller and its instances: `status` (without its
// metrics lines, ctl_metrics_output.h), `cpu list`, `instance list|show|logs` and the
// one-line answer of the instance actions. Pure (ctl_format.h); the JSON shapes are in
// controller/server/control_handlers.h.
#pragma once

#include <string>

#include "ipc/message.h"

namespace scalws::ctl {

std::string renderControllerStatus(const ipc::Json& result);
std::string renderCpus(const ipc::Json& result);
std::string renderInstanceList(const ipc::Json& result);
std::string renderInstanceShow(const ipc::Json& result);
std::string renderEvents(const ipc::Json& result);  // instance.logs
std::string renderInstanceLine(const ipc::Json& summary);

}  // namespace scalws::ctl
