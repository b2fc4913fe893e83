// AppHandlers: the controller's answers to `scalwsctl app ...`, the app.* rows of
// ipc/ops.cpp. Each validates all it can before it changes anything; an app is stored only
// once every process of it accepts on its socket, so one that cannot run is never
// registered.
//
// Args and results (JSON objects; times are Unix ms):
//   app.list     {} -> {apps:[APP]}
//   app.show     {name} -> APP
//   app.add      {name, runtime:"node"|"python-wsgi"|"python-asgi", entry?, target?,
//                 processes, user, dir?, env?:[K=V], writable?:[DIR], connect?:[HOST:PORT],
//                 memory_bytes?} -> APP (app_spec.h)
//   app.remove   {name} -> {} (refused while assigned, and while a running instance's
//                 workers still use it — released but not reloaded yet; its processes are
//                 stopped)
//   app.restart  {name} -> APP once it accepts again
//   app.logs     {name, limit?} -> {path, lines:[...]} (the last `limit` lines, default 50)
//   app.assign   {name, instance, as?} -> APP: binds the app to the name `as` (default its
//                 own) that the instance's app routes use (app_binding.h); its socket
//                 directory gets that instance's group. A running instance takes it on
//                 `instance reload` (or restart), like `pool assign`.
//   app.release  {name} -> APP
// APP = {name, spec, instance, as, sockets:[PATH], upstream:[unix:PATH], state,
//        status:{state, processes:[{index, state, pid, restarts, last_exit, started_ms,
//        adopted, socket, rss_bytes, checked, memory}] (app_process.h), log_path,
//        socket_dir, cgroups (with --memory), sandbox:[lines]}|null, created_ms, updated_ms}
#pragma once

#include "controller/apps/app_runtime.h"
#include "controller/instances/instance_runtime.h"
#include "controller/server/handler_support.h"
#include "controller/state/state_store.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"

namespace scalws::controller {

class AppHandlers : private HandlerTypes {
 public:
  AppHandlers(state::StateStore& store, InstanceRuntime& instances, AppRuntime* apps)
      : store_(store), instances_(instances), apps_(apps) {}

  common::Status registerOn(ipc::Endpoint& endpoint);
  ipc::Json describe(const state::AppRecord& app);

 private:
  Reply list(const ipc::Json& args);
  Reply show(const ipc::Json& args);
  Reply logs(const ipc::Json& args);
  void add(In& in, Out out);
  void remove(In& in, Out out);
  void restart(In& in, Out out);
  Reply assign(const ipc::Json& args);
  Reply release(const ipc::Json& args);
  common::Result<state::AppRecord> namedApp(const ipc::Json& args);
  common::Status requireRuntime() const;
  // Ok when no running instance's workers still proxy to `app`'s sockets.
  common::Status checkUnused(const state::AppRecord& app);

  state::StateStore& store_;
  InstanceRuntime& instances_;
  AppRuntime* apps_;

  static const ipc::OpHandler<AppHandlers> kHandlers[];
};

}  // namespace scalws::controller
