// scalwsctl's human output for PHP pools: `pool list`, `pool show` (and the answer of
// add and release), `pool assign`. Pure (ctl_format.h); the JSON shapes are in
// controller/server/pool_handlers.h.
#pragma once

#include <string>

#include "ipc/message.h"

namespace scalws::ctl {

std::string renderPools(const ipc::Json& result);
std::string renderPool(const ipc::Json& pool);
std::string renderAssigned(const ipc::Json& pool);

}  // namespace scalws::ctl
