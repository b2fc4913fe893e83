#include "worker/handlers/redirect_handler.h"

#include "common/log.h"
#include "worker/http/error_response.h"
#include "worker/http/rewrite.h"
#include "worker/http/status_text.h"

namespace scalws::worker {
namespace {

// Location is a header line: keep it within what clients and proxies take.
constexpr size_t kMaxLocation = 8192;

}  // namespace

RedirectHandler::RedirectHandler(const common::config::RedirectAction& action) : action_(action) {
  std::string status =
      std::to_string(action.status) + " " + std::string(statusReason(action.status));
  body_ = "<html><head><title>" + status + "</title></head><body><h1>" + status +
          "</h1></body></html>\n";
}

void RedirectHandler::handle(Request& request, ResponseWriter& writer) noexcept {
  thread_local std::string location;
  location.clear();
  if (!action_.to.expand(templateValues(request), location, kMaxLocation)) {
    LOG_ERROR("request %llx: redirect: the Location for \"%s\" is longer than %zu bytes",
              static_cast<unsigned long long>(request.id), action_.to.text().c_str(), kMaxLocation);
    sendError(request, writer, 500);
    return;
  }
  const HeaderField headers[] = {{"Location", location},
                                 {"Content-Type", "text/html; charset=utf-8"}};
  writer.respond(action_.status, headers, body_, BodyLifetime::kStable);
}

}  // namespace scalws::worker
