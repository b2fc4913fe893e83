#include "worker/handlers/respond_handler.h"

namespace scalws::worker {

RespondHandler::RespondHandler(const common::config::RespondAction& action) : action_(action) {
  headers_.reserve(action.headers.size());
  for (const auto& h : action.headers) headers_.push_back(HeaderField{h.name, h.value});
}

void RespondHandler::handle(Request& request, ResponseWriter& writer) noexcept {
  (void)request;
  writer.respond(action_.status, headers_, action_.body, BodyLifetime::kStable);
}

}  // namespace scalws::worker
