// The `respond` action: a fixed status, headers and body from the config. The body and
// headers live in the config snapshot the connection holds, so they go out by reference.
#pragma once

#include <vector>

#include "common/config/site_config.h"
#include "worker/http/handler.h"

namespace scalws::worker {

class RespondHandler final : public Handler {
 public:
  explicit RespondHandler(const common::config::RespondAction& action);
  void handle(Request& request, ResponseWriter& writer) noexcept override;
  std::string_view actionName() const noexcept override { return "respond"; }

 private:
  const common::config::RespondAction& action_;
  std::vector<HeaderField> headers_;
};

}  // namespace scalws::worker
