#include "worker/http/response_writer.h"

namespace scalws::worker {

void ResponseWriter::respond(uint16_t status, std::span<const HeaderField> headers,
                             std::string_view body, BodyLifetime lifetime) noexcept {
  ResponseHead head;
  head.status = status;
  head.headers = headers;
  head.content_length = body.size();
  sendHead(head);
  if (!body.empty()) sendBody(body, lifetime);
  finish();
}

}  // namespace scalws::worker
