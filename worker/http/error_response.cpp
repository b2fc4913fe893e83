#include "worker/http/error_response.h"

#include <array>
#include <cstdio>

#include "worker/http/status_text.h"
#include "worker/response/response_rules.h"

namespace scalws::worker {

void sendError(Request& request, ResponseWriter& writer, uint16_t status,
               std::span<const HeaderField> extra, bool close) noexcept {
  if (status >= 400 && request.response_rules != nullptr) {
    const ErrorPages* pages = request.response_rules->errors();
    if (pages != nullptr && pages->send(request, writer, status, extra, close)) return;
  }
  char body[256];
  std::string_view reason = statusReason(status);
  int n = std::snprintf(body, sizeof(body),
                        "<html><head><title>%u %.*s</title></head><body><h1>%u %.*s</h1>"
                        "</body></html>\n",
                        status, static_cast<int>(reason.size()), reason.data(), status,
                        static_cast<int>(reason.size()), reason.data());
  std::string_view page(body, n > 0 ? static_cast<size_t>(n) : 0);

  std::array<HeaderField, 8> headers;
  size_t count = 0;
  headers[count++] = {"content-type", "text/html; charset=utf-8"};
  for (const HeaderField& h : extra) {
    if (count == headers.size()) break;
    headers[count++] = h;
  }
  ResponseHead head;
  head.status = status;
  head.headers = std::span<const HeaderField>(headers.data(), count);
  head.content_length = page.size();
  head.close_connection = close;
  writer.sendHead(head);
  writer.sendBody(page, BodyLifetime::kCopy);
  writer.finish();
}

void sendBackendFailure(Request& request, ResponseWriter& writer, uint16_t status,
                        bool head_sent) noexcept {
  if (head_sent) {
    writer.abortResponse();
    return;
  }
  if (status == 503) {
    const HeaderField retry[] = {{"Retry-After", "1"}};
    sendError(request, writer, status, retry);
    return;
  }
  sendError(request, writer, status);
}

}  // namespace scalws::worker
