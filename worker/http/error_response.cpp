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

  std::array<HeaderField, 8> fields;
  writer.sendHead(errorHead(status, "text/html; charset=utf-8", extra, page.size(), close, fields));
  writer.sendBody(page, BodyLifetime::kCopy);
  writer.finish();
}

ResponseHead errorHead(uint16_t status, std::string_view content_type,
                       std::span<const HeaderField> extra, uint64_t length, bool close,
                       std::array<HeaderField, 8>& fields) noexcept {
  size_t count = 0;
  fields[count++] = {"content-type", content_type};
  for (const HeaderField& h : extra) {
    if (count == fields.size()) break;
    fields[count++] = h;
  }
  ResponseHead head;
  head.status = status;
  head.headers = std::span<const HeaderField>(fields.data(), count);
  head.content_length = length;
  head.close_connection = close;
  return head;
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
