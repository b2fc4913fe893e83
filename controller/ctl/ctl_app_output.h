// scalwsctl's human output for apps: `app list`, `app show` (and the answer of add,
// restart, assign and release), `app logs`. Pure (ctl_format.h); the JSON shapes are in
// controller/server/app_handlers.h.
#pragma once

#include <string>

#include "ipc/message.h"

namespace scalws::ctl {

std::string renderApps(const ipc::Json& result);
std::string renderApp(const ipc::Json& app);
std::string renderAppLogs(const ipc::Json& result);

}  // namespace scalws::ctl
