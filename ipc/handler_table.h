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
// A row names one of two kinds of handler: one that answers at once returns its result
// (Result<Json>: the reply, or the error reply), one that answers later gets the request
// with the fds that arrived with it (its own from then on) and a Replier. The owner must
// outlive the endpoint's use of it (it owns the endpoint, or closes it first).
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
  using Later = void (Owner::*)(Incoming& request, Replier replier);
  using Now = common::Result<Json> (Owner::*)(const Json& args);

  constexpr OpHandler(std::string_view name, Later handler) : op(name), later(handler) {}
  constexpr OpHandler(std::string_view name, Now handler) : op(name), now(handler) {}

  std::string_view op;
  Later later = nullptr;
  Now now = nullptr;
};

// Registers every row of `table` on `endpoint`, calling into `owner`. Stops at the first
// row the op table refuses (kInvalidArgument naming it).
template <typename Owner>
common::Status registerHandlers(Endpoint& endpoint, Owner& owner,
                                std::span<const OpHandler<Owner>> table) {
  for (const OpHandler<Owner>& row : table) {
    Owner* self = &owner;
    SCALWS_RETURN_IF_ERROR(endpoint.registerHandler(
        row.op, [self, row](const Message& m, std::vector<common::UniqueFd> fds, Replier r) {
          if (row.now != nullptr) return r.answer((self->*row.now)(m.args));
          Incoming request{m, std::move(fds)};
          (self->*row.later)(request, std::move(r));
        }));
  }
  return common::okStatus();
}

}  // namespace scalws::ipc
