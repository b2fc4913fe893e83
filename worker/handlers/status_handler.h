// The `status` action: the site's figures as JSON — totals since start, latency
// percentiles from the histogram, CPU and RSS — for standalone operators and monitoring.
// Restrict it with the route's policy.allow; it never shows hosts or paths.
#pragma once

#include "worker/http/handler.h"

namespace scalws::worker {

class StatusHandler final : public Handler {
 public:
  void handle(Request& request, ResponseWriter& writer) noexcept override;
  std::string_view actionName() const noexcept override { return "status"; }
};

}  // namespace scalws::worker
