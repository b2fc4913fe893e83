// HandlerTable: the ops a process accepts, as a table of member functions (NGINX Unit's
// handler arrays). A process installs its handlers only by registering its table, so what
// it answers reads in one place; whether an op may travel peer -> local at all is still the
// op table's call (ops.h), and registering a row it forbids is an error.
//
//   constexpr ipc::OpHandler<Session> kHandlers[] = {
//       {ipc::op::kConfig, &Session::onConfig},
//       {ipc::op::kStop, &Session::onStop},
//   };
//   SCALWS_RETURN_IF_ERROR(ipc::registerHandlers(endpoint, *this, kHandlers));
//
// A handler gets the request with the fds that arrived with it (its own from then on) and
// a Replier; the owner must outlive the endpoint's use of it (it owns the endpoint, or
// closes it first).
#pragma once

#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "ipc/endpoint.h"

namespace scalws::ipc {

// One request as a handler sees it.
struct Incoming {
  const Message& message;
  std::vector<common::UniqueFd> fds;  // the descriptors that came with it, in order

  const Json& args() const { return message.args; }
};

template <typename Owner>
struct OpHandler {
  std::string_view op;
  void (Owner::*handle)(Incoming& request, Replier replier);
};

// Registers every row of `table` on `endpoint`, calling into `owner`. Stops at the first
// row the op table refuses (kInvalidArgument naming it).
template <typename Owner>
common::Status registerHandlers(Endpoint& endpoint, Owner& owner,
                                std::span<const OpHandler<Owner>> table) {
  for (const OpHandler<Owner>& row : table) {
    auto handle = row.handle;
    Owner* self = &owner;
    SCALWS_RETURN_IF_ERROR(endpoint.registerHandler(
        row.op, [self, handle](const Message& m, std::vector<common::UniqueFd> fds, Replier r) {
          Incoming request{m, std::move(fds)};
          (self->*handle)(request, std::move(r));
        }));
  }
  return common::okStatus();
}

}  // namespace scalws::ipc
