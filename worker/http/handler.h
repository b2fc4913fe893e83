// A route's action. One Handler per route, built with the config snapshot and shared by
// every loop of the process, so handle() must not touch mutable shared state; per-loop
// state lives in the WorkerLoop the request names.
//
// Fast handlers answer before handle() returns. Asynchronous ones keep the writer, register
// an InFlight for abort(), and resume from their own I/O callbacks on the same loop.
#pragma once

#include <string_view>

#include "worker/http/request.h"
#include "worker/http/response_writer.h"

namespace scalws::worker {

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void handle(Request& request, ResponseWriter& writer) noexcept = 0;
  // For the access log and metrics: "respond", "static", "php", "proxy", ...
  virtual std::string_view actionName() const noexcept = 0;
  // True when the handler reads the request body (registers a BodySink); others get the
  // body discarded and, with Expect: 100-continue, never solicit it.
  virtual bool consumesBody() const noexcept { return false; }
};

}  // namespace scalws::worker
