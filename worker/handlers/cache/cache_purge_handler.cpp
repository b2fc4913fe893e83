#include "worker/handlers/cache/cache_purge_handler.h"

#include <cstdio>

#include "worker/handlers/cache/cache_key.h"
#include "worker/handlers/cache/hash64.h"
#include "worker/http/error_response.h"

namespace scalws::worker::cache {

void CachePurgeHandler::handle(Request& request, ResponseWriter& writer) noexcept {
  if (request.method_name != "PURGE") {
    const HeaderField allow[] = {{"Allow", "PURGE"}};
    sendError(request, writer, 405, allow);
    return;
  }
  MemoryStore* store = cache_->store();
  if (store == nullptr) {
    sendError(request, writer, 503);
    return;
  }
  std::string uri;
  appendRequestUri(request, uri);
  size_t removed = store->removeUri(hash64(uri), uri);
  if (DiskWorker* disk = cache_->disk()) {
    std::string key;
    appendPrimaryKey(config_.key, request, key);
    disk->remove(hash64(key));
  }
  char body[48];
  int n = std::snprintf(body, sizeof(body), "purged %zu\n", removed);
  const HeaderField headers[] = {{"Content-Type", "text/plain"}, {"Cache-Control", "no-store"}};
  writer.respond(200, headers, std::string_view(body, static_cast<size_t>(n)), BodyLifetime::kCopy);
}

}  // namespace scalws::worker::cache
