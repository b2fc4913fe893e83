// The `redirect` action: answers with the configured 3xx and a Location made from the
// route's template for this request ({host}, {uri}, {path}, {query}, $1..$9), with a small
// HTML body as nginx sends. The template is expanded into the request's arena.
#pragma once

#include <string>

#include "common/config/site_config.h"
#include "worker/http/handler.h"

namespace scalws::worker {

class RedirectHandler final : public Handler {
 public:
  explicit RedirectHandler(const common::config::RedirectAction& action);
  void handle(Request& request, ResponseWriter& writer) noexcept override;
  std::string_view actionName() const noexcept override { return "redirect"; }

 private:
  const common::config::RedirectAction& action_;
  std::string body_;
};

}  // namespace scalws::worker
