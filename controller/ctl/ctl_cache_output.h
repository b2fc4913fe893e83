// scalwsctl's rendering of an instance's caches: instance cache show and purge.
#pragma once

#include <string>

#include "ipc/message.h"

namespace scalws::ctl {

std::string renderCacheShow(const ipc::Json& result);
std::string renderCachePurge(const ipc::Json& result);

}  // namespace scalws::ctl
