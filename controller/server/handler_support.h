// What the control handlers (ControlHandlers, PoolHandlers, AppHandlers) have in common:
// the types their ops take and return, the names their files use, and the steps each kind
// of record's ops repeat — the list of described records, the record args["name"] names,
// the arguments of an assignment, and the check that no running worker still uses a record
// about to go.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/state/records.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"
#include "ipc/message.h"

namespace scalws::controller {

// The shapes of an op handler (ipc/handler_table.h): a quick op returns its Reply, a slow
// one keeps the Replier and answers from a callback.
struct HandlerTypes {
  using In = ipc::Incoming;
  using Out = ipc::Replier;
  using Reply = common::Result<ipc::Json>;
};

// The names every handler file uses (`using namespace handler_names;` in a .cpp only).
namespace handler_names {
using common::Result;
using common::Status;
using common::StatusCode;
using ipc::Json;
}  // namespace handler_names

// [describe(item), ...]
template <typename T, typename Describe>
ipc::Json arrayOf(const std::vector<T>& items, Describe describe) {
  ipc::Json out = ipc::Json::array();
  for (const T& item : items) out.push_back(describe(item));
  return out;
}

// {key: [describe(record), ...]} of the stored records `all`, or the store's error.
template <typename T, typename Describe>
common::Result<ipc::Json> listReply(std::string_view key, common::Result<std::vector<T>> all,
                                    Describe describe) {
  if (!all.ok()) return all.status();
  return ipc::Json{{std::string(key), arrayOf(*all, describe)}};
}

// The record args["name"] names, as `get(name)` reads it from the store.
template <typename Get>
auto namedRecord(const ipc::Json& args, Get get) -> decltype(get(std::string())) {
  SCALWS_ASSIGN_OR_RETURN(std::string name, ipc::stringField(args, "name"));
  return get(name);
}

// The arguments of pool.assign and app.assign.
struct AssignArgs {
  std::string name;
  std::string instance;
  std::string as;  // "" when absent (the store then uses `name`)
};
// args {name, instance, as?}; `as`, when given, must be a valid `kind` name.
common::Result<AssignArgs> parseAssignArgs(const ipc::Json& args, std::string_view kind);

// Ok unless a running instance's workers still use the record that `what` names ("app
// 'x'"): `running(instance)` gives the grants its workers run with (nullopt when it runs
// none) and `uses(grant)` says whether a grant is that record. The refusal names the
// instance and what its workers call the record: removing it now would fail their
// requests until they reload.
template <typename Grant>
common::Status checkUnusedByWorkers(
    const std::string& what, const std::vector<state::InstanceRecord>& instances,
    const std::function<std::optional<std::vector<Grant>>(const std::string&)>& running,
    const std::function<bool(const Grant&)>& uses) {
  for (const state::InstanceRecord& instance : instances) {
    for (const Grant& grant : running(instance.name).value_or(std::vector<Grant>())) {
      if (!uses(grant)) continue;
      return common::Status(common::StatusCode::kFailedPrecondition,
                            what + " is still used by the running workers of instance '" +
                                instance.name + "' (as " + grant.name +
                                "); reload or stop that instance first");
    }
  }
  return common::Status();
}

}  // namespace scalws::controller
