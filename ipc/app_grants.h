// The apps the controller gives an instance's worker: the `apps` field of the `config` and
// `reload` messages (and of a re-attaching worker's hello).
//
//   "apps": [{"name": "api", "sockets": ["/run/scalws/apps/shop-api/0.sock", ...]}, ...]
//
// `name` is what the instance's app routes call the app (the name it is assigned under,
// `app assign APP INSTANCE --as NAME`), `sockets` the unix sockets its processes listen on,
// one per process (node) or one (a gunicorn/uvicorn master). Absent field: no apps (and
// the field is left out then, so the settings of a worker that has none read as they did
// before apps existed).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::ipc {

struct AppGrant {
  std::string name;
  std::vector<std::string> sockets;

  friend bool operator==(const AppGrant&, const AppGrant&) = default;
};

Json appGrantsJson(const std::vector<AppGrant>& grants);
// Sets out["apps"] unless `grants` is empty.
void putAppGrants(const std::vector<AppGrant>& grants, Json& out);

// Reads args["apps"]; absent is an empty list. Checks shapes: names unique and non-empty,
// 1 to 256 sockets each, every one an absolute path that fits a unix socket address.
common::Result<std::vector<AppGrant>> parseAppGrants(const Json& args);

}  // namespace scalws::ipc
